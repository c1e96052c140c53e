"""Judge quality: how often a judge, through localeval's prompts, agrees with people.

Scores the labelled sets in ``../shared/data/labelled/`` (third-party data with
human or construction labels; see the README there) with any judge, through the
public API ``localeval.evaluate``, and measures agreement with the labels:

- **WikiEval** (RAGAS paper): pairwise accuracy, the share of contrast pairs in
  which the good row scores strictly higher (ties count half), for
  faithfulness, answer_relevancy and context relevance (localeval's
  ``context_relevancy`` and ``nv_context_relevance``), beside the paper's
  gpt-3.5 figures (0.95 / 0.78 / 0.70);
- **ARES** (human 0/1, imbalanced): ROC AUC and balanced accuracy at 0.5;
- **MS MARCO hard negatives**: pairwise accuracy, relevant passage vs hard
  negative, for the context-relevance metrics;
- **JHARS** (Japanese, graded): Spearman with the graded label and ROC AUC on
  ``label_binary`` for faithfulness.

Every figure has a bootstrap 95% CI and its n, and every row the judge left
unscored is counted with its reason: a judge that cannot do the task shows as
low coverage, not as a silently smaller sample. The statistics are
``localeval.agreement``'s (``validate``: pairwise accuracy resampled by pair,
stratified AUC, Spearman), so this script and ``localeval validate`` agree.

Why a benchmark at all: a judge that parses is not a judge that judges (see
issue 16: a 135M model copies the prompts' examples and scores every sample
alike). These figures say how far a given judge's scores can be trusted.

    .venv/bin/python scripts/bench_quality.py --judge qwen2.5-7b --limit 20 -o out/quality

``--limit N`` draws N pairs (pairwise sets) or N rows (the others, stratified
by label so both classes are present) per set and labelled metric, seeded, so
a small judge on a laptop finishes in minutes. ``--ragas-path`` (ragas's own
prompts on the same judge as a baseline) is not implemented yet: it exits 2.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

__all__ = [
    "SETS", "METRICS", "ANCHORS", "SetSpec", "read_set", "choose", "score_rows",
    "pairwise_stats", "binary_stats", "graded_stats", "balanced_accuracy",
    "measure_task", "to_markdown", "main",
]

#: localeval metrics that stand for each labelled metric of the data.
METRICS: dict[str, tuple[str, ...]] = {
    "faithfulness": ("faithfulness",),
    "answer_relevancy": ("answer_relevancy",),
    "context_relevance": ("context_relevancy", "nv_context_relevance"),
}

_ALL_METRICS = tuple(m for ms in METRICS.values() for m in ms)

#: Published pairwise agreement on WikiEval of the RAGAS paper's gpt-3.5 judge (Table 1).
ANCHORS: dict[tuple[str, str], float] = {
    ("wikieval", "faithfulness"): 0.95,
    ("wikieval", "answer_relevancy"): 0.78,
    ("wikieval", "context_relevance"): 0.70,
}
ANCHOR_SOURCE = "RAGAS paper (arXiv 2309.15217), Table 1, gpt-3.5 judge, all 50 pairs"


@dataclass(frozen=True)
class SetSpec:
    """One labelled file: how its labels are read and which statistics they support."""

    name: str
    file: str
    design: str  # "pairwise" (contrast pairs), "binary" (0/1 labels), "graded" (label in [0, 1])
    lang: str
    title: str


SETS: dict[str, SetSpec] = {s.name: s for s in (
    SetSpec("wikieval", "wikieval.jsonl", "pairwise", "en", "WikiEval (RAGAS paper)"),
    SetSpec("ares", "ares_databricks_human.jsonl", "binary", "en", "ARES Databricks (human 0/1)"),
    SetSpec("msmarco", "msmarco_trulens_ctxrel.jsonl", "pairwise", "en",
            "MS MARCO hard negatives"),
    SetSpec("jhars", "jhars_ja.jsonl", "graded", "ja", "JHARS (Japanese, graded)"),
)}


# -- data --------------------------------------------------------------------------------
def read_set(data_dir: str | Path, spec: SetSpec) -> dict[str, list[dict[str, Any]]]:
    """The rows of one labelled file, grouped by ``label_metric`` (file order kept)."""
    path = Path(data_dir) / spec.file
    if not path.is_file():
        raise SystemExit(f"error: {path} not found (--data names the folder holding "
                         f"{', '.join(s.file for s in SETS.values())})")
    out: dict[str, list[dict[str, Any]]] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                out.setdefault(row["label_metric"], []).append(row)
    return out


def _binary(row: Mapping[str, Any]) -> int:
    """The row's 0/1 label (``label_binary`` where the label is graded)."""
    return int(row.get("label_binary", row["label"]))


