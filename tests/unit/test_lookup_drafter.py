"""The prompt-lookup drafter and the automatic on/off choice (no model needed)."""

from __future__ import annotations

import pytest

from localeval.judge.llama.lookup import DraftGovernor, NgramDrafter


def test_drafts_what_followed_the_last_ngram():
    d = NgramDrafter([1, 2, 3, 4, 5, 6, 9, 2, 3], ngram_max=3, draft_max=3)
    assert d.draft() == [4, 5, 6]  # "2 3" occurred before, followed by 4 5 6


def test_longest_ngram_wins_and_most_recent_occurrence():
    # "3" alone last continued with 7, but "2 3" continued with 4: the longer match wins.
    d = NgramDrafter([2, 3, 4, 8, 3, 7, 2, 3], ngram_max=2, draft_max=2)
    assert d.draft() == [4, 8]
    # The most recent occurrence of the same n-gram is the one used.
    d = NgramDrafter([5, 1, 5, 2, 5], ngram_max=1, draft_max=1)
    assert d.draft() == [2]


def test_extend_limit_and_no_match():
    d = NgramDrafter([1, 2, 3], ngram_max=2, ngram_min=1, draft_max=8)
    assert d.draft() == []  # 3 never occurred before
    d.extend([1])
    assert d.draft() == [2, 3, 1]  # continuation runs into the newest token
    assert d.draft(limit=1) == [2]
    assert d.draft(limit=0) == []
    with pytest.raises(ValueError):
        NgramDrafter([], ngram_max=1, ngram_min=2)


def test_governor_modes_and_the_measured_choice():
    assert not DraftGovernor("none").enabled
    assert DraftGovernor("lookup").enabled and not DraftGovernor("lookup").plain_step()
    with pytest.raises(ValueError):
        DraftGovernor("sometimes")
    slow = DraftGovernor("auto", probe_steps=8, probe_every=2)
    assert slow.enabled and slow.decided is None
    for i in range(8):  # drafted steps cost 3x a plain one and give 1.5 tokens: off
        plain = slow.plain_step()
        slow.record(not plain, 1 if plain else 2 - i % 2, 1.0 if plain else 3.0)
    assert slow.decided is False and not slow.enabled
    fast = DraftGovernor("auto", probe_steps=8, probe_every=2)
    for _ in range(8):  # drafted steps give 4 tokens for 1.2x the time: on
        plain = fast.plain_step()
        fast.record(not plain, 1 if plain else 4, 1.0 if plain else 1.2)
    assert fast.decided is True and fast.enabled
