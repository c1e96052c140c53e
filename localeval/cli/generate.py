"""``localeval generate DOCS -n N -o OUT``: a test set written by the local judge from your
documents (:func:`localeval.generate.generate_testset`; docs/test-sets.md).

Exit codes: 0 written (perhaps fewer rows than asked: the reason counts are printed),
2 bad input, an empty corpus or an unwritable output folder, 3 no usable judge.
"""

from __future__ import annotations

import argparse

from localeval.cli import options as opt
from localeval.cli.console import note, say, say_json
from localeval.cli.options import judge_options, positive_int

__all__ = ["add_generate_parser", "cmd_generate"]


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    return value


def add_generate_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval generate DOCS -n N -o OUT``."""
    p = sub.add_parser(
        "generate", help="write a test set from your documents with the local judge",
        description="Read DOCS (a folder of text, Markdown and HTML files, one such file, or a "
                    "JSONL/CSV corpus), cut it into chunks, have the judge write questions and "
                    "reference answers, filter them, and write OUT/testset.jsonl and .csv, "
                    "dropped.jsonl, qrels.txt, chunks.jsonl, summary.json, summary.md and testset.html "
                    "(a page to read the set before trusting it). Interrupted, the "
                    "same command asks only for the questions not written yet. Exit codes: 0 "
                    "written (perhaps fewer rows than asked, with the reasons), 2 bad input or "
                    "output folder, 3 no usable judge, 130 interrupted.",
        parents=[opt.out("the output folder", metavar="OUT", required=True),
                 opt.overwrite("a test set OUT holds"), opt.judge(),
                 opt.embedder("the bundled embedder", none="related chunks by shared rare "
                              "words, round trip by BM25"),
                 opt.seed(0), opt.quiet(), opt.cache(), opt.json_flag("what was written")])
    p.add_argument("docs", help="the documents: a folder, a file, or a JSONL/CSV corpus")
    p.add_argument("-n", type=_count, required=True, metavar="N", help="questions to write")
    p.add_argument("--device", help="auto, cpu, cuda, mps (default: $LOCALEVAL_DEVICE or auto)")
    p.add_argument("--distribution", metavar="single=0.5,multi=0.25,abstract=0.25",
                   help="shares of the three kinds of question (default: 50/25/25)")
    p.add_argument("--k", type=positive_int, default=5,
                   help="round trip: a source chunk must rank in the top K (default: %(default)s)")
    p.add_argument("--max-chars", type=positive_int, default=1500,
                   help="longest chunk in characters (default: %(default)s)")
    p.add_argument("--parallel", type=positive_int, metavar="N",
                   help="questions the in-process judge writes at once (as 'localeval run "
                        "--parallel'; default: 8 with a GPU or 8+ cores, else 1); a judge "
                        "server pool is asked as many at once as it serves")
    p.set_defaults(func=cmd_generate)


def cmd_generate(args: argparse.Namespace) -> int:
    from localeval.errors import UsageError
    from localeval.generate import generate_testset

    if args.n < 1:
        raise UsageError(f"-n must be 1 or more questions, not {args.n}")

    res = generate_testset(
        args.docs, args.n, args.out, judge=args.judge, embedder=args.embedder, seed=args.seed,
        distribution=args.distribution, k=args.k, max_chars=args.max_chars,
        judge_options=judge_options(args), device=args.device,
        cache=False if args.no_cache else (args.cache or True), on_note=note,
        parallel=args.parallel if args.parallel is not None else "auto",
        progress=False if (args.quiet or args.json) else None,
        overwrite=bool(getattr(args, "overwrite", False)))
    short = res.shortfall()
    if args.json:
        from localeval.results import dumps_strict

        say_json(dumps_strict({"out": str(res.out), "testset": str(res.out / "testset.jsonl"),
                               "kept": len(res.kept), "dropped": len(res.dropped),
                               "shortfall": short or None, "generator": list(res.health)},
                              indent=2))
        return 0
    say(f"localeval generate: {len(res.kept)} questions to {res.out / 'testset.jsonl'} "
        f"({len(res.dropped)} dropped)")
    if short:
        note(short)
    for line in res.health:
        note(line, kind="generator")
    if res.kept:
        say(f"next: localeval answer {res.out / 'testset.jsonl'} --pipeline MODULE:FUNCTION "
            "-o answered.jsonl")
    return 0
