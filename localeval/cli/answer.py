"""``localeval answer DATA --pipeline module:function -o FILLED.jsonl``: fill a test set's
answers, retrieved contexts and ids from the user's own pipeline, offline.

The work is :func:`localeval.pipeline.answer`; this module parses the arguments
and prints what was done. Exit codes: 0 done (some rows may have failed: they
carry ``pipeline_error`` and a rerun asks them again), 2 bad input or a bad
``--pipeline``, 3 every row failed (the pipeline could not answer at all: a
server down, a missing index), 130 interrupted (the rows done are kept; the same
command resumes).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from localeval.cli import options as opt
from localeval.cli.console import error, say, say_json, shown
from localeval.cli.options import positive_int

if TYPE_CHECKING:
    from localeval.pipeline import AnswerResult

__all__ = ["add_answer_parser", "cmd_answer"]

#: Failed rows listed by name after the summary; the rest are counted.
SHOWN_FAILURES = 5


def add_answer_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval answer DATA --pipeline MODULE:FUNCTION -o FILLED.jsonl``."""
    p = sub.add_parser(
        "answer", help="fill a test set's answers and contexts from your own pipeline",
        description="Call your pipeline function with each row's question and write the rows "
                    "with its answer, contexts and retrieved_ids to a JSONL file for "
                    "'localeval run'. A row whose call raised is kept with pipeline_error. "
                    "Running the same command again resumes: rows already answered in the "
                    "output are not asked again. Exit codes: 0 done, 2 bad input or "
                    "--pipeline, 3 every row failed, 130 interrupted (the rows done are kept).",
        parents=[opt.out("the JSONL file to write (and to resume from when it exists)",
                         metavar="FILLED.jsonl", required=True),
                 opt.resume("ask every row again and replace the output file"),
                 opt.quiet("only the summary"), opt.json_flag("what was done")])
    p.add_argument("data", help="the test set: JSONL, JSON, CSV, TSV or Parquet with a question "
                                "per row (and a reference, relevant_ids...)")
    p.add_argument("--pipeline", required=True, metavar="MODULE:FUNCTION",
                   help="your function, imported from the current directory or PYTHONPATH "
                        "(my_rag:answer) or from a file (path/to/rag.py:answer); it is called "
                        "as function(question), or function(question, row=row) when it takes "
                        "row, and returns the answer or a dict/object with answer, contexts "
                        "and retrieved_ids (docs/test-sets.md)")
    p.add_argument("--parallel", type=positive_int, default=1, metavar="N",
                   help="threads calling the pipeline at once; it must be thread-safe "
                        "(default: %(default)s). Rows are written in input order either way")
    p.add_argument("--limit", type=positive_int, metavar="N",
                   help="answer only the first N rows (try a few first)")
    p.add_argument("--columns", action="append", metavar="FIELD=COLUMN",
                   help="map your column names, e.g. --columns question=query_text "
                        "(repeatable); the output keeps your names")
    p.set_defaults(func=cmd_answer)


def cmd_answer(args: argparse.Namespace) -> int:
    from localeval.pipeline import answer

    res = answer(args.data, args.pipeline, args.out, parallel=args.parallel, limit=args.limit,
                 columns=args.columns, cache=not args.no_resume,
                 progress=False if (args.quiet or args.json) else None)
    if args.json:
        _print_json(res)
        return 3 if res.all_failed else 0
    say(_summary(res))
    for f in res.failures[:SHOWN_FAILURES]:
        where = f"{res.unit} {f.row}" if f.row is not None else "row"
        # the id and the exception text are the user's: shown, one line each
        say(f"  {where} (id {shown(f.id)}): {shown(f.error)}")
    if res.failed > SHOWN_FAILURES:
        say(f"  ... and {res.failed - SHOWN_FAILURES} more: see pipeline_error in {res.out}")
    if res.all_failed:
        error(f"every row failed in the pipeline {res.pipeline}; nothing to evaluate. Fix "
              "the cause above and run the same command again")
        return 3
    if res.failed:
        rows = "1 row has" if res.failed == 1 else f"{res.failed} rows have"
        say(f"{rows} no answer (pipeline_error): run the same command again to ask them "
            "again; 'localeval run' refuses rows without an answer")
    else:
        say(f"next: localeval run {res.out} -o RUN_DIR")
    return 0


def _print_json(res: AnswerResult) -> None:
    """``--json``: what was done, and each failed row (its id and error), on stdout."""
    from localeval.results import dumps_strict

    say_json(dumps_strict({
        "out": str(res.out) if res.out else None, "pipeline": res.pipeline, "rows": len(res),
        "answered": res.answered, "resumed": res.resumed, "failed": res.failed,
        "failures": [{res.unit: f.row, "id": f.id, "error": f.error} for f in res.failures]},
        indent=2))


def _summary(res: AnswerResult) -> str:
    parts = [f"{res.answered} answered"]
    if res.resumed:
        parts.append(f"{res.resumed} kept from the earlier run")
    if res.failed:
        parts.append(f"{res.failed} failed")
    return f"localeval answer: {len(res)} rows to {res.out} ({', '.join(parts)})"