def choose(rows: Sequence[Mapping[str, Any]], design: str, limit: int | None, seed: int,
           key: str) -> list[dict[str, Any]]:
    """A seeded subset: ``limit`` whole pairs, or ``limit`` rows stratified by label.

    Pairwise: only complete pairs (one good, one bad row) are eligible; the
    pairs are shuffled and the first ``limit`` kept. Otherwise: half the rows
    (rounded up) from the rarer class where it has that many, the rest from
    the other, so AUC and balanced accuracy are defined on small subsets (both
    are insensitive to class balance; a correlation is not, which the doc
    says). ``key`` (set/metric) varies the draw between tasks. None: all rows.
    """
    import numpy as np

    rng = np.random.default_rng([seed, zlib.crc32(key.encode("utf-8"))])
    if design == "pairwise":
        pairs: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            pairs.setdefault(str(r["pair_id"]), []).append(dict(r))
        ok = sorted(p for p, rs in pairs.items()
                    if len(rs) == 2 and sorted(_binary(r) for r in rs) == [0, 1])
        picked = [ok[i] for i in rng.permutation(len(ok))][:limit] if limit else ok
        return [r for p in sorted(picked) for r in pairs[p]]
    if not limit or limit >= len(rows):
        return [dict(r) for r in rows]
    by = {c: [dict(r) for r in rows if _binary(r) == c] for c in (0, 1)}
    for c in by:
        by[c] = [by[c][i] for i in rng.permutation(len(by[c]))]
    rare, common = sorted(by, key=lambda c: len(by[c]))
    n_rare = min(len(by[rare]), (limit + 1) // 2)
    picked = by[rare][:n_rare] + by[common][:limit - n_rare]
    order = {r["id"]: i for i, r in enumerate(rows)}
    return sorted(picked, key=lambda r: order[r["id"]])


# -- scoring -----------------------------------------------------------------------------
class _Progress:
    """A ``localeval.run.MetricObserver`` that prints one stderr line per scored row."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done, self.t0 = label, total, 0, time.perf_counter()

    def started(self, sample: Any, metric: Any) -> None:
        pass

    def finished(self, sample: Any, metric: Any, score: Any, seconds: float) -> None:
        self.done += 1
        value = "unscored" if score.value is None else f"{score.value:.3f}"
        print(f"  {self.label}: {self.done}/{self.total} {sample.id} {metric.key}={value} "
              f"({seconds:.1f} s, {time.perf_counter() - self.t0:.0f} s so far)",
              file=sys.stderr, flush=True)


def score_rows(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str], *, judge: Any,
               embedder: Any, verdicts: str, lang: str, cache: Any, label: str = "",
               quiet: bool = False, judge_check: bool = False
               ) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Score ``rows`` with ``metrics`` through ``localeval.evaluate``.

    Returns ({row id: {metric: Score}}, the run summary). Each row is a sample
    (question, contexts, answer, reference); the labels never reach the judge.
    The run's judge self-test is off unless ``judge_check``: this benchmark is
    the larger check, and the self-test's probes would double a small run.
    """
    import localeval

    data = [{"id": r["id"], "question": r["question"], "contexts": r["contexts"],
             "answer": r.get("answer"), "reference": r.get("reference")} for r in rows]
    observer = None if quiet else _Progress(label, len(rows) * len(metrics))
    res = localeval.evaluate(data, list(metrics), judge=judge, embedder=embedder, lang=lang,
                             verdicts=verdicts, cache=cache, progress=False,
                             observer=observer, judge_check=judge_check,
                             on_warning=lambda m: print(f"  note: {m}", file=sys.stderr))
    return {s.id: dict(sc) for s, sc in zip(res.samples, res.scores)}, res.summary


def reason_kind(reason: str | None) -> str:
    """An unscored reason with its numbers masked, so that like reasons count together."""
    return re.sub(r"\d+", "N", reason or "unscored")


# -- statistics --------------------------------------------------------------------------
def _stat(d: Mapping[str, Any], name: str, n: int) -> dict[str, Any]:
    return {"statistic": name, "value": d.get("value"), "ci95": d.get("ci95"),
            "ci_method": d.get("ci_method"), "reason": d.get("reason"), "n": n}


def _labels(**kw: Any) -> Any:
    from localeval.agreement import Labels

    return Labels("labelled data", **kw)


def _result_set(values: Mapping[str, float | None], metric: str) -> Any:
    from localeval.agreement import ResultSet

    return ResultSet.from_scores({i: {metric: v} for i, v in values.items()})


def pairwise_stats(values: Mapping[str, float | None], labels: Mapping[str, int],
                   pairs: Mapping[str, str], metric: str, *, n_boot: int = 2000,
                   seed: int = 0) -> dict[str, Any]:
    """Pairwise accuracy (good row strictly higher; ties 1/2) with a CI resampling pairs.

    A pair with an unscored row is left out (and shows in the task's unscored
    count); ``n`` is the number of pairs compared.
    """
    from localeval.agreement import validate

    ids = list(values)
    lab = _labels(human={i: {metric: float(labels[i])} for i in ids},
                  groups={i: pairs[i] for i in ids}, order=ids)
    h = validate(_result_set(values, metric), lab, metrics=[metric], n_boot=n_boot,
                 seed=seed).human[0]
    return _stat(h.pairwise.to_dict(), "pairwise accuracy", h.n_pairs)


def balanced_accuracy(pos: Sequence[float], neg: Sequence[float], *, threshold: float = 0.5,
                      n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Balanced accuracy of "score >= threshold means good", with a stratified percentile CI.

    Balanced accuracy (the mean of the true-positive and true-negative rates)
    is the accuracy that an imbalanced set (ARES: 172 good, 28 bad) cannot
    inflate: a judge that passes everything gets 0.5.
    """
    import numpy as np
    from sklearn.metrics import balanced_accuracy_score

    if not pos or not neg:
        return {"value": None, "ci95": None, "reason": "needs scored rows of both labels "
                f"(good {len(pos)}, bad {len(neg)})"}
    p = (np.asarray(pos, dtype=float) >= threshold).astype(float)
    q = (np.asarray(neg, dtype=float) < threshold).astype(float)  # correct rejections
    y = np.r_[np.ones(len(p)), np.zeros(len(q))]
    pred = np.r_[p, 1.0 - q]
    point = float(balanced_accuracy_score(y, pred))
    if n_boot == 0 or min(len(p), len(q)) < 2:
        return {"value": point, "ci95": None,
                "reason": None if n_boot == 0 else "too few rows of a label for a CI"}
    rng = np.random.default_rng(seed)
    tpr = p[rng.integers(0, len(p), (n_boot, len(p)))].mean(1)
    tnr = q[rng.integers(0, len(q), (n_boot, len(q)))].mean(1)
    lo, hi = np.percentile((tpr + tnr) / 2, [2.5, 97.5])
    return {"value": point, "ci95": [float(lo), float(hi)],
            "ci_method": "percentile bootstrap (numpy, seeded), stratified by label"}


def binary_stats(values: Mapping[str, float | None], labels: Mapping[str, int], metric: str,
                 *, n_boot: int = 2000, seed: int = 0) -> list[dict[str, Any]]:
    """ROC AUC (stratified bootstrap CI) and balanced accuracy at 0.5 of scored rows."""
    from localeval.agreement import validate

    ids = list(values)
    lab = _labels(binary={i: bool(labels[i]) for i in ids}, order=ids)
    sep = validate(_result_set(values, metric), lab, metrics=[metric], n_boot=n_boot,
                   seed=seed).separation[0]
    pos = [v for i, v in values.items() if v is not None and labels[i]]
    neg = [v for i, v in values.items() if v is not None and not labels[i]]
    n = len(pos) + len(neg)
    return [_stat(sep.auc.to_dict(), "ROC AUC", n),
            _stat(balanced_accuracy(pos, neg, n_boot=n_boot, seed=seed),
                  "balanced accuracy @0.5", n)]


def graded_stats(values: Mapping[str, float | None], graded: Mapping[str, float],
                 binary: Mapping[str, int], metric: str, *, n_boot: int = 2000,
                 seed: int = 0) -> list[dict[str, Any]]:
    """Spearman with the graded label and ROC AUC on the binary one (scored rows)."""
    from localeval.agreement import validate

    ids = list(values)
    lab = _labels(human={i: {metric: float(graded[i])} for i in ids},
                  binary={i: bool(binary[i]) for i in ids}, order=ids)
    v = validate(_result_set(values, metric), lab, metrics=[metric], n_boot=n_boot, seed=seed)
    n = sum(x is not None for x in values.values())
    return [_stat(v.human[0].stats["spearman"].to_dict(), "Spearman ρ (graded)", n),
            _stat(v.separation[0].auc.to_dict(), "ROC AUC (label_binary)", n)]


def measure_task(spec: SetSpec, label_metric: str, metric: str,
                 rows: Sequence[Mapping[str, Any]], scores: Mapping[str, Mapping[str, Any]],
                 *, n_boot: int, seed: int) -> list[dict[str, Any]]:
    """The statistics of one (set, labelled metric, localeval metric), with coverage."""
    values = {r["id"]: scores[r["id"]][metric].value for r in rows}
    reasons = Counter(reason_kind(scores[r["id"]][metric].reason) for r in rows
                      if values[r["id"]] is None)
    seed = seed + zlib.crc32(f"{spec.name}/{metric}".encode("utf-8")) % 10_000
    if spec.design == "pairwise":
        stats = [pairwise_stats(values, {r["id"]: _binary(r) for r in rows},
                                {r["id"]: str(r["pair_id"]) for r in rows}, metric,
                                n_boot=n_boot, seed=seed)]
        chosen, unit = len(rows) // 2, "pairs"
    elif spec.design == "binary":
        stats = binary_stats(values, {r["id"]: _binary(r) for r in rows}, metric,
                             n_boot=n_boot, seed=seed)
        chosen, unit = len(rows), "rows"
    else:
        stats = graded_stats(values, {r["id"]: float(r["label"]) for r in rows},
                             {r["id"]: _binary(r) for r in rows}, metric, n_boot=n_boot,
                             seed=seed)
        chosen, unit = len(rows), "rows"
    anchor = ANCHORS.get((spec.name, label_metric))
    scored = [v for v in values.values() if v is not None]
    common = {"set": spec.name, "label_metric": label_metric, "metric": metric,
              "unit": unit, "chosen": chosen, "rows": len(rows),
              "rows_unscored": sum(reasons.values()), "unscored_reasons": dict(reasons),
              "distinct_values": len(set(round(v, 6) for v in scored)),
              "anchor": anchor, "anchor_source": ANCHOR_SOURCE if anchor else None}
    return [{**common, **s} for s in stats]


# -- reports -----------------------------------------------------------------------------
def _fmt(v: float | None, ci: Sequence[float] | None) -> str:
    if v is None:
        return "—"
    return f"{v:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _limit_text(limits: Mapping[str, int]) -> str:
    default = limits.get("", 0)
    text = f"{default} per set and labelled metric" if default else "none"
    extra = [f"{k} {v or 'all'}" for k, v in limits.items() if k]
    return text + (f" ({', '.join(extra)})" if extra else "")


def to_markdown(report: Mapping[str, Any]) -> str:
    """The figures as a Markdown table, with coverage and the notes that qualify them."""
    lines = [f"## Judge quality: {report['judge_name']}", "",
             f"judge `{report['judge']}`; verdicts {', '.join(report['verdicts'])}; "
             f"limit {_limit_text(report['limit'])}; seed {report['seed']}; "
             f"{report['n_boot']} bootstrap resamples; localeval {report['localeval_version']} "
             f"at {report['git_commit']}; {report['date']}", "",
             "| set | labelled | localeval metric | verdicts | statistic | value [95% CI] | n "
             "| unscored rows | distinct scores | published (gpt-3.5) |",
             "|---|---|---|---|---|---:|---:|---:|---:|---:|"]
    for r in report["results"]:
        lines.append(
            f"| {r['set']} | {r['label_metric']} | {r['metric']} | {r['verdicts']} "
            f"| {r['statistic']} | {_fmt(r['value'], r['ci95'])} | {r['n']} {r['unit']} "
            f"| {r['rows_unscored']}/{r['rows']} | {r['distinct_values']} "
            f"| {'' if r['anchor'] is None else format(r['anchor'], '.2f')} |")
    reasons: Counter[str] = Counter()
    for r in report["results"]:
        if r["statistic"] in ("pairwise accuracy", "ROC AUC", "Spearman ρ (graded)"):
            reasons.update(r["unscored_reasons"])
    lines += ["", "Unscored rows by reason (all tasks): "
              + ("; ".join(f"{k}: {v}" for k, v in reasons.most_common()) or "none"), ""]
    for run in report["runs"]:
        u = run.get("usage") or {}
        h = run.get("judge_health") or {}
        extra = "".join(f", {h[k]} {what}" for k, what in (
            ("duplicate_items", "duplicate items merged"),
            ("invented_items_dropped", "invented items dropped")) if h.get(k))
        lines.append(f"- {run['set']}/{run['label_metric']} ({run['verdicts']}): "
                     f"{run['rows']} rows, {u.get('calls', 0)} judge calls, "
                     f"{u.get('copied_calls', 0)} copied the prompt's example{extra}; "
                     f"{run['seconds']:.0f} s")
    notes = [r["reason"] for r in report["results"] if r.get("reason")]
    if notes:
        lines += ["", "Notes: " + "; ".join(sorted(set(notes)))]
    return "\n".join(lines) + "\n"


def _git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, text=True, capture_output=True).stdout.strip()
        return head + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# -- command line ------------------------------------------------------------------------
def parse_limit(text: str | int) -> dict[str, int]:
    """``--limit``: "N", or "N,KEY=M,...", KEY a set or a labelled metric; {"": N, KEY: M}.

    Faithfulness costs a small judge minutes a row (two long generations)
    while a context rating takes seconds, so one cap rarely fits all.
    """
    out: dict[str, int] = {}
    for part in str(text).split(","):
        key, _, n = part.strip().rpartition("=")
        if key and key not in SETS and key not in METRICS:
            raise SystemExit(f"error: --limit key {key!r} is not a set ({', '.join(SETS)}) "
                             f"or a labelled metric ({', '.join(METRICS)})")
        try:
            out[key] = int(n)
        except ValueError:
            raise SystemExit(f"error: --limit wants N or N,KEY=M,... (got {text!r})") from None
        if out[key] < 0:
            raise SystemExit("error: --limit values must be >= 0")
    out.setdefault("", 0)
    return out


def limit_for(limits: Mapping[str, int], set_name: str, label_metric: str) -> int | None:
    """The cap of one task: its labelled metric's, else its set's, else the default (0: all)."""
    n = limits.get(label_metric, limits.get(set_name, limits.get("", 0)))
    return n or None


def _split(text: str, allowed: Iterable[str], what: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise SystemExit(f"error: {what} must be a comma-separated list of "
                         f"{', '.join(allowed)} (got {text!r})")
    return items


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judge", required=True, help="GGUF path, manifest name, http(s) URL, "
                    "or demo")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "labelled"),
                    help="folder of the labelled JSONL files (default ../shared/data/labelled)")
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated: "
                    + ", ".join(SETS))
    ap.add_argument("--metrics", default=None, help="only these localeval metrics "
                    "(comma-separated; default: " + ", ".join(_ALL_METRICS) + ")")
    ap.add_argument("--verdicts", default="hard", help="hard, soft or hard,soft")
    ap.add_argument("--limit", default="0", help="pairs or rows per set and labelled "
                    "metric (seeded draw; 0: all); N,KEY=M,... caps a set or a labelled "
                    "metric apart, e.g. 10,faithfulness=3")
    ap.add_argument("--seed", type=int, default=0, help="seed of the draw and the bootstrap")
    ap.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples per CI")
    ap.add_argument("--embedder", default=None, help="embedder for answer_relevancy "
                    "(default: localeval's default)")
    ap.add_argument("--n-ctx", type=int, default=None, help="judge context (llama.cpp)")
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    ap.add_argument("--chat-format", default=None, help="llama.cpp chat format override")
    ap.add_argument("--no-cache", action="store_true", help="ask the judge every time")
    ap.add_argument("--judge-check", action="store_true", help="also run localeval's judge "
                    "self-test before each set (off: this benchmark is the larger check)")
    ap.add_argument("--ragas-path", help="ragas installed apart (pip install --target DIR "
                    "ragas) as a baseline: NOT IMPLEMENTED YET (exits 2)")
    ap.add_argument("-o", "--out", help="folder for quality.json and quality.md")
    ap.add_argument("-q", "--quiet", action="store_true", help="no per-row progress")
    args = ap.parse_args(argv)
    if args.ragas_path:
        print("error: --ragas-path (ragas's own prompts on the same judge through a local "
              "llama_cpp.server) is not implemented yet; see docs/judge-quality.md",
              file=sys.stderr)
        return 2
    sets = _split(args.sets, SETS, "--sets")
    modes = _split(args.verdicts, ("hard", "soft"), "--verdicts")
    only = _split(args.metrics, _ALL_METRICS, "--metrics") if args.metrics else _ALL_METRICS
    limits = parse_limit(args.limit)

    from localeval.run import open_cache, resolve_embedder, resolve_judge
    from localeval.version import __version__

    t0 = time.perf_counter()
    store = open_cache(not args.no_cache)
    opts = {k: v for k, v in (("n_ctx", args.n_ctx), ("n_threads", args.threads),
                              ("chat_format", args.chat_format)) if v is not None}
    judge = resolve_judge(args.judge, store, opts)
    if judge is None:
        raise SystemExit(f"error: no judge found for {args.judge!r}")
    embedder: Any = None
    report: dict[str, Any] = {
        "judge": args.judge, "judge_name": judge.name, "verdicts": modes,
        "limit": limits, "metrics": list(only), "seed": args.seed, "n_boot": args.n_boot,
        "data": str(Path(args.data).resolve()), "sets": sets,
        "localeval_version": __version__, "git_commit": _git_commit(),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"), "ragas": None,
        "runs": [], "results": [], "scores": []}
    for name in sets:
        spec = SETS[name]
        grouped = read_set(args.data, spec)
        for label_metric, all_rows in grouped.items():
            rows = choose(all_rows, spec.design, limit_for(limits, name, label_metric), args.seed,
                          f"{name}/{label_metric}")
            metrics = tuple(m for m in METRICS[label_metric] if m in only)
            if not metrics:
                continue
            if embedder is None and any(m == "answer_relevancy" for m in metrics):
                embedder = resolve_embedder(args.embedder, store, "auto")
            for mode in modes:
                label = f"{name}/{label_metric} {mode}"
                print(f"{label}: {len(rows)} rows x {', '.join(metrics)}", file=sys.stderr,
                      flush=True)
                t1 = time.perf_counter()
                scores, summary = score_rows(
                    rows, metrics, judge=judge,
                    embedder=embedder if embedder is not None else False, verdicts=mode,
                    lang=spec.lang, cache=store if store is not None else False, label=label,
                    quiet=args.quiet, judge_check=args.judge_check)
                run = {"set": name, "label_metric": label_metric, "verdicts": mode,
                       "rows": len(rows), "seconds": round(time.perf_counter() - t1, 1),
                       "usage": summary.get("usage"),
                       "judge_health": summary.get("judge_health"),
                       "signature_line": summary.get("signature_line")}
                report["runs"].append(run)
                for m in metrics:
                    for res in measure_task(spec, label_metric, m, rows, scores,
                                            n_boot=args.n_boot, seed=args.seed):
                        report["results"].append({**res, "verdicts": mode})
                        print(f"  {res['statistic']}: {_fmt(res['value'], res['ci95'])} "
                              f"({m}, n={res['n']}, unscored {res['rows_unscored']}/"
                              f"{res['rows']})", file=sys.stderr, flush=True)
                    for r in rows:
                        sc = scores[r["id"]][m]
                        report["scores"].append({
                            "set": name, "id": r["id"], "metric": m, "verdicts": mode,
                            "label": r["label"], "label_binary": r.get("label_binary"),
                            "pair_id": r.get("pair_id"), "value": sc.value,
                            "reason": sc.reason})
    report["seconds"] = round(time.perf_counter() - t0, 1)
    md = to_markdown(report)
    print(md)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "quality.json").write_text(json.dumps(report, ensure_ascii=False, indent=1),
                                          encoding="utf-8")
        (out / "quality.md").write_text(md, encoding="utf-8")
        print(f"wrote {out / 'quality.json'} and {out / 'quality.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
