"""The common options of every verb, declared once: parent parsers with one help text each.

Each function returns a fresh argparse parser (``add_help=False``) holding one
option (or one family: the judge's), which a verb passes to ``add_parser(...,
parents=[...])``; argparse copies its actions into the verb's parser. What
differs between verbs is a parameter (``-o``'s default and what it writes,
what ``--json`` prints), never a second wording. The choices of ``--verdicts``,
``--reasons``, ``--lang`` and ``--draft`` are the settings' own
(``config.VERDICT_MODES``...). ``tests/unit/test_floor_options.py`` checks that
no other module of ``localeval/cli`` declares these options by hand.

A fresh parser per call: argparse shares the parent's action objects with
the child, and ``set_defaults`` on a child writes into them.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

__all__ = ["out", "in_place", "check_in_place", "json_flag", "seed", "cache", "resume", "quiet", "judge", "reasons",
           "judge_spec", "lang", "embedder", "overwrite", "resamples", "attach", "group_of", "judge_options",
           "seed_int", "positive_int", "non_negative_float", "CACHE_DEFAULT"]

#: Where the cache is when ``--cache`` is not given (``cache.default_cache_path``).
CACHE_DEFAULT = "$LOCALEVAL_CACHE or ~/.cache/localeval/cache.sqlite"


def _parent(title: str | None = None) -> tuple[argparse.ArgumentParser, Any]:
    """A parent parser and where its options go: the group ``title`` (merged by argparse
    with the verb's group of that title), else the parser's own options."""
    p = argparse.ArgumentParser(add_help=False)
    return p, (p.add_argument_group(title) if title else p)


def attach(p: argparse.ArgumentParser, *parents: argparse.ArgumentParser) -> None:
    """Add the parents' options to a parser made already (``add_compare_arguments(p)``
    fills a parser it is given): what ``ArgumentParser(parents=...)`` does at creation,
    through the same argparse method, which has no public name."""
    for parent in parents:
        p._add_container_actions(parent)
        p.set_defaults(**parent._defaults)


def group_of(p: argparse.ArgumentParser, title: str) -> Any:
    """The verb's argument group ``title`` (one a parent brought in), else a new one: a
    verb adds its own options beside the shared ones under one heading."""
    for g in p._action_groups:  # argparse keeps no public map of a parser's groups
        if g.title == title:
            return g
    return p.add_argument_group(title)


# -- argparse types -------------------------------------------------------------------
def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (0 workers or threads cannot run)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def seed_int(text: str) -> int:
    """An argparse type: a seed, a whole number >= 0 (``config.check_seed``): numpy's
    generators refuse a negative one, which would fail only after the scoring."""
    from localeval.config import check_seed
    from localeval.errors import UsageError

    try:
        return check_seed(int(text), "--seed")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--seed ")) from None


def non_negative_float(text: str) -> float:
    """An argparse type: a finite number >= 0 (``float()`` alone accepts nan and inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


# -- the common options ---------------------------------------------------------------
def out(what: str, *, default: str | None = None, metavar: str = "DIR",
        required: bool = False, title: str | None = None) -> argparse.ArgumentParser:
    """``-o/--out``: where the verb writes ``what``; ``default`` (None: ``what`` says)."""
    p, g = _parent(title)
    tail = " (default: %(default)s)" if default is not None else ""
    g.add_argument("-o", "--out", default=default, required=required, metavar=metavar,
                   help=f"{what}{tail}")
    return p


def in_place(writes: str) -> argparse.ArgumentParser:
    """``-o`` of a verb that writes into its input run folder by design (``report``,
    ``explain``): accepted only as RUN_DIR itself (``check_in_place``), so a script that
    passes ``-o`` to every verb works and none is led to think the pages moved."""
    return out(f"must be RUN_DIR: {writes} go into the run's own folder, where its report "
               "reads them (another folder is refused: copy the run folder first)")


def check_in_place(args: argparse.Namespace, run_dir: str) -> None:
    """A UsageError (exit 2) when ``-o`` names another folder than ``run_dir``."""
    import os

    from localeval.errors import UsageError, printable

    given = getattr(args, "out", None)
    if given is None:
        return
    same = os.path.exists(given) and os.path.exists(run_dir) and os.path.samefile(given, run_dir)
    if not same and os.path.abspath(given) != os.path.abspath(run_dir):
        raise UsageError(f"-o {printable(given)}: 'localeval {args.command}' writes into the "
                         f"run folder {printable(run_dir)} (its report reads the files from "
                         "there); copy the run folder and run it on the copy instead")


def json_flag(what: str = "the result", *, title: str | None = None) -> argparse.ArgumentParser:
    """``--json``: the verb's result as JSON on stdout."""
    p, g = _parent(title)
    g.add_argument("--json", action="store_true",
                   help=f"print {what} as JSON on stdout (messages go to stderr)")
    return p


def seed(default: int | None = 0, *, env: bool = False, checked: bool = True,
         title: str | None = None) -> argparse.ArgumentParser:
    """``--seed``: a whole number >= 0; ``env``: the default is ``$LOCALEVAL_SEED``'s;
    ``checked=False``: the verb checks it (``config.check_seed``) with its other options,
    so a bad one is one ``localeval: error:`` line among theirs."""
    p, g = _parent(title)
    said = "$LOCALEVAL_SEED or 0" if env else "%(default)s"
    g.add_argument("--seed", type=seed_int if checked else int,
                   default=None if env else default,
                   help=f"random seed, a whole number >= 0 (default: {said})")
    return p


def cache(*, no_cache: bool = True, title: str | None = None) -> argparse.ArgumentParser:
    """``--cache FILE`` and (``no_cache``) ``--no-cache``: the judge and embedding cache."""
    p, g = _parent(title)
    g.add_argument("--cache", metavar="FILE",
                   help=f"the judge and embedding cache file (default: {CACHE_DEFAULT})")
    if no_cache:
        g.add_argument("--no-cache", action="store_true",
                       help="do not read or write the cache")
    return p


def resume(what: str, *, title: str | None = None) -> argparse.ArgumentParser:
    """``--no-resume`` (``--no-cache``, its first spelling, still works): start over
    instead of keeping what an earlier run of the same command wrote."""
    p, g = _parent(title)
    g.add_argument("--no-resume", "--no-cache", dest="no_resume", action="store_true",
                   help=f"do not resume: {what} (--no-cache is the same option)")
    return p


def quiet(what: str = "", *, title: str | None = None) -> argparse.ArgumentParser:
    """``--quiet``: no progress display; ``what``: what else it leaves out."""
    p, g = _parent(title)
    g.add_argument("--quiet", action="store_true",
                   help="no progress bar, and no progress line in a pipe or CI log"
                        + (f"; {what}" if what else ""))
    return p


def judge(verdicts: str = "$LOCALEVAL_VERDICTS or hard", *,
          checker: bool = False) -> argparse.ArgumentParser:
    """The options that name and load a judge (group "judge"); ``verdicts``: what
    ``--verdicts`` defaults to for this verb; ``checker``: also ``--checker`` (instead of
    ``--judge``: a checker model scores faithfulness, docs/checkers.md; read with
    ``judge_spec``). A verb adds its own judge options to the group with
    ``group_of(parser, "judge")``."""
    from localeval.config import DRAFT_MODES, VERDICT_MODES

    p, g = _parent("judge")
    # not an argparse mutually exclusive group: copied from a parent parser it leaves the
    # "judge" heading of --help (Python 3.11); judge_spec refuses the two together
    if checker:
        g.add_argument("--checker", metavar="NAME|DIR",
                         help="score faithfulness with a checker model instead of a judge: "
                              "a name from 'localeval models list' or a checker folder "
                              "(MiniCheck, HHEM, LettuceDetect; no generation, "
                              "docs/checkers.md)")
        g.add_argument("--trust-remote-code", action="store_true",
                       help="let a checker folder's own Python code run (never by default)")
    g.add_argument("--judge", help="'demo' (the small bundled demo judge: shows the pipeline, "
                   "its scores are not evidence), a name from 'localeval models list' (e.g. "
                   "qwen2.5-7b-instruct-q4_k_m, once fetched into models/), a GGUF file, or "
                   "http(s)://host:port/v1 (several comma-separated URLs: a pool of server "
                   "replicas) (default: the single GGUF in models/, else judge metrics are "
                   "unscored)")
    g.add_argument("--judge-concurrency", type=positive_int, metavar="N",
                   help="calls in flight per judge server of a URL pool (default: 4)")
    g.add_argument("--judge-model", help="model name sent to an HTTP judge")
    g.add_argument("--judge-timeout", type=float, metavar="SECONDS",
                   help="seconds to wait for each HTTP judge request; a timed-out request "
                        "is retried once (default: 60)")
    g.add_argument("--n-ctx", type=positive_int, help="judge context window (default: from "
                   "the model, capped at 8192)")
    g.add_argument("--n-gpu-layers", type=int, help="layers to offload to a GPU "
                   "(default: all when llama.cpp has GPU support)")
    g.add_argument("--threads", type=positive_int, help="CPU threads for the judge")
    g.add_argument("--chat-format", help="chat format when the GGUF has no template")
    g.add_argument("--draft", choices=DRAFT_MODES,
                   help="in-process judge: guess the next tokens from the prompt and verify "
                        "them in one decode (prompt lookup; same outputs, fewer decodes). "
                        "auto: as many guesses as the measured decode times say pay, else one; "
                        "none: no guesses (default: auto)")
    g.add_argument("--verdicts", choices=VERDICT_MODES,
                   help="soft: binary verdicts become P(yes) from the judge's logits "
                        f"(default: {verdicts})")
    return p


def reasons(what: str = "", *, title: str | None = "judge") -> argparse.ArgumentParser:
    """``--reasons``: what the judge writes before each binary verdict."""
    from localeval.config import REASON_MODES

    p, g = _parent(title)
    g.add_argument("--reasons", choices=REASON_MODES,
                   help="what the judge writes before each binary verdict: full (a reason, "
                        "as ragas's prompts), short (a few words) or none (the verdict alone: "
                        "about half the judge's tokens; docs/judge.md, Reasons)"
                        + (f"; {what}" if what else "")
                        + " (default: $LOCALEVAL_REASONS or full)")
    return p


def lang(*, title: str | None = None) -> argparse.ArgumentParser:
    """``--lang``: the language of prompts, sentence splitting and tokenising."""
    from localeval.config import LANG_CHOICES

    p, g = _parent(title)
    g.add_argument("--lang", choices=LANG_CHOICES,
                   help="language for prompts, sentence splitting and tokenising "
                        "(default: $LOCALEVAL_LANG or auto)")
    return p


def embedder(default: str, *, none: str = "",
             title: str | None = None) -> argparse.ArgumentParser:
    """``--embedder``: a sentence-transformers folder or a model name in models/;
    ``none``: what 'none' means for this verb (empty: not accepted by name)."""
    p, g = _parent(title)
    g.add_argument("--embedder", help="sentence-transformers directory or model name in "
                   "models/" + (f", or 'none' ({none})" if none else "")
                   + f" (default: {default})")
    return p


def overwrite(what: str, *, title: str | None = None) -> argparse.ArgumentParser:
    """``--overwrite``: replace what the output holds even when made with other settings."""
    p, g = _parent(title)
    g.add_argument("--overwrite", action="store_true",
                   help=f"replace {what} even when its data or settings differ (without it, "
                        "such a result is kept and this command refused)")
    return p


def resamples(default: int | None, *, n_boot: bool = False, what: str = "",
              title: str | None = None) -> argparse.ArgumentParser:
    """``--resamples`` (and ``--n-boot``, the first spelling of compare and validate, whose
    analyses take 0, no intervals). The verb checks the count (``config.check_resamples``)
    with its other options, so a bad one is one ``localeval: error:`` line among theirs."""
    p, g = _parent(title)
    names = ["--resamples"] + (["--n-boot"] if n_boot else [])
    span = "0 (no intervals) to 100000" if n_boot else "100 to 1000000"
    g.add_argument(*names, dest="resamples", type=int, default=default, metavar="N",
                   help="bootstrap resamples" + (f", {what}" if what else "")
                        + f" ({span}; default: {default or 9999})"
                        + ("; --n-boot is the same option" if n_boot else ""))
    return p


def judge_spec(args: argparse.Namespace) -> Any:
    """The judge a verb with ``judge(checker=True)`` was given: ``--judge`` as given, or
    ``--checker X`` as the judge spec ``checker:X`` (``localeval.judge.checker_spec``)."""
    named = getattr(args, "checker", None)
    if not named:
        return args.judge
    if args.judge is not None:
        from localeval.errors import UsageError

        raise UsageError("--checker and --judge name two judges: a checker scores "
                         "faithfulness alone, so give one (docs/checkers.md)")
    from localeval.judge import checker_spec

    return checker_spec(named)


def judge_options(args: argparse.Namespace) -> dict[str, Any]:
    """The judge options given on the command line (for ``load_judge``)."""
    return {k: v for k, v in {
        "n_ctx": args.n_ctx, "n_gpu_layers": args.n_gpu_layers, "n_threads": args.threads,
        "chat_format": args.chat_format, "judge_model": args.judge_model,
        "per_endpoint_concurrency": args.judge_concurrency,
        "timeout": getattr(args, "judge_timeout", None),
        "draft": getattr(args, "draft", None),
        # a checker's (--checker): the device is the run's --device
        "trust_remote_code": getattr(args, "trust_remote_code", None) or None,
        "checker_device": getattr(args, "device", None) if getattr(args, "checker", None)
        else None,
        # `localeval run` only; "auto": load_judge picks from the hardware
        "parallel": (args.parallel if args.parallel is not None else "auto")
        if hasattr(args, "parallel") else None}.items()
        if v is not None}
