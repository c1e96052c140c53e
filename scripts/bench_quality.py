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
low coverage, not as a silently smaller sample.

Why a benchmark at all: a judge that parses is not a judge that judges (see
a 135M model copies the prompts' examples and scores every sample
alike). These figures say how far a given judge's scores can be trusted.

    .venv/bin/python scripts/bench_quality.py --judge qwen2.5-7b --limit 20 -o out/quality

``--limit N`` draws N pairs (pairwise sets) or N rows (the others, stratified
by label so both classes are present) per set and labelled metric, seeded, so
a small judge on a laptop finishes in minutes. ``--ragas-path DIR`` (ragas
installed apart) scores the same rows with ragas's own prompts on the same
judge, as a baseline column (``quality/ragas_baseline.py``).

The code lives in ``scripts/quality/`` (data, scoring, stats, server,
ragas_baseline, report); this file is the command line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the quality package, bench_suite

from quality.data import (ALL_METRICS, ANCHORS, METRICS, SETS, SetSpec,  # noqa: E402
                          binary_label, choose, limit_for, parse_limit, read_set)
from quality.ragas_baseline import (BaselineError, check_server_deps,  # noqa: E402
                                    judge_endpoint, load_ragas, merge_baseline,
                                    run_baseline)
from quality.report import fmt, git_commit, to_markdown  # noqa: E402
from quality.scoring import score_rows  # noqa: E402
from quality.server import ServerError  # noqa: E402
from quality.stats import (balanced_accuracy, binary_stats, graded_stats,  # noqa: E402
                           measure_task, pairwise_stats, reason_kind)

__all__ = [
    "SETS", "METRICS", "ANCHORS", "SetSpec", "read_set", "binary_label", "choose",
    "parse_limit", "limit_for", "score_rows", "reason_kind", "pairwise_stats",
    "binary_stats", "graded_stats", "balanced_accuracy", "measure_task", "to_markdown",
    "main",
]


def _split(text: str, allowed: Iterable[str], what: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        raise SystemExit(f"error: {what} must be a comma-separated list of "
                         f"{', '.join(allowed)} (got {text!r})")
    return items


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--judge", required=True, help="GGUF path, manifest name, http(s) URL, "
                    "or demo")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "labelled"),
                    help="folder of the labelled JSONL files (default ../shared/data/labelled)")
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated: "
                    + ", ".join(SETS))
    ap.add_argument("--metrics", default=None, help="only these localeval metrics "
                    "(comma-separated; default: " + ", ".join(ALL_METRICS) + ")")
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
                    "judge check before each set (off: this benchmark is the larger check)")
    ap.add_argument("--ragas-path", metavar="DIR", help="ragas installed apart (pip install "
                    "--target DIR ragas, plus llama_cpp.server's extras unless the judge is "
                    "a URL): also score the same rows with ragas's own prompts on the same "
                    "judge, as a baseline column")
    ap.add_argument("--server-path", metavar="DIR", help="apart folder holding "
                    "llama_cpp.server's extras (fastapi, uvicorn, sse-starlette, "
                    "starlette-context, pydantic-settings) when they are not beside ragas")
    ap.add_argument("--ragas-timeout", type=float, default=3600, metavar="S",
                    help="time budget of the whole ragas baseline, seconds (default 3600); "
                    "rows left when it is spent are counted unscored")
    ap.add_argument("--ragas-call-timeout", type=float, default=300, metavar="S",
                    help="timeout of one ragas call to the judge server (default 300)")
    ap.add_argument("--server-timeout", type=float, default=300, metavar="S",
                    help="how long to wait for llama_cpp.server to load the judge (default 300)")
    ap.add_argument("-o", "--out", help="folder for quality.json and quality.md")
    ap.add_argument("-q", "--quiet", action="store_true", help="no per-row progress")
    return ap


def _score_localeval(args: argparse.Namespace, report: dict[str, Any], judge: Any,
                     store: Any, sets: Sequence[str], modes: Sequence[str],
                     only: Sequence[str], limits: dict[str, int]) -> tuple[list[dict], Any]:
    """Score every task with localeval into ``report``; the tasks (for ragas) and embedder."""
    from localeval.run import build_embedder

    embedder: Any = None
    tasks: list[dict[str, Any]] = []
    for name in sets:
        spec = SETS[name]
        for label_metric, all_rows in read_set(args.data, spec).items():
            rows = choose(all_rows, spec.design, limit_for(limits, name, label_metric),
                          args.seed, f"{name}/{label_metric}")
            metrics = tuple(m for m in METRICS[label_metric] if m in only)
            if not metrics:
                continue
            tasks.append({"set": name, "label_metric": label_metric, "spec": spec,
                          "rows": rows, "metrics": metrics})
            if embedder is None and "answer_relevancy" in metrics:
                embedder = build_embedder(args.embedder, store, "auto")
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
                report["runs"].append({
                    "set": name, "label_metric": label_metric, "verdicts": mode,
                    "rows": len(rows), "seconds": round(time.perf_counter() - t1, 1),
                    "usage": summary.get("usage"), "judge_health": summary.get("judge_health"),
                    "signature_line": summary.get("signature_line")})
                for m in metrics:
                    for res in measure_task(spec, label_metric, m, rows, scores,
                                            n_boot=args.n_boot, seed=args.seed):
                        report["results"].append({**res, "verdicts": mode})
                        print(f"  {res['statistic']}: {fmt(res['value'], res['ci95'])} "
                              f"({m}, n={res['n']}, unscored {res['rows_unscored']}/"
                              f"{res['rows']})", file=sys.stderr, flush=True)
                    for r in rows:
                        sc = scores[r["id"]][m]
                        report["scores"].append({
                            "set": name, "id": r["id"], "metric": m, "verdicts": mode,
                            "label": r["label"], "label_binary": r.get("label_binary"),
                            "pair_id": r.get("pair_id"), "value": sc.value,
                            "reason": sc.reason})
    return tasks, embedder


