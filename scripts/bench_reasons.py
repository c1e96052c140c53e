"""Verdicts with and without the judge's reasons (``--reasons``): cost and soft-verdict spread.

Runs the default metric set on the bundled example with one judge once per
reason mode (``full``, ``none``, optionally ``short``), drafting as the run's
default (``draft="auto"``) in every mode, soft verdicts (so the probabilities
can be compared; their extra one-token evaluations cost the same in each mode),
no cache and no judge check, and reports per sample:

- generated tokens, generation decode steps (fewer than tokens when drafted
  guesses were kept) and judge seconds (``usage.seconds``: time inside judge
  calls), and the wall time of the run;
- the verdict distribution (share of verdicts 1) and the soft-probability
  spread: the share of P(verdict = 1) within 0.1 of 0 or 1 (a probability that
  sits at 0 or 1 carries no doubt for corrected estimates or active labelling).

The modes run in one process, one after the other, on the same samples (a
seeded, language-stratified draw of ``--samples``).

    .venv/bin/python scripts/bench_reasons.py --judge demo --samples 12 --json out.json

Any judge spec works. ``--judge qwen-shape`` builds (once, into
``--cache-dir``) and uses the Qwen2-0.5B-shaped random-weight model of the
drafting and suite benches, with their quote bias (``scripts/suite/qwen_shape.py``):
random weights write junk, so it measures the mechanics only (tokens, decode
steps and time per mode on a judge of a real judge's shape).

    .venv/bin/python scripts/bench_reasons.py --judge qwen-shape --samples 4 --threads 2

``--labelled FILE`` scores contrast pairs of a labelled set instead (one JSONL
line per row with ``pair_id`` and a 0/1 ``label``: WikiEval's faithfulness
pairs, a grounded and an ungrounded answer to one question) with ``--metric``
and adds each mode's *pairwise accuracy*: the share of pairs in which the
good row scores higher (ties count half), as the RAGAS paper scores WikiEval.

    .venv/bin/python scripts/bench_reasons.py --labelled ../shared/data/labelled/wikieval.jsonl --pairs 12

``--validate-set ares|jhars`` measures agreement with human labels the way a
user checks a judge: a seeded draw of ``--rows`` rows of the set's faithfulness
labels, stratified by the 0/1 label (``scripts/quality/data.py``, as
``bench_quality.py`` draws them), is run per mode with ``--metric`` into
``--work`` (a folder outside the repository: the sets are third-party and stay
beside it), and each run is checked with ``localeval validate RUN labels.csv``
(``label``: the 0/1 label, ``human_<metric>``: the human score, graded for
JHARS). It reports the validation's ROC AUC, Spearman and the run's spread.

    .venv/bin/python scripts/bench_reasons.py --validate-set ares --rows 16 --work /tmp/reasons-ares
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # suite/ and quality/

from quality.data import SETS, binary_label, choose, read_set  # noqa: E402
from suite.qwen_shape import qwen_shape_bias, qwen_shape_path  # noqa: E402

#: ``--judge`` value that builds the Qwen2-0.5B-shaped random-weight model.
QWEN_SHAPE = "qwen-shape"

#: Details keys whose items are binary verdicts (rows with ``verdict`` and, soft, ``p_verdict_1``).
_NEAR = 0.1


def verdict_rows(details: Any) -> Iterable[dict[str, Any]]:
    """Every dict in a record's details that holds a binary verdict."""
    if isinstance(details, dict):
        if details.get("verdict") in (0, 1):
            yield details
        for v in details.values():
            yield from verdict_rows(v)
    elif isinstance(details, list):
        for v in details:
            yield from verdict_rows(v)


