"""``compare_pairwise``: the judge asked which of two versions' answers is better, pair by pair.

The versions are read and paired as ``diff`` reads and pairs them
(``versions.load_version``, then ``resultsets.pair_versions``: by id, else by
question), or given as lists of samples. Each pair is asked in both orders
through the judge door (``step.ask_order``) and the figures come from
``summary.summarise``.
"""

from __future__ import annotations

from typing import Any, Callable

from localeval.errors import DataError, UsageError, printable
from localeval.metrics import Judging
from localeval.pairwise.checking import (
    CHECK_PAIRS,
    check_pairwise_judge,
    progress_bar,
    require_probabilities,
)
from localeval.pairwise.equivalence import DEFAULT_MARGIN, check_margin
from localeval.pairwise.judgement import PairJudgement, identical_pair, same_answers
from localeval.pairwise.step import OrderReply, ask_order
from localeval.pairwise.summary import PairwiseResult, summarise
from localeval.resultsets import ResultSet, describe_pairing, pair_versions
from localeval.types import Sample

__all__ = ["compare_pairwise", "as_version", "terminal_lines", "check_verdicts", "open_door",
           "judge_pair", "ask_pair", "probability_notes"]


def as_version(source: Any, data: Any = None, name: str = "") -> Any:
    """A ``versions.Version``: given, built from a list of samples, or read by ``load_version``."""
    from localeval.versions import Version, load_version

    if isinstance(source, Version):
        return source
    if isinstance(source, (list, tuple)) and all(isinstance(s, Sample) for s in source):
        rs = ResultSet({s.id: {} for s in source}, source=name or "<samples>",
                       questions={s.id: s.question for s in source if s.question is not None},
                       name=name)
        return Version(rs, {s.id: s for s in source})
    return load_version(source, data=data, name=name or None)


def compare_pairwise(base: Any, new: Any, *, judge: Any, base_data: Any = None,
                     new_data: Any = None, criterion: str | None = None,
                     verdicts: str | None = None, lang: str = "auto", seed: int = 0,
                     n_resamples: int = 9999, cache: Any = False,
                     judge_options: dict[str, Any] | None = None,
                     judge_check: bool | int = True, criterion_source: str | None = None,
                     on_pair: Callable[[int, int], None] | None = None,
                     progress: bool | None = False,
                     margin: float = DEFAULT_MARGIN) -> PairwiseResult:
    """Compare NEW with BASE by asking the judge which answer is better, in both orders.

    ``base``/``new``: what ``localeval diff`` reads (a run folder with its data
    set in ``base_data``/``new_data``, an export), a ``versions.Version``, or a
    list of ``Sample``. ``judge``: a judge object or spec (``--judge``);
    soft verdicts (the default) read P("A"/"B"/"tie") from the logits and
    average the two orders; left to the default (``verdicts=None``) a judge
    that gives no probabilities falls back to the hard rate, with a note,
    while ``verdicts="soft"`` asked for explicitly makes that a ModelError.
    ``cache``: as ``evaluate``'s (off by default here). ``judge_check``: run
    the known-answer pairwise check first (True: ``checking.CHECK_PAIRS``
    pairs, a number: that many, False: none). Two identical answers (white
    space aside, same contexts) are not judged (no call) and counted apart: the
    preference and its interval are over the judged pairs. ``margin``: the indifference
    margin (default 0.05): NEW is preferred only when the interval lies above
    0.5 + margin, BASE below 0.5 - margin, and no practical difference when it lies
    within (``equivalence``); a number from 0 to below 0.5, else a UsageError before any
    work. ``progress``: bars over the judge check and the pairs (None: in a terminal,
    else plain lines in a log).
    """
    margin = check_margin(margin)
    strict_soft = verdicts == "soft"
    verdicts = verdicts or "soft"
    check_verdicts(verdicts)
    vb, vn = as_version(base, base_data, "base"), as_version(new, new_data, "new")
    al = pair_versions(vb.results, vn.results)
    texts = [(vb.texts.get(a), vn.texts.get(b)) for a, b in al.pairs]
    usable = [(a, b) for a, b in texts if a is not None and b is not None
              and a.answer is not None and b.answer is not None]
    if not usable:
        raise DataError("pairwise comparison needs both versions' answers, and no pair has "
                        "them: pass the data set each run evaluated (--base-data / --new-data)"
                        + (f" ({vb.text_note})" if vb.text_note else ""))
    door = open_door(judge, cache=cache, judge_options=judge_options, lang=lang, seed=seed,
                     verdicts=verdicts)
    notes = [describe_pairing(al, "base", "new")]
    if len(usable) < len(texts):
        notes.append(f"{len(texts) - len(usable)} pairs have no answer text on one side: "
                     "left out")
    fitness = None if judge_check is False else check_pairwise_judge(
        door, pairs=CHECK_PAIRS if judge_check is True else int(judge_check),
        strict_soft=strict_soft, progress=progress)
    judged = []
    bar = progress_bar(door, len(usable), progress, "judging pairs", "pairs")
    try:
        for i, (b, n) in enumerate(usable):
            judged.append(ask_pair(door, b, n, criterion=criterion, strict_soft=strict_soft))
            if bar is not None:
                bar.update(door.usage)
            if on_pair is not None:
                on_pair(i + 1, len(usable))
    finally:
        if bar is not None:
            bar.close()
    notes += probability_notes([p for p in judged if not p.identical], verdicts)
    return summarise(judged, n_resamples=n_resamples, seed=seed, criterion=criterion,
                     notes=notes, judge_check=fitness, criterion_source=criterion_source,
                     margin=margin)


