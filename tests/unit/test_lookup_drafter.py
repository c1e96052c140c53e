"""The prompt-lookup drafter, the verification walk, the sampling rule and the on/off choice
(no model needed)."""

from __future__ import annotations

import numpy as np
import pytest
from lookup_util import accept_draft
from scipy.stats import chisquare

from localeval.judge.llama.governor import DraftGovernor, DraftStats
from localeval.judge.llama.ngram import NgramDrafter
from localeval.judge.llama.output_memory import OutputMemory
from localeval.judge.llama.verify import verify_drafts


def test_drafts_what_followed_the_last_ngram():
    d = NgramDrafter([1, 2, 3, 4, 5, 6, 9, 2, 3], ngram_max=3, draft_max=3, by_match={})
    assert d.draft() == [4, 5, 6]  # "2 3" occurred before, followed by 4 5 6


def test_longest_ngram_wins_and_most_recent_occurrence():
    # "3" alone last continued with 7, but "2 3" continued with 4: the longer match wins.
    d = NgramDrafter([2, 3, 4, 8, 3, 7, 2, 3], ngram_max=2, draft_max=2, by_match={})
    assert d.draft() == [4, 8]
    # The most recent occurrence of the same n-gram is the one used.
    d = NgramDrafter([5, 1, 5, 2, 5], ngram_max=1, draft_max=1, by_match={})
    assert d.draft() == [2]


def test_ngram_min_stops_short_matches():
    d = NgramDrafter([7, 1, 9, 7], ngram_max=3, ngram_min=2, draft_max=4, by_match={})
    assert d.draft() == []  # only the 1-gram "7" recurs
    assert NgramDrafter([7, 1, 9, 7], ngram_max=3, ngram_min=1, draft_max=4, by_match={}).draft() == [1, 9, 7]


def test_extend_limit_and_no_match():
    d = NgramDrafter([1, 2, 3], ngram_max=2, ngram_min=1, draft_max=8, by_match={})
    assert d.draft() == []  # 3 never occurred before
    d.extend([1])
    assert d.draft() == [2, 3, 1]  # continuation runs into the newest token
    assert d.draft(limit=1) == [2]
    assert d.draft(limit=0) == []
    assert NgramDrafter([]).draft() == []
    assert NgramDrafter([4], by_match={}).draft() == []  # nothing before the last token
    with pytest.raises(ValueError):
        NgramDrafter([], ngram_max=1, ngram_min=2, by_match={})
    with pytest.raises(ValueError):
        NgramDrafter([], draft_max=-1, by_match={})


def test_prompt_then_output_history_drafts_across_the_boundary():
    prompt = [10, 11, 12, 13, 14, 15]
    d = NgramDrafter(prompt, ngram_max=3, draft_max=4, by_match={})
    d.extend([99, 11, 12])  # the output starts quoting the prompt
    assert d.draft() == [13, 14, 15, 99]


def test_guesses_are_capped_by_the_length_of_the_match():
    # History "1 2 3 4 | 5 6 7 8 9 10 11 12 | 1 2 3 4": the 4-gram recurs, 8 tokens followed it.
    h = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4]
    assert NgramDrafter(h, ngram_max=4, by_match={4: 6, 3: 4}).draft() == [5, 6, 7, 8, 9, 10]
    assert NgramDrafter(h, ngram_max=3, by_match={4: 6, 3: 4}).draft() == [5, 6, 7, 8]
    assert NgramDrafter(h, ngram_max=4, by_match={}).draft() == [5, 6, 7, 8, 9, 10, 11, 12, 1, 2,
                                                                   3, 4]
    assert NgramDrafter(h, ngram_max=1).draft() == [5]  # the default caps a 1-token match at 1


def _walk(guesses, model):
    """verify_drafts against a fixed sequence of picks; returns (kept, next, rows asked)."""
    asked = []

    def pick(row, guess):
        asked.append((row, guess))
        return model[row]

    return (*verify_drafts(guesses, pick), asked)


def test_verify_keeps_the_agreeing_prefix_and_returns_the_first_difference():
    assert _walk([5, 6, 7], [5, 6, 8, 0])[:2] == (2, 8)
    kept, nxt, asked = _walk([5, 6, 7], [5, 6, 7, 9])
    assert (kept, nxt) == (3, 9)  # all kept: the pick after the last guess comes free
    assert asked == [(0, 5), (1, 6), (2, 7), (3, None)]
    assert _walk([5], [4, 0])[:2] == (0, 4)
    assert _walk([], [4])[:2] == (0, 4)
    assert _walk([5, 6], [5, None, 0])[:2] == (1, None)  # the generation ended at row 1


def test_draft_stats_add():
    s = DraftStats(1, 2, 3)
    s.add(DraftStats(10, 20, 30))
    assert s == DraftStats(11, 22, 33)


# --- the speculative-sampling rule -------------------------------------------------------

P = np.array([0.05, 0.30, 0.0, 0.15, 0.40, 0.10])  # token 2 is forbidden (grammar)
DRAWS = 40_000


def _wrong_rule(p, draft, rng):
    """A plausible mistake: on rejection, draw from p without removing the draft."""
    w = p / p.sum()
    if rng.random() < w[draft]:
        return draft, True
    return int(rng.choice(len(w), p=w)), False


@pytest.mark.parametrize("draft", [1, 4, 5, 2])
def test_accept_draft_leaves_the_distribution_unchanged(draft):
    rng = np.random.default_rng(1234)
    counts = np.bincount([accept_draft(P * 7.0, draft, rng)[0] for _ in range(DRAWS)],
                         minlength=len(P))
    assert counts[2] == 0  # a forbidden token is never produced, even when drafted
    keep = P > 0
    assert chisquare(counts[keep], P[keep] / P[keep].sum() * DRAWS).pvalue > 1e-3
    if draft != 2:
        # The same check would catch a rule that does not remove the draft on rejection.
        rng = np.random.default_rng(1234)
        wrong = np.bincount([_wrong_rule(P, draft, rng)[0] for _ in range(DRAWS)],
                            minlength=len(P))
        assert chisquare(wrong[keep], P[keep] / P[keep].sum() * DRAWS).pvalue < 1e-6


