"""The ``localeval`` command: the top parser, dispatch, and errors turned into exit codes.

Each command group lives in its own module (``run``, ``metrics``, ``agreement``,
``models``, ``judge``, ``report``, ``cache``, ``runs``, ``history``) with a function that adds its subparser and
a ``cmd_*`` function that runs it. Heavy modules are imported inside those
functions so ``localeval --help`` starts fast. Errors become one line on
stderr and an exit code (2 usage/data, 3 model, 1 gate failed); ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings
from typing import Any, Sequence

from localeval.cli.agreement import add_compare_parser, add_validate_parser
from localeval.cli.answer import add_answer_parser
from localeval.cli.cache import add_cache_parser
from localeval.cli.console import error, say, warn
from localeval.cli.estimate import add_estimate_parser, add_label_sheet_parser
from localeval.cli.example import example_path  # re-exported: tests import it from here
from localeval.cli.explain import add_explain_parser
from localeval.cli.generate import add_generate_parser
from localeval.cli.history import add_history_parser
from localeval.cli.judge import add_judge_parser
from localeval.cli.metrics import add_metrics_parser
from localeval.cli.models import add_models_parser
from localeval.cli.rank import add_rank_parser
from localeval.cli.report import add_report_parser
from localeval.cli.run import add_retrieval_parser, add_run_parser
from localeval.cli.runs import add_runs_parser
from localeval.cli.simulate import add_simulate_parser
from localeval.cli.versions import add_diff_parser

__all__ = ["main", "build_parser", "example_path"]


def _version() -> str:
    from localeval.version import __version__

    return __version__


def build_parser() -> argparse.ArgumentParser:
    """The whole ``localeval`` parser; each subcommand's ``func`` default runs it."""
    import textwrap

    from localeval.cli.verb_groups import Verbs, grouped_help

    # Raw: the epilog is the verbs under their tasks, laid out by grouped_help
    p = argparse.ArgumentParser(
        prog="localeval", formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [-h] [--version] [--debug] COMMAND ...",
        description=textwrap.fill(
            "Offline RAG evaluation: RAGAS-family metrics with a local GGUF judge, "
            "local embeddings, retrieval and text metrics. Nothing leaves this machine.", 78),
    )
    p.add_argument("--version", action="version", version=f"localeval {_version()}")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    # the flat list argparse would print is hidden: the epilog lists the verbs by task
    sub = Verbs(p.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS,
                                   prog=p.prog))
    # the order the verbs are added (their order within a task is verb_groups.TASKS')
    for add in (add_run_parser, add_answer_parser, add_generate_parser, add_simulate_parser,
                add_metrics_parser,
                add_retrieval_parser, add_diff_parser, add_rank_parser, add_runs_parser,
                add_history_parser, add_explain_parser,
                add_compare_parser,
                add_validate_parser,
                add_label_sheet_parser, add_estimate_parser, add_models_parser, add_judge_parser,
                add_report_parser, add_cache_parser):
        add(sub)  # type: ignore[arg-type]  # Verbs: add_parser is all they call
    p.epilog = grouped_help(sub.helps)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: sys.argv[1:]); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    from localeval.errors import LocalevalError

    previous = _sigterm_as_interrupt()
    shown = warnings.showwarning
    warnings.showwarning = _warning_printer(shown)
    try:
        return int(args.func(args) or 0)
    except LocalevalError as e:
        if args.debug:
            raise
        error(e)
        return e.exit_code
    except OSError as e:
        # The last net for an operating-system failure no check foresaw (a device
        # error, a file vanishing mid-run): one line naming the file, exit 3.
        if args.debug:
            raise
        from localeval.errors import os_reason

        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        error(f"{where}{os_reason(e)}")
        return 3
    except KeyboardInterrupt:
        say(_interrupted(args), err=True)
        return 130
    finally:
        warnings.showwarning = shown
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _interrupted(args: argparse.Namespace) -> str:
    """What Ctrl-C (or SIGTERM) leaves behind, for the command that was running.

    ``run`` resumes: its finished samples are in results.jsonl and the judge's
    answers in the cache; so does ``answer``, from the rows it wrote. Every other
    command is simply run again.
    """
    if args.command == "answer":
        return (f"localeval: interrupted; the rows done are in {args.out}. Run the same "
                "command again to resume: answered rows are not asked again.")
    if args.command == "generate":
        return (f"localeval: interrupted; the questions written so far are in "
                f"{args.out}/candidates.partial.jsonl. Run the same command again to go on: "
                "they are not asked again.")
    if args.command == "simulate":
        return (f"localeval: interrupted; the conversations finished so far are in "
                f"{args.out}/conversations.partial.jsonl. Run the same command again to go "
                "on: they are not simulated again.")
    if args.command != "run":
        return (f"localeval: interrupted; 'localeval {args.command}' stopped before it "
                "finished. It has nothing to resume: run it again.")
    out = getattr(args, "out", None)
    where = f"; finished samples are in {out}/results.jsonl" if out else ""
    return (f"localeval: interrupted{where}. Run the same command again to resume "
            "from the cache.")


def _warning_printer(other: Any) -> Any:
    """``warnings.showwarning`` printing a ``LocalevalWarning`` (a torn last line skipped...)
    as ``localeval: warning: ...``; any other warning goes to ``other`` as before."""
    from localeval.errors import LocalevalWarning

    def show(message: Any, category: type[Warning], *rest: Any, **kw: Any) -> None:
        if issubclass(category, LocalevalWarning):
            warn(message)
        else:
            other(message, category, *rest, **kw)
    return show


def _sigterm_as_interrupt() -> Any:
    """SIGTERM (``kill``, a CI job's timeout, ``docker stop``) ends a run as Ctrl-C does.

    The run's ``finally`` then writes the summary of the finished samples, and the
    exit code is 130, as for SIGINT. Only this process: a worker process started
    from it keeps the default (it is told to stop by its parent). Returns the
    handler it replaced (None when it could not install one).
    """
    main_pid = os.getpid()

    def on_term(signum: int, frame: Any) -> None:
        if os.getpid() != main_pid:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread (main() called from a thread): leave it
        return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