def spread(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Verdict distribution and soft-probability spread over a run's records."""
    rows = [r for rec in records for r in verdict_rows(rec.get("details") or {})]
    probs = [float(r["p_verdict_1"]) for r in rows if "p_verdict_1" in r]
    near = sum(1 for p in probs if p <= _NEAR or p >= 1 - _NEAR)
    return {"verdicts": len(rows),
            "share_1": round(sum(r["verdict"] for r in rows) / len(rows), 4) if rows else None,
            "probabilities": len(probs),
            "share_near_0_or_1": round(near / len(probs), 4) if probs else None,
            "mean_p": round(sum(probs) / len(probs), 4) if probs else None}


def labelled_pairs(path: str, metric: str, pairs: int) -> list[dict[str, Any]]:
    """The rows of the first ``pairs`` complete contrast pairs of ``metric`` in ``path``."""
    rows = [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x]
    by_pair: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("label_metric") == metric and r.get("pair_id"):
            by_pair.setdefault(r["pair_id"], []).append(r)
    whole = [p for p in by_pair.values() if sorted(r["label"] for r in p) == [0, 1]]
    keep = ("id", "question", "contexts", "answer", "reference")
    return [{k: r[k] for k in keep} | {"pair_id": r["pair_id"], "label": r["label"]}
            for p in whole[:pairs] for r in p]


def pairwise_accuracy(rows: list[dict[str, Any]], scores: dict[str, float | None]) -> float:
    """Share of pairs whose good row scores higher than the bad one (ties and gaps: half)."""
    pairs: dict[str, dict[int, float | None]] = {}
    for r in rows:
        pairs.setdefault(r["pair_id"], {})[r["label"]] = scores.get(r["id"])
    won = []
    for p in pairs.values():
        good, bad = p.get(1), p.get(0)
        if good is None or bad is None or good == bad:
            won.append(0.5)  # a tie, or a side unscored: no evidence either way
        else:
            won.append(1.0 if good > bad else 0.0)
    return round(sum(won) / len(won), 4)


def judge_for(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """What ``evaluate`` gets as its judge, and its ``judge_options``.

    A spec is loaded by the run with ``--draft``/``--threads`` as options; the
    Qwen shape is built here (one fresh judge per mode, so no mode reuses
    another's KV prefixes), with the suite benches' quote bias.
    """
    if args.judge != QWEN_SHAPE:
        opts: dict[str, Any] = {"draft": args.draft}
        if args.threads:
            opts["n_threads"] = args.threads
        return args.judge, opts
    from localeval.judge import LlamaJudge

    path = qwen_shape_path(None, args.cache_dir)
    if getattr(args, "bias", None) is None:
        args.bias = qwen_shape_bias(path, args.threads or None)
    return LlamaJudge(path, n_threads=args.threads or None, logit_bias=args.bias,
                      draft=args.draft), {}


def cost(res: Any, wall: float) -> dict[str, Any]:
    """Per-sample judge work of one run (``usage``), its wall time and verdict spread."""
    u = res.summary["usage"]
    n = res.summary["n_samples"]
    return {
        "samples": n, "calls": u.get("calls"),
        # retries of calls whose reply copied the prompt's example (reasons are what copies)
        "copied_calls": u.get("copied_calls", 0), "copy_failures": u.get("copy_failures", 0),
        "generated_tokens_per_sample": round(u.get("generated_tokens", 0) / n, 1),
        "decode_steps_per_sample": round(u.get("decode_steps", 0) / n, 1),
        "judge_seconds_per_sample": round(u.get("seconds", 0.0) / n, 2),
        "wall_seconds": round(wall, 1),
        "means": {k: (round(v["mean"], 4) if v.get("mean") is not None else None)
                  for k, v in res.summary["metrics"].items()},
        **spread(res.records()),
        "signature_line": res.summary["signature_line"],
    }


def run_mode(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    from localeval.cli.app import example_path
    from localeval.run import evaluate

    judge, opts = judge_for(args)
    labelled = labelled_pairs(args.labelled, args.metric, args.pairs) if args.labelled else None
    data: Any = ([{k: v for k, v in r.items() if k not in ("pair_id", "label")}
                  for r in labelled] if labelled else example_path())
    t0 = time.perf_counter()
    res = evaluate(data, args.metric if labelled else args.metrics, judge=judge,
                             cache=False, judge_check=False, verdicts=args.verdicts,
                             reasons=mode, sample=None if labelled else args.samples,
                             seed=args.seed, progress=False, judge_options=opts)
    out = {"mode": mode, **cost(res, time.perf_counter() - t0)}
    if labelled:
        out |= {"pairs": len(labelled) // 2, "pairwise_accuracy": pairwise_accuracy(
            labelled, {str(r["id"]): r["scores"].get(args.metric) for r in res.records()})}
    if not isinstance(judge, str):
        judge.close()
    return out


def validation_rows(args: argparse.Namespace, work: Path) -> tuple[list[dict[str, Any]], Path]:
    """The drawn rows of ``--validate-set`` and the labels file ``localeval validate`` reads."""
    spec = SETS[args.validate_set]
    rows = choose(read_set(args.data, spec)[args.metric], spec.design, args.rows, args.seed,
                  f"{spec.name}/{args.metric}")
    labels = work / "labels.csv"
    # label: the 0/1 label (ROC AUC); human_<metric>: the human score (graded in JHARS)
    labels.write_text(f"id,label,human_{args.metric}\n" + "".join(
        f"{r['id']},{binary_label(r)},{float(r['label'])}\n" for r in rows), encoding="utf-8")
    return rows, labels


def validate_mode(mode: str, args: argparse.Namespace, rows: list[dict[str, Any]],
                  labels: Path, work: Path) -> dict[str, Any]:
    """Run ``rows`` in ``mode`` into ``work/run-MODE``, then ``localeval validate`` it."""
    from localeval.cli.app import main as cli
    from localeval.run import evaluate

    judge, opts = judge_for(args)
    data = [{k: r.get(k) for k in ("id", "question", "contexts", "answer", "reference")}
            for r in rows]
    run_dir, val_dir = work / f"run-{mode}", work / f"validate-{mode}"
    t0 = time.perf_counter()
    res = evaluate(data, args.metric, judge=judge, lang=SETS[args.validate_set].lang,
                             cache=False, judge_check=False, verdicts=args.verdicts,
                             reasons=mode, progress=False, judge_options=opts, out_dir=run_dir)
    out = {"mode": mode, "set": args.validate_set, **cost(res, time.perf_counter() - t0)}
    if not isinstance(judge, str):
        judge.close()
    rc = cli(["validate", str(run_dir), str(labels), "-m", args.metric, "-o", str(val_dir),
              "--seed", str(args.seed)])
    v = json.loads((val_dir / "validation.json").read_text(encoding="utf-8"))
    sep = v.get("separation", {}).get(args.metric, {})
    hum = v.get("human_agreement", {}).get(args.metric, {})

    def stat(d: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if not d else {k: d.get(k) for k in ("value", "low", "high", "n", "reason",
                                                         "reliable")
                                   if d.get(k) is not None}

    return out | {"validate_exit": rc, "roc_auc": stat(sep.get("roc_auc")),
                  "spearman": stat(hum.get("stats", {}).get("spearman")),
                  "unscored": hum.get("unscored"),
                  "positives": sep.get("positive", {}).get("n"),
                  "negatives": sep.get("negative", {}).get("n"),
                  "validation": str(val_dir / "validation.json")}


def table(rows: list[dict[str, Any]]) -> str:
    base = rows[0]
    head = ("| mode | tokens/sample | decode steps/sample | judge s/sample | wall s | "
            "verdicts | share 1 | P within 0.1 of 0 or 1 |")
    lines = [head, "|" + "---|" * 8]
    for r in rows:
        lines.append(f"| {r['mode']} | {r['generated_tokens_per_sample']:,} | "
                     f"{r['decode_steps_per_sample']:,} | {r['judge_seconds_per_sample']} | "
                     f"{r['wall_seconds']} | {r['verdicts']} | {r['share_1']} | "
                     f"{r['share_near_0_or_1']} |")
    if any(r["share_near_0_or_1"] is not None for r in rows):
        # The measure of soft spread: a P(1) within 0.1 of 0 or 1 carries no doubt.
        lines.append("\nsoft spread, P(verdict = 1) within 0.1 of 0 or 1: " + ", ".join(
            f"{r['mode']} {r['share_near_0_or_1']:.1%} of {r['probabilities']}" for r in rows
            if r["share_near_0_or_1"] is not None))
    if "roc_auc" in base:
        def fmt(st: dict[str, Any] | None) -> str:
            if not st or st.get("value") is None:
                return f"n/a ({(st or {}).get('reason', 'not computed')})"
            ci = f" [{st['low']:.2f}, {st['high']:.2f}]" if st.get("low") is not None else ""
            shaky = " (CI unreliable at this size)" if st.get("reliable") is False else ""
            return f"{st['value']:.3f}{ci}{shaky}"
        lines.append("")
        for r in rows:
            lines.append(f"{r['set']} {r['mode']}: localeval validate ROC AUC {fmt(r['roc_auc'])}"
                         f", Spearman {fmt(r['spearman'])} ({r['positives']} positive, "
                         f"{r['negatives']} negative rows scored, {r.get('unscored')} "
                         "unscored)")
    if "pairwise_accuracy" in base:
        lines.append("\n" + ", ".join(f"{r['mode']}: pairwise accuracy {r['pairwise_accuracy']} "
                                       f"over {r['pairs']} pairs" for r in rows))
    for r in rows[1:]:
        tok = 1 - r["generated_tokens_per_sample"] / max(base["generated_tokens_per_sample"], 1e-9)
        speed = base["judge_seconds_per_sample"] / max(r["judge_seconds_per_sample"], 1e-9)
        lines.append(f"\n{r['mode']} vs {base['mode']}: generated tokens {-tok:+.0%}, "
                     f"judge time {speed:.2f}x lower")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judge", default="demo", help="judge spec (default: demo, SmolLM2-135M), "
                   f"or {QWEN_SHAPE}: the Qwen2-0.5B-shaped random-weight model")
    p.add_argument("--modes", default="full,none", help="reason modes, the first the baseline "
                   "(default: full,none)")
    p.add_argument("--samples", type=int, default=12, help="samples drawn from the example")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--metrics", default=None, help="metric spec (default: the default set)")
    p.add_argument("--verdicts", default="soft", choices=["hard", "soft"])
    p.add_argument("--draft", default="auto", help="prompt-lookup drafting (default: auto)")
    p.add_argument("--threads", type=int, default=0, help="llama.cpp threads (default: its own)")
    p.add_argument("--labelled", help="a labelled JSONL set with contrast pairs (pair_id, "
                   "label): score its pairs instead of the example")
    p.add_argument("--metric", default="faithfulness", help="with --labelled: the labels' "
                   "metric (label_metric), scored by itself (default: %(default)s)")
    p.add_argument("--pairs", type=int, default=12, help="with --labelled: pairs to score")
    p.add_argument("--validate-set", choices=("ares", "jhars"), help="check each mode "
                   "against a labelled set's human labels with localeval validate")
    p.add_argument("--rows", type=int, default=16, help="with --validate-set: rows drawn, "
                   "stratified by the 0/1 label (default: %(default)s)")
    p.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "labelled"),
                   help="folder of the labelled sets (default ../shared/data/labelled)")
    p.add_argument("--work", help="with --validate-set: folder for the runs, labels and "
                   "validations (default: a new temporary folder)")
    p.add_argument("--cache-dir", help=f"with --judge {QWEN_SHAPE}: where the model is kept")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args(argv)
    rows = []
    if args.validate_set:
        work = Path(args.work or tempfile.mkdtemp(prefix="reasons-validate-"))
        work.mkdir(parents=True, exist_ok=True)
        drawn, labels = validation_rows(args, work)
    for mode in args.modes.split(","):
        rows.append(validate_mode(mode, args, drawn, labels, work) if args.validate_set
                    else run_mode(mode, args))
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