def _apart(args: argparse.Namespace) -> list[str]:
    """The apart install folders: ragas's first, then the server extras' if elsewhere."""
    return [p for p in (args.ragas_path, args.server_path) if p]


def _ragas_baseline(args: argparse.Namespace, ragas: Any, judge: Any, tasks: list[dict],
                    embedder: Any) -> tuple[dict[str, Any], int]:
    """The baseline's part of the report and the exit status (3 when the server failed)."""
    endpoint = judge_endpoint(args.judge, judge)
    if "url" not in endpoint:
        close = getattr(getattr(judge, "judge", judge), "close", None)
        if close is not None:
            close()  # the server loads the same GGUF: do not hold two copies in memory
    try:
        return run_baseline(tasks, endpoint=endpoint, ragas=ragas, apart=_apart(args),
                            embedder=embedder, call_timeout=args.ragas_call_timeout,
                            budget=args.ragas_timeout, start_timeout=args.server_timeout,
                            n_boot=args.n_boot, seed=args.seed, quiet=args.quiet), 0
    except ServerError as e:
        print(f"error: ragas baseline: {e}", file=sys.stderr)
        return {"version": ragas.__version__, "server": endpoint, "error": str(e),
                "results": [], "runs": [], "scores": []}, 3


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    sets = _split(args.sets, SETS, "--sets")
    modes = _split(args.verdicts, ("hard", "soft"), "--verdicts")
    only = _split(args.metrics, ALL_METRICS, "--metrics") if args.metrics else ALL_METRICS
    limits = parse_limit(args.limit)
    ragas = None
    if args.ragas_path:
        # Checked before any scoring: a missing install must not cost an hour of judging.
        try:
            ragas = load_ragas(args.ragas_path)
            if not args.judge.lower().startswith(("http://", "https://")):
                check_server_deps(_apart(args))
        except BaselineError as e:
            print(f"error: {e}", file=sys.stderr)
            return e.code

    from localeval.run import open_cache, build_judge
    from localeval.version import __version__

    t0 = time.perf_counter()
    store = open_cache(not args.no_cache)
    opts = {k: v for k, v in (("n_ctx", args.n_ctx), ("n_threads", args.threads),
                              ("chat_format", args.chat_format)) if v is not None}
    judge = build_judge(args.judge, store, opts)
    if judge is None:
        raise SystemExit(f"error: no judge found for {args.judge!r}")
    report: dict[str, Any] = {
        "judge": args.judge, "judge_name": judge.name, "verdicts": modes,
        "limit": limits, "metrics": list(only), "seed": args.seed, "n_boot": args.n_boot,
        "data": str(Path(args.data).resolve()), "sets": sets,
        "localeval_version": __version__, "git_commit": git_commit(ROOT),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"), "ragas": None,
        "runs": [], "results": [], "scores": []}
    tasks, embedder = _score_localeval(args, report, judge, store, sets, modes, only, limits)
    status = 0
    if ragas is not None:
        if args.out:  # localeval's figures are safe whatever happens to the baseline
            report["ragas"] = {"error": "it had not finished when this file was written "
                                        "(still running, or interrupted)", "results": []}
            _write(report, Path(args.out), to_markdown(report))
        try:
            report["ragas"], status = _ragas_baseline(args, ragas, judge, tasks, embedder)
        except BaselineError as e:
            print(f"error: {e}", file=sys.stderr)
            report["ragas"], status = {"error": str(e), "results": []}, e.code
        merge_baseline(report["results"], report["ragas"])
    report["seconds"] = round(time.perf_counter() - t0, 1)
    md = to_markdown(report)
    print(md)
    if args.out:
        _write(report, Path(args.out), md)
        print(f"wrote {Path(args.out) / 'quality.json'} and {Path(args.out) / 'quality.md'}",
              file=sys.stderr)
    return status


def _write(report: dict[str, Any], out: Path, md: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "quality.json").write_text(json.dumps(report, ensure_ascii=False, indent=1,
                                                 default=_json_default), encoding="utf-8")
    (out / "quality.md").write_text(md, encoding="utf-8")


def _json_default(o: Any) -> Any:
    """SetSpec (in the ragas tasks) and paths as plain JSON."""
    if isinstance(o, SetSpec):
        return o.name
    return str(o)


if __name__ == "__main__":
    sys.exit(main())