def test_acceptance_rate_is_p_of_the_draft():
    rng = np.random.default_rng(7)
    kept = sum(accept_draft(P, 4, rng)[1] for _ in range(DRAWS))
    assert abs(kept / DRAWS - 0.40) < 0.01


def test_accept_draft_edges():
    rng = np.random.default_rng(0)
    assert accept_draft(np.array([0.0, 1.0, 0.0]), 1, rng) == (1, True)
    assert accept_draft(np.array([0.0, 1.0, 0.0]), 0, rng) == (1, False)
    with pytest.raises(ValueError):
        accept_draft(np.zeros(3), 0, rng)


def test_a_drafted_sequence_has_the_target_joint_distribution():
    """Two positions, a draft of two tokens verified with ``verify_drafts``: the joint
    law of the first two output tokens is the target's (chi-square over 16 cells)."""
    p1 = np.array([0.1, 0.5, 0.3, 0.1])
    p2 = np.array([[0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25],
                   [0.1, 0.2, 0.3, 0.4], [0.0, 0.5, 0.5, 0.0]])
    draft = [1, 3]
    rng = np.random.default_rng(99)

    def run(rule):
        out = []

        def pick(row, guess):
            dist = p1 if row == 0 else p2[out[-1]]
            tok = rule(dist, guess, rng)[0] if guess is not None else int(
                rng.choice(4, p=dist))
            out.append(tok)
            return tok

        verify_drafts(draft, pick)
        if len(out) == 1:  # first guess refused: the second token from the plain loop
            out.append(int(rng.choice(4, p=p2[out[0]])))
        return out[0] * 4 + out[1]

    target = (p1[:, None] * p2).ravel()
    keep = target > 0
    counts = np.bincount([run(accept_draft) for _ in range(DRAWS)], minlength=16)
    assert chisquare(counts[keep], target[keep] * DRAWS).pvalue > 1e-3
    wrong = np.bincount([run(_wrong_rule) for _ in range(DRAWS)], minlength=16)
    assert chisquare(wrong[keep], target[keep] * DRAWS).pvalue < 1e-6


# --- the automatic choice ------------------------------------------------------------------

def test_governor_modes_and_the_measured_choice():
    none = DraftGovernor("none")
    assert not none.enabled and none.step_limit() == 0 and none.memory is None
    assert DraftGovernor("lookup").enabled and DraftGovernor("lookup").step_limit() is None
    with pytest.raises(ValueError):
        DraftGovernor("sometimes")
    slow = DraftGovernor("auto", probe_steps=8, probe_every=2)
    assert slow.enabled and slow.decided is None
    for i in range(8):  # many guesses cost 3x a one-guess step and give 1.5 tokens: off
        many = slow.step_limit() is None
        slow.record(many, 2 - i % 2 if many else 1, 3.0 if many else 1.0)
    # Turned off, a step still carries the guess that rides free in the pad row.
    assert slow.decided is False and slow.enabled and slow.step_limit() == 1
    fast = DraftGovernor("auto", probe_steps=8, probe_every=2)
    limits = []
    for _ in range(8):  # many guesses give 4 tokens for 1.2x the time: on
        limits.append(fast.step_limit())
        fast.record(limits[-1] is None, 4 if limits[-1] is None else 1,
                    1.2 if limits[-1] is None else 1.0)
    assert limits.count(1) == 4 and limits.count(None) == 4  # probing alternates
    assert fast.decided is True and fast.step_limit() is None
    assert fast.to_dict()["drafting"] is True


# --- the judge's memory of its outputs ------------------------------------------------------

def test_output_memory_guesses_what_followed_in_earlier_outputs():
    mem = OutputMemory()
    assert mem.guess([1, 2, 3], 4) == []
    mem.remember([10, 11, 12, 13, 14])
    mem.remember([20, 11, 12, 30])
    # The longest match wins (3-gram 10 11 12 -> 13), then the most recent shorter one.
    assert mem.guess([5, 10, 11, 12], 2) == [13, 14]
    assert mem.guess([7, 11, 12], 3) == [30]
    assert mem.guess([99], 3) == []
    assert mem.guess([10, 11, 12], 0) == []


def test_output_memory_stays_bounded_and_keeps_the_newest():
    mem = OutputMemory(keep=100)
    for i in range(60):
        mem.remember([1000 + i, 1, 2, 3, 4])
    assert len(mem) <= 100
    assert mem.guess([4, 1059], 2) == [1, 2]  # newest kept
    assert mem.guess([1000], 2) == []  # oldest dropped


# --- prompts end in a decode of two rows or more ---------------------------------------------

def test_prompt_suffix_is_never_one_row():
    from localeval.judge.llama.decode_plan import prompt_chunks, reusable

    assert reusable(100, 100) == 98 and reusable(40, 100) == 40 and reusable(0, 1) == 0
    for n in range(1, 1200):
        for n_batch in (3, 8, 512):  # (n_batch 2 cannot split 3 tokens without a one-row decode)
            sizes = prompt_chunks(n, n_batch)
            assert sum(sizes) == n and max(sizes) <= n_batch
            assert n == 1 or min(sizes) >= 2, (n, n_batch, sizes)
    assert prompt_chunks(513, 512) == [511, 2] and prompt_chunks(1024, 512) == [512, 512]
