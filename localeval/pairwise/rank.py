"""``rank_versions``: several versions' answers judged two by two, in both orders, and ranked.

The versions are read as ``compare_pairwise`` reads them (``compare.as_version``) and
paired with the first one as ``diff`` pairs two versions (``resultsets.pair_versions``:
by id, else by question); the questions common to all of them are kept. Every two
versions' answers to a question are asked in both orders through the judge door
(``compare.judge_pair``, the one loop body ``compare_pairwise`` uses). Each pair of
versions gets ``summary.summarise``' figures (counts, position and length bias), and
``ranking.bradley_terry`` fits the strengths, bootstraps the questions and ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, Callable, Sequence

from localeval.errors import DataError, LocalevalError, UsageError, printable
from localeval.pairwise.checking import CHECK_PAIRS, check_pairwise_judge, progress_bar
from localeval.pairwise.compare import (
    as_version,
    ask_pair,
    check_verdicts,
    open_door,
    probability_notes,
)
from localeval.pairwise.equivalence import DEFAULT_MARGIN, check_margin
from localeval.pairwise.judgement import UNJUDGED, PairJudgement
from localeval.pairwise.ranking import Ranking, bradley_terry, win_table
from localeval.pairwise.summary import HIGH_POSITION_BIAS, PairwiseResult, summarise
from localeval.results import JudgeFitness
from localeval.resultsets import describe_pairing, pair_versions
from localeval.types import Sample

__all__ = ["RankResult", "rank_versions", "version_names", "version_fitness", "rank_lines"]


@dataclass
class RankResult:
    """Several versions ranked by pairwise judgement (``rank_versions``' answer)."""

    names: list[str]
    ranking: Ranking
    #: (i, j) -> the comparison of version j (as NEW) with version i (as BASE), i < j
    pairs: dict[tuple[int, int], PairwiseResult]
    #: "soft" when every pair the judge was asked has probabilities in both orders, else "hard"
    mode: str
    notes: list[str] = field(default_factory=list)
    #: the criterion's text, and where it came from ("file.toml [name]") when not given as text
    criterion: str | None = None
    criterion_source: str | None = None
    #: the pairwise judge check (``judge_check.PairwiseCheck``, as ``compare_pairwise``
    #: runs it), None when it did not run
    judge_check: Any = None
    #: each version's own judge fitness, by name, where its run recorded a judge check
    #: (``version_fitness``); a failed one is marked beside the version's numbers
    version_fitness: dict[str, JudgeFitness] = field(default_factory=dict)

    def marker(self, name: str) -> str | None:
        """"judge unfit" beside a version whose run's judge failed its check, else None."""
        f = self.version_fitness.get(name)
        return None if f is None else f.marker

    def sentence(self) -> str:
        """The ranking in one line, with the judge check's caveat when it did not say fit."""
        check = self.judge_check
        caveat = ("" if check is None or check.fit else
                  f" (not evidence: the pairwise judge check says {check.verdict})")
        return self.ranking.sentence() + caveat

    @property
    def position_bias(self) -> float | None:
        """The share of judged pairs, over all versions, whose verdict followed the position."""
        judged = [p for r in self.pairs.values() for p in r.pairs if p.outcome != UNJUDGED]
        return sum(p.follows_position for p in judged) / len(judged) if judged else None

    def to_dict(self) -> dict[str, Any]:
        ranking = self.ranking.to_dict()
        for v in ranking["versions"]:
            v["judge_caveat"] = self.marker(v["name"])
        return {
            "versions": self.names, "mode": self.mode, "criterion": self.criterion,
            **({"criterion_source": self.criterion_source} if self.criterion_source else {}),
            "judge_check": None if self.judge_check is None else self.judge_check.to_dict(),
            "version_fitness": {n: f.to_dict() for n, f in self.version_fitness.items()},
            "ranking": ranking, "sentence": self.sentence(),
            "judge_bias": {"position_bias": self.position_bias},
            "pairs": [{"base": self.names[i], "new": self.names[j], **r.to_dict()}
                      for (i, j), r in self.pairs.items()],
            "notes": self.notes}


def version_names(sources: Sequence[Any], names: Sequence[str] | None = None,
                  loaded: Sequence[Any] | None = None) -> list[str]:
    """One name per version: given, else the run's title for a localeval run (``loaded``:
    the versions as read; the run's ``--name``, else its folder after resolving links,
    ``results.run_title``), else the folder or file it was read from (``runs/v2`` and
    ``runs/v2/results.jsonl`` are both "v2"; an export keeps its file's name), else v1,
    v2, ...; a repeated derived name gets ``#2``, a repeated given one is a UsageError."""
    if names is not None:
        out = [str(n) for n in names]
        if len(out) != len(sources):
            raise UsageError(f"{len(out)} names for {len(sources)} versions: give one name "
                             "per version")
        twice = sorted({n for n in out if out.count(n) > 1})
        if twice or any(not n.strip() for n in out):
            raise UsageError(f"every version needs its own non-empty name; repeated: "
                             f"{', '.join(map(repr, twice)) or 'an empty name'}")
        return out
    out = []
    for k, src in enumerate(sources):
        name = f"v{k + 1}"
        results: Any = getattr(loaded[k], "results", None) if loaded is not None else None
        if isinstance(src, (str, Path)):
            p = Path(src)
            if getattr(results, "format", None) == "localeval" and results.name:
                name = str(results.name)  # resultsets titled it (results.run_title)
            else:
                name = p.parent.name if p.name == "results.jsonl" and p.parent.name else p.stem
        elif getattr(getattr(src, "results", None), "name", None):
            name = str(src.results.name)  # a versions.Version
        name, stem, n = name or f"v{k + 1}", name or f"v{k + 1}", 2
        while name in out:
            name, n = f"{stem}#{n}", n + 1
        out.append(name)
    return out


def version_fitness(versions: Sequence[Any], names: Sequence[str]) -> dict[str, JudgeFitness]:
    """Each version's judge fitness as its run recorded it (``ResultSet.fitness``), by name:
    the judge that scored the version's run, not the pairwise judge. Versions without a
    recorded judge check (exports, answers alone) are left out."""
    out = {}
    for v, name in zip(versions, names):
        results = getattr(v, "results", None)
        fitness = getattr(results, "fitness", None)
        if isinstance(fitness, JudgeFitness) and fitness.verdict is not None:
            out[name] = fitness
    return out


def _read(source: Any, data: Any, name: str) -> Any:
    """A version as ``compare_pairwise`` reads it; else, for a file of answers without
    scores (what ``localeval answer`` writes), a version of its samples: a ranking needs
    the answers, not scores. A file that neither reads keeps the first message."""
    try:
        return as_version(source, data, name)
    except DataError as first:
        if data is not None or not isinstance(source, (str, Path)) or not Path(source).is_file():
            raise
        from localeval.dataset import load_dataset

        try:
            samples = list(load_dataset(source))
        except LocalevalError:
            raise first from None
        return as_version(samples, None, name)


def _common(versions: list[Any], names: list[str]) -> tuple[list[list[Sample | None]], list[str]]:
    """Per question common to every version (in the first version's order), each version's
    sample; and the notes on how they were paired."""
    first = versions[0]
    maps, notes = [], []
    for v, name in zip(versions[1:], names[1:]):
        al = pair_versions(first.results, v.results)
        maps.append(dict(al.pairs))
        notes.append(f"{names[0]} and {name}: {describe_pairing(al, names[0], name)}")
    ids = [sid for sid in first.results.scores if all(sid in m for m in maps)]
    if not ids:
        raise DataError(f"no question is common to all {len(versions)} versions "
                        f"({', '.join(names)}): each pairs with {names[0]}, but no question "
                        "of it occurs in all the others")
    rows = [[first.texts.get(sid)] + [v.texts.get(m[sid]) for v, m in zip(versions[1:], maps)]
            for sid in ids]
    return rows, notes


def rank_versions(versions: Sequence[Any], *, judge: Any, data: Sequence[Any] | None = None,
                  names: Sequence[str] | None = None, criterion: str | None = None,
                  verdicts: str | None = None, lang: str = "auto", seed: int = 0,
                  n_resamples: int = 9999, cache: Any = False,
                  judge_options: dict[str, Any] | None = None,
                  judge_check: bool | int = True, criterion_source: str | None = None,
                  on_pair: Callable[[int, int], None] | None = None,
                  progress: bool | None = False,
                  margin: float = DEFAULT_MARGIN) -> RankResult:
    """Rank three or more versions (two work too) by asking the judge which answer is
    better, every two versions, each question, both orders; Bradley-Terry strengths with
    bootstrap intervals over questions, and which neighbours cannot be told apart.

    ``versions``: what ``compare_pairwise`` takes (run folders, exports, lists of
    ``Sample``, ``versions.Version``); ``data``: the data set each one evaluated (None,
    or one entry per version, None where not needed); ``names``: one per version
    (default: from the paths). The rest as for ``compare_pairwise`` (soft verdicts by
    default, hard with a note for a judge without probabilities; ``verdicts="soft"``
    makes that a ModelError; the known-answer pairwise judge check first; ``progress``
    bars over it and the pairs). ``margin``: the preference margin (default 0.05) of
    every two versions' preference and, in strength units, of the ranking: a version is
    ahead of its neighbour only when the interval of their strength difference lies
    above log((0.5 + margin) / (0.5 - margin)); otherwise the order between them is not
    shown (``ranking``).
    """
    margin = check_margin(margin)
    strict_soft = verdicts == "soft"
    verdicts = verdicts or "soft"
    check_verdicts(verdicts)
    sources = list(versions)
    if len(sources) < 2:
        raise UsageError(f"ranking needs at least two versions, got {len(sources)} (three or "
                         "more give a ranking; two are also what 'localeval diff --pairwise' "
                         "compares)")
    if data is not None and len(data) != len(sources):
        raise UsageError(f"{len(data)} data sets for {len(sources)} versions: give one per "
                         "version, in the same order")
    labels = version_names(sources, names)  # given names checked before any reading
    loaded = [_read(src, None if data is None else data[k], labels[k] if names else "")
              for k, src in enumerate(sources)]
    if names is None:
        labels = version_names(sources, None, loaded)
        for v, src, label in zip(loaded, sources, labels):
            if v is not src:  # a Version the caller passed keeps its own
                v.results.name = label
    rows, notes = _common(loaded, labels)
    usable = [r for r in rows if all(s is not None and s.answer is not None for s in r)]
    if not usable:
        raise DataError("ranking needs every version's answers, and no question has them all: "
                        "a run folder records scores only; pass the data set each run "
                        "evaluated (--data, once per version; data= from Python)")
    if len(usable) < len(rows):
        notes.append(f"{len(rows) - len(usable)} common questions lack an answer in some "
                     "version: left out")
    door = open_door(judge, cache=cache, judge_options=judge_options, lang=lang, seed=seed,
                     verdicts=verdicts)
    fitness = None if judge_check is False else check_pairwise_judge(
        door, pairs=CHECK_PAIRS if judge_check is True else int(judge_check),
        strict_soft=strict_soft, progress=progress)
    k = len(loaded)
    couples = list(combinations(range(k), 2))
    judged: dict[tuple[int, int], list[PairJudgement]] = {c: [] for c in couples}
    done, total = 0, len(usable) * len(couples)
    bar = progress_bar(door, total, progress, "judging pairs", "pairs")
    try:
        for row in usable:
            for i, j in couples:
                a, b = row[i], row[j]
                assert a is not None and b is not None
                judged[(i, j)].append(ask_pair(door, a, b, criterion=criterion,
                                               strict_soft=strict_soft))
                done += 1
                if bar is not None:
                    bar.update(door.usage)
                if on_pair is not None:
                    on_pair(done, total)
    finally:
        if bar is not None:
            bar.close()
    every = [p for c in couples for p in judged[c]]
    notes += probability_notes([p for p in every if not p.identical], verdicts)
    pairs = {c: summarise(judged[c], n_resamples=n_resamples, seed=seed, criterion=criterion,
                          margin=margin) for c in couples}
    # soft unless a pair the judge was asked lacks probabilities (hard verdicts asked for,
    # or a judge without them); a pair of versions with identical answers alone asks nothing
    lacking = any(p.soft() is None for p in every if p.outcome != UNJUDGED and not p.identical)
    mode = "hard" if lacking else "soft"

    def share(p: PairJudgement) -> float | None:
        # the share of the *first* version (i, shown as base): 1 - P(new better)
        v = p.soft() if mode == "soft" else p.hard()
        return None if v is None else min(max(1.0 - v, 0.0), 1.0)  # rounding

    outcomes = [(q, i, j, x) for (i, j) in couples for q, p in enumerate(judged[(i, j)])
                if (x := share(p)) is not None]
    left = len(every) - len(outcomes)
    if left:
        notes.append(f"{left} of {len(every)} pairs asked count for nothing in the ranking "
                     f"({'unjudged' if mode == 'soft' else 'inconsistent or unjudged'})")
    ranking = bradley_terry(labels, win_table(len(usable), k, outcomes),
                            n_resamples=n_resamples, seed=seed, margin=margin)
    return RankResult(labels, ranking, pairs, mode, notes, criterion, criterion_source, fitness,
                      version_fitness(loaded, labels))


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def rank_lines(r: RankResult) -> list[str]:
    """The ranking as plain lines for the terminal: a table, then the neighbours' gaps."""
    rk = r.ranking
    ranks = rk.ranks()
    played = {n: sum(rk.comparisons[i]) for i, n in enumerate(rk.names)}
    won = {n: sum(rk.wins[i]) for i, n in enumerate(rk.names)}
    # version names are the user's (folder names, --names): printable, one line each
    width = max(len("version"), *(len(printable(n)) for n in rk.names))
    lines = [] if r.judge_check is None else [r.judge_check.summary_line()]
    lines.append(f"{'rank':<4}  {'version':<{width}}  {'strength [95% CI]':<24}  "
                 "wins / comparisons")
    for n in rk.order:
        s = rk.strengths[n]
        st = ("—" if s.value is None else f"{s.value:+.2f}"
              + (f" [{s.low:+.2f}, {s.high:+.2f}]" if s.ci is not None else ""))
        mark = r.marker(n)
        lines.append(f"{ranks[n]:<4}  {printable(n):<{width}}  {st:<24}  "
                     f"{won[n]:.1f} / {played[n]:.0f}"
                     + (f"  ({mark})" if mark else ""))
    lines.append(r.sentence())
    lines += [f"  ⚠ {printable(n)}: {printable(f.line or f.marker)} (the judge that scored this version's run; "
              "the ranking is the pairwise judge's)" for n, f in r.version_fitness.items()
              if f.marker]
    lines += [f"  {g.sentence()}" for g in rk.gaps]
    lines.append(f"pairwise ({r.mode} verdicts, both orders, {rk.questions} questions): the "
                 f"judge's verdict followed the position in {_pct(r.position_bias)} of pairs")
    if r.position_bias is not None and r.position_bias > HIGH_POSITION_BIAS:
        lines.append("  ⚠ a one-order comparison with this judge is not evidence; only the "
                     "order-averaged figures are")
    lines += [f"· {n}" for n in r.notes + rk.notes]
    return lines
