"""The filters of generated test-set rows, which do not take the generator's word.

``filter_candidates`` runs four filters, cheap first, each on the rows the ones
before it kept (docs/test-sets.md, "Filters"):

1. **degenerate output** (``filters_text.degenerate``): an empty question or
   reference (or punctuation only), a question or reference that loops (one run of
   words repeated until it fills the text), a reference that is the question, a question that copies its chunk,
   a copy of the prompt's few-shot example, a question in another language than its
   chunk;
2. **near-duplicate questions** (``filters_text.near_duplicates``): the first in id
   order is kept, the others name the one they repeat;
3. **round-trip retrieval** (``filters_rank.round_trip``): one of the question's
   source chunks must rank in the top ``k`` of all chunks for it (an embedder, else
   BM25);
4. **the reference supported by its contexts**: ragas's faithfulness of the
   reference (as the answer) to the source chunks (as the contexts), through the
   judge door; skipped, and said, without a judge.

A dropped row keeps its reason (``Candidate.dropped``) and what was measured
(``Candidate.checks``); ``FilterResult.health`` says in plain sentences what the
drops, taken together, say about the generator.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from localeval.corpus import Chunk
from localeval.generate.candidates import Candidate
from localeval.generate.filters_health import generator_health
from localeval.generate.filters_rank import NOT_RETRIEVED, UNKNOWN_CHUNK, embed_prefixes, round_trip
from localeval.generate.filters_text import (
    COPIES_CHUNK,
    COPIES_EXAMPLE,
    EMPTY,
    NEAR_COSINE,
    NEAR_DUPLICATE,
    NEAR_JACCARD,
    REFERENCE_IS_QUESTION,
    REPETITIVE,
    WRONG_LANGUAGE,
    degenerate,
    near_duplicates,
)
from localeval.lang import detect_lang
from localeval.types import Sample

__all__ = ["FilterResult", "FilterStage", "filter_candidates", "STAGES", "REASONS",
           "MIN_SUPPORT", "UNSUPPORTED", "SUPPORT_UNSCORED"]

#: The filters, in the order they run.
STAGES = ("degenerate", "near_duplicates", "round_trip", "support")
#: A reference is kept when at least this share of its statements is supported.
MIN_SUPPORT = 0.8
UNSUPPORTED = "unsupported"
SUPPORT_UNSCORED = "support_unscored"
#: Every reason a filter drops a row for, in the order the filters run.
REASONS = (EMPTY, REPETITIVE, REFERENCE_IS_QUESTION, COPIES_CHUNK, COPIES_EXAMPLE, WRONG_LANGUAGE,
           NEAR_DUPLICATE, UNKNOWN_CHUNK, NOT_RETRIEVED, UNSUPPORTED, SUPPORT_UNSCORED)


@dataclass(frozen=True)
class FilterStage:
    """One filter's count: rows it checked and dropped, or why it did not run."""

    name: str
    checked: int
    dropped: int
    #: how it ran ("bm25", "embedding (all-MiniLM-L6-v2)") or why it was skipped
    note: str = ""
    skipped: bool = False
    #: wall-clock time it took
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "checked": self.checked, "dropped": self.dropped,
                "note": self.note, "skipped": self.skipped, "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class FilterResult:
    """Kept and dropped rows (each in input order), counts, and the generator's health."""

    kept: tuple[Candidate, ...]
    dropped: tuple[Candidate, ...]
    #: dropped rows per reason, in the order the filters run
    counts: dict[str, int]
    stages: tuple[FilterStage, ...]
    #: signs of a weak generator, one plain sentence each (empty when none)
    health: tuple[str, ...] = ()
    #: the figures behind ``health``
    figures: dict[str, Any] = field(default_factory=dict)

    def stage(self, name: str) -> FilterStage:
        return next(s for s in self.stages if s.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {"kept": len(self.kept), "dropped": len(self.dropped), "counts": dict(self.counts),
                "stages": [s.to_dict() for s in self.stages], "health": list(self.health),
                "figures": dict(self.figures)}


def _expected_langs(c: Candidate, by_id: Mapping[str, Chunk], lang: str | None) -> set[str]:
    if lang:
        return {lang}
    langs = {by_id[cid].lang for cid in c.chunk_ids if cid in by_id}
    langs |= {detect_lang(t) for cid, t in zip(c.chunk_ids, c.contexts) if cid not in by_id}
    return langs or {c.lang}


def _support(cands: Sequence[Candidate], judging: Any, min_support: float,
             on_stage: Callable[[str, int], Callable[[], None]] | None) -> list[Candidate]:
    from localeval.metrics import get_metric, score_one

    metric = get_metric("faithfulness")()
    tick = on_stage("support", len(cands)) if on_stage is not None else (lambda: None)

    def one(c: Candidate) -> Candidate:
        try:
            return _supported(c)
        finally:
            tick()

    def _supported(c: Candidate) -> Candidate:
        door = judging.for_sample()
        sample = Sample(id=c.id, question=c.question, answer=c.reference,
                        contexts=list(c.contexts))
        score = score_one(metric, sample, door)
        if score.value is None:
            return c.drop(SUPPORT_UNSCORED, support=None, support_reason=score.reason)
        verdicts = score.details.get("verdicts") or []
        statements = score.details.get("statements") or []
        # each statement with its verdict, kept and dropped rows alike, so testset.html
        # can show which part of a reference its chunks do not back (a kept row may
        # still hold one unsupported statement under MIN_SUPPORT)
        marked = [{"statement": s, "supported": not (isinstance(v, Mapping)
                                                      and float(v.get("verdict", 1) or 0) < 0.5)}
                  for s, v in zip(statements, verdicts)]
        checks: dict[str, Any] = {"support": round(float(score.value), 4), "statements": marked}
        if score.value >= min_support:
            return c.measured(**checks)
        checks["unsupported_statements"] = [m["statement"] for m in marked if not m["supported"]]
        return c.drop(UNSUPPORTED, **checks)

    return list(judging.map(one, list(cands)))


def _run(name: str, rows: list[Candidate], fn: Any, note: str = "") -> tuple[list[Candidate],
                                                                             FilterStage]:
    start = time.perf_counter()
    live = [i for i, r in enumerate(rows) if r.dropped is None]
    done = fn([rows[i] for i in live])
    if isinstance(done, tuple):
        done, note = done
    out = list(rows)
    for i, r in zip(live, done):
        out[i] = r
    dropped = sum(1 for i in live if out[i].dropped is not None)
    return out, FilterStage(name, len(live), dropped, note,
                            seconds=time.perf_counter() - start)


def filter_candidates(candidates: Sequence[Candidate], chunks: Sequence[Chunk], *,
                      embedder: Any = None, judging: Any = None, k: int = 5,
                      lang: str | None = None,
                      examples: Sequence[str] | Mapping[str, Sequence[str]] = (),
                      min_support: float = MIN_SUPPORT, near_jaccard: float = NEAR_JACCARD,
                      near_cosine: float = NEAR_COSINE, lexical: bool = False,
                      on_stage: Callable[[str, int], Callable[[], None]] | None = None,
                      ) -> FilterResult:
    """Filter generated rows (see the module docstring); nothing is taken on trust.

    ``chunks`` are all the corpus's chunks (the round-trip ranks among them all);
    ``embedder`` a ``localeval.embed`` embedder (near-duplicates by cosine too, and
    the round-trip by cosine; ``lexical=True`` ranks by BM25 all the same);
    ``judging`` a ``metrics.Judging`` door for the support filter; ``lang`` the
    language the questions should be in (default: their chunks'); ``examples`` the
    generator prompt's few-shot strings (questions, references), or a mapping from
    a synthesizer name or a language to them. Rows dropped before (``dropped`` set)
    are passed through as dropped and not checked again. ``on_stage(name, n)``
    is told when a judged stage starts on ``n`` rows and returns what to call as
    each row is done (a progress bar's tick).
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    by_id = {c.id: c for c in chunks}
    rows = list(candidates)
    stages = []
    rows, st = _run("degenerate", rows, lambda cs: [
        degenerate(c, expected_langs=_expected_langs(c, by_id, lang), examples=examples)
        for c in cs])
    stages.append(st)
    query_prefix = embed_prefixes(embedder)[0] if embedder is not None else ""
    rows, st = _run("near_duplicates", rows, lambda cs: near_duplicates(
        cs, embedder=embedder, jaccard=near_jaccard, cosine=near_cosine,
        query_prefix=query_prefix),
        note="character 3-grams" + (" and embedding cosine" if embedder is not None else ""))
    stages.append(st)
    ranker = None if lexical else embedder
    rows, st = _run("round_trip", rows, lambda cs: round_trip(cs, chunks, embedder=ranker, k=k))
    stages.append(st)
    if judging is not None and getattr(judging, "judge", None) is not None:
        rows, st = _run("support", rows, lambda cs: _support(cs, judging, min_support, on_stage),
                        note=f"faithfulness of the reference >= {min_support:g}")
    else:
        st = FilterStage("support", 0, 0, "skipped: no judge given, references not checked",
                         skipped=True)
    stages.append(st)
    kept = tuple(r for r in rows if r.dropped is None)
    dropped = tuple(r for r in rows if r.dropped is not None)
    tally = Counter(r.dropped for r in dropped if r.dropped is not None)
    order = {r: i for i, r in enumerate(REASONS)}
    counts = {r: tally[r] for r in sorted(tally, key=lambda r: (order.get(r, len(order)), r))}
    figures, health = generator_health(rows)
    return FilterResult(kept, dropped, counts, tuple(stages), tuple(health), figures)