def check_verdicts(verdicts: str) -> None:
    """A UsageError for a verdict mode other than "soft" or "hard", before any work."""
    if verdicts not in ("soft", "hard"):
        raise UsageError(f"verdicts must be 'soft' or 'hard', not {verdicts!r}")


def open_door(judge: Any, *, cache: Any, judge_options: dict[str, Any] | None, lang: str,
              seed: int, verdicts: str) -> Judging:
    """The judge door every pairwise question goes through (``compare_pairwise`` and
    ``rank_versions``): the judge built from an object or spec, cached as asked."""
    from localeval.run import build_judge, open_cache

    loaded = build_judge(judge, open_cache(cache), dict(judge_options or {}))
    if loaded is None:
        raise UsageError("pairwise comparison needs a judge: pass --judge (a GGUF file, a "
                         "model name, 'demo' or an http(s):// URL)")
    return Judging(loaded, lang=lang, seed=seed, verdicts=verdicts)


def judge_pair(door: Judging, b: Sample, n: Sample, *, criterion: str | None) -> PairJudgement:
    """One pair asked in both orders (``b`` shown as A, then ``n`` as A): its judgement."""
    question = b.question if b.question is not None else n.question
    reference = b.reference if b.reference is not None else n.reference
    door.begin_sample()
    one = ask_order(door, question, reference, b, n, criterion=criterion)
    two = ask_order(door, question, reference, n, b, criterion=criterion)
    return PairJudgement(
        b.id, n.id, one.verdict, two.verdict, one.probs, two.probs,
        len(b.answer or ""), len(n.answer or ""), (one.reason, two.reason),
        "; ".join(e for e in (one.error, two.error) if e))


def ask_pair(door: Judging, b: Sample, n: Sample, *, criterion: str | None,
             strict_soft: bool) -> PairJudgement:
    """One pair as every pairwise comparison judges it (``compare_pairwise``,
    ``rank_versions``): identical answers are a tie without a call, any other pair is
    asked in both orders (``judge_pair``); ``strict_soft``: a reply without
    probabilities is a ModelError (``checking.require_probabilities``)."""
    if same_answers(b, n):
        return identical_pair(b, n)
    one = judge_pair(door, b, n, criterion=criterion)
    if strict_soft:
        for verdict, probs in ((one.first, one.first_probs), (one.second, one.second_probs)):
            require_probabilities(OrderReply(verdict, probs))
    return one


def probability_notes(judged: list[PairJudgement], verdicts: str) -> list[str]:
    """The note when soft verdicts were asked for and some calls gave no probabilities."""
    if verdicts == "soft" and any(p.first_probs is None for p in judged if p.first):
        return ["the judge returned no verdict probabilities for some calls (an HTTP "
                "server without logprobs?): hard verdicts are used"]
    return []


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def terminal_lines(r: PairwiseResult) -> list[str]:
    """The pairwise result as plain lines for the terminal, after the pointwise table."""
    c = r.counts
    lines = [] if r.judge_check is None else [r.judge_check.summary_line()]
    lines += [f"pairwise ({r.mode} verdicts, both orders): {c['win']} NEW better / "
             f"{c['loss']} BASE better / {c['tie']} tie / {c['inconsistent']} inconsistent"
             + (f" / {c['unjudged']} unjudged" if c["unjudged"] else "")
             + (f" / {c['identical']} identical (not judged)" if c.get("identical") else ""),
             r.sentence(),
             f"judge bias: verdict followed the position in {_pct(r.position_bias)} of pairs; "
             f"longer answer won {_pct(r.longer_wins[0])} of {r.longer_wins[1]} consistent "
             f"decisive pairs and {_pct(r.longer_wins_inconsistent[0])} of "
             f"{r.longer_wins_inconsistent[1]} decisive orders of inconsistent pairs"]
    lines += [f"  ⚠ {n}" for n in r.bias_notes()]
    base = r.preferred_base()
    if base:
        shown = ", ".join(printable(p.base_id) for p in base[:10])
        lines.append(f"BASE preferred on {len(base)} pairs: {shown}"
                     + (" ..." if len(base) > 10 else ""))
    lines += [f"· {printable(n)}" for n in r.notes]
    return lines

