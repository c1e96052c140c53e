"""Measure ``localeval generate``: the demo judge's test set and the loop it feeds; the judge-free parts at scale.

    .venv/bin/python scripts/bench_generate.py [--judge demo] [--docs PATH] [-n 20]
        [--embedder default|none|PATH] [--cache FILE] [--k 5] [--seed 0] [--out DIR]
        [--metrics answer_correctness,context_recall,rougeL,hit_rate@5,mrr] [--json FILE]
    .venv/bin/python scripts/bench_generate.py --scale [--scale-docs 1000] [--max-chars 250]
        [--embedder default|none|PATH] [--trace-memory] [--json FILE]

Default part: ``generate_testset`` on the bundled example corpus (or ``--docs``) with
the demo judge and a fresh cache (in ``--out``, a temporary folder unless given, or
``--cache``); prints rows asked, written and kept, drops by reason, judge calls per
candidate (synthesis and filters together: the target is at most 5 on average), judge
and wall seconds per kept row, the round-trip hit rate and each phase's time. Then the
loop a user runs on the kept rows, each step through the ``localeval`` command
(``generate_loop.py``, beside this file): ``answer`` with an oracle pipeline (the
reference and its chunks) and a bad one (an unrelated chunk and its first sentence),
``run`` on both (its judge check included unless ``--no-judge-check``), ``diff``, and
``retrieval`` of both pipelines' retrieved ids (written as TREC runs) against
qrels.txt. The oracle's retrieval must score 1; anything else means ids do not line up.

``--scale`` needs no judge: ``bench_generate_filters``'s 1,000 documents about made-up
products, written as .txt/.md/.html files, read, chunked, and ~2,000 questions
(one per chunk) through ``filter_candidates`` (degenerate, near-duplicates,
round trip; the embedder embeds every chunk). Prints each step's time (the target:
under 60 s on 2 cores) and peak memory against the corpus text's size, to show that
memory follows the chunk index rather than copies of the text.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["main", "generate_figures", "scale"]

#: Judge calls per candidate the generator should stay within, on average.
CALLS_TARGET = 5.0
#: Seconds the judge-free steps should take for 1,000 documents on 2 cores.
SCALE_TARGET_S = 60.0


# -- the demo part --------------------------------------------------------------------

def _rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def generate_figures(summary: dict[str, Any], rows: list[dict[str, Any]],
                     wall: float) -> dict[str, Any]:
    """The figures a reader asks of a generated test set, from its summary and rows.

    ``rows`` are the kept and dropped rows together (their ``checks`` hold the
    round-trip ranks). Judge calls count cache hits as calls (``CachedJudge``), so a
    fresh cache is what makes calls per candidate the judge's real work.
    """
    use = summary.get("usage") or {}
    syn, fil = use.get("synthesis") or {}, use.get("filters") or {}
    written, kept = summary["written"], summary["kept"]
    calls = syn.get("calls", 0) + fil.get("calls", 0)
    judge_s = syn.get("seconds", 0.0) + fil.get("seconds", 0.0)
    rt = next((s for s in summary["stages"] if s["name"] == "round_trip"), None)
    ranks = [r["checks"]["round_trip_rank"] for r in rows
             if "round_trip_rank" in (r.get("checks") or {})]
    per_candidate = calls / written if written else None
    return {
        "asked": summary["asked"], "written": written, "kept": kept,
        "kept_share": kept / summary["asked"],
        "dropped_by_reason": summary["dropped_by_reason"],
        "kept_by_synthesizer": summary.get("kept_by_synthesizer"),
        "judge_calls": {"synthesis": syn.get("calls"), "filters": fil.get("calls"),
                        "cache_hits": syn.get("cache_hits", 0) + fil.get("cache_hits", 0),
                        "per_candidate": per_candidate,
                        "target_holds": per_candidate is not None
                        and per_candidate <= CALLS_TARGET},
        "tokens": {"prompt": syn.get("prompt_tokens", 0) + fil.get("prompt_tokens", 0),
                   "generated": syn.get("generated_tokens", 0) + fil.get("generated_tokens", 0)},
        "judge_seconds_per_kept": judge_s / kept if kept else None,
        "wall_seconds_per_kept": wall / kept if kept else None,
        "round_trip": None if rt is None else {
            "method": rt["note"], "checked": rt["checked"], "kept": rt["checked"] - rt["dropped"],
            "hit_rate": (rt["checked"] - rt["dropped"]) / rt["checked"] if rt["checked"] else None,
            "rank_1": sum(1 for r in ranks if r == 1)},
        "phases_s": {"setup (read, chunk, load models, write)":
                     wall - syn.get("wall_seconds", 0) - fil.get("wall_seconds", 0),
                     "synthesis": syn.get("wall_seconds"), "filters": fil.get("wall_seconds"),
                     **{f"  {s['name']}": s["seconds"] for s in summary["stages"]}},
        "generate_wall_s": wall,
    }


def demo(args: argparse.Namespace) -> dict[str, Any]:
    """Generate with the judge, print the figures, then run the loop on the kept rows."""
    import localeval

    docs = args.docs or str(Path(localeval.__file__).parent / "data" / "example_corpus.jsonl")
    keep = args.out is not None
    work = Path(args.out) if keep else Path(tempfile.mkdtemp(prefix="bench_generate_"))
    work.mkdir(parents=True, exist_ok=True)
    cache = Path(args.cache) if args.cache else work / "cache.sqlite"
    embedder: Any = None if args.embedder == "default" else args.embedder
    t = time.perf_counter()
    res = localeval.generate_testset(docs, args.n, work / "testset", judge=args.judge,
                                     embedder=embedder, seed=args.seed, k=args.k, cache=str(cache))
    wall = time.perf_counter() - t
    rows = _rows(work / "testset" / "testset.jsonl") + _rows(work / "testset" / "dropped.jsonl")
    fig = generate_figures(res.summary, rows, wall)
    fig.update(docs=docs, judge=args.judge, embedder=args.embedder, work=str(work),
               health=list(res.health))
    _print_generate(fig)
    if res.kept:
        from generate_loop import print_loop, run_loop

        fig["loop"] = run_loop(work / "testset", work, judge=args.judge, metrics=args.metrics,
                               cache=cache, judge_check=not args.no_judge_check)
        print_loop(fig["loop"])
    else:
        print("loop: skipped, no row kept (see dropped.jsonl in the work folder: --out DIR)")
    return fig


def _print_generate(f: dict[str, Any]) -> None:
    jc, rt = f["judge_calls"], f["round_trip"] or {}
    per = jc["per_candidate"]
    print(f"generate: {f['docs']} -n {f['asked']}, judge {f['judge']}, embedder {f['embedder']}")
    print(f"  rows asked {f['asked']}, written {f['written']}, kept {f['kept']} "
          f"({100 * f['kept_share']:.0f}%); kept by synthesizer {f['kept_by_synthesizer']}")
    print(f"  dropped by reason: {f['dropped_by_reason'] or 'none'}")
    print(f"  judge calls: synthesis {jc['synthesis']}, filters {jc['filters']}, cache hits "
          f"{jc['cache_hits']}; per candidate "
          + (f"{per:.2f} (target <= {CALLS_TARGET:g}: "
             f"{'holds' if jc['target_holds'] else 'MISSED'})" if per is not None else "-"))
    for label, key in (("judge", "judge_seconds_per_kept"), ("wall", "wall_seconds_per_kept")):
        v = f[key]
        print(f"  {label} seconds per kept row: " + (f"{v:.1f}" if v is not None else "- (none kept)"))
    if rt:
        hr = rt["hit_rate"]
        print(f"  round trip ({rt['method']}): {rt['kept']} of {rt['checked']} candidates' own "
              f"chunk in the top k" + (f" ({100 * hr:.0f}%)" if hr is not None else "")
              + f", rank 1 for {rt['rank_1']}")
    for name, s in f["phases_s"].items():
        print(f"  {name:40s} {s:8.2f} s" if s is not None else f"  {name:40s} -")
    for line in f["health"]:
        print(f"  generator: {line}")


# -- the scale part, no judge -------------------------------------------------------

def _rss_mib() -> float:
    """This process's resident memory now (Linux), in MiB; the peak where /proc is absent."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_files(folder: Path, corpus: Any) -> int:
    """The documents as files, a third each .txt, .md and .html (as bench_corpus.py writes them)."""
    for i, d in enumerate(corpus.documents):
        stem, body = folder / Path(d.id).stem, d.text
        if i % 3 == 1:
            stem.with_suffix(".md").write_text(f"# Product sheet {i}\n\n{body}", encoding="utf-8")
        elif i % 3 == 2:
            paras = "".join(f"<p>{p}</p>\n" for p in body.split("\n\n"))
            stem.with_suffix(".html").write_text(
                f"<html><head><title>Sheet {i}</title></head><body>{paras}</body></html>",
                encoding="utf-8")
        else:
            stem.with_suffix(".txt").write_text(body, encoding="utf-8")
    return sum(p.stat().st_size for p in folder.iterdir())


def scale(args: argparse.Namespace) -> dict[str, Any]:
    """Read, chunk and filter (round trip included) ~2,000 questions; time and memory each step.

    Memory is read three ways: RSS after each step (the model and torch included),
    the peak RSS, and with ``--trace-memory`` tracemalloc's peak within each step
    (Python objects and numpy arrays; not torch's own buffers), set against the size
    of the corpus text, of the chunks' text and of the chunk vectors.
    """
    import random
    import tracemalloc

    from bench_generate_filters import make_candidates, make_corpus

    from localeval.cache import Cache
    from localeval.corpus import chunk_documents, read_corpus
    from localeval.generate import filter_candidates
    from localeval.run import build_embedder

    built, _questions = make_corpus(args.scale_docs, args.seed)
    times: dict[str, float] = {}
    mem: dict[str, dict[str, float]] = {}
    trace = args.trace_memory

    def step(name: str, fn: Any) -> Any:
        if trace:
            tracemalloc.reset_peak()
        t = time.perf_counter()
        out = fn()
        times[name] = time.perf_counter() - t
        mem[name] = {"rss_mib": _rss_mib()}
        if trace:
            now, peak = tracemalloc.get_traced_memory()
            mem[name].update(traced_mib=now / 2**20, traced_peak_mib=peak / 2**20)
        return out

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        disk = write_files(folder, built)
        del built
        # one pass over two documents first: the lazy imports (pysbd, scipy, the
        # tokenisers) would otherwise count as the first step's time and memory
        warm, warm_q = make_corpus(2, args.seed + 1)
        warm_chunks = chunk_documents(warm, max_chars=args.max_chars)
        filter_candidates(make_candidates(warm_chunks, warm_q, random.Random(0)), warm_chunks)
        read_corpus(folder / next(p.name for p in folder.iterdir()))
        base_rss = _rss_mib()
        if trace:
            tracemalloc.start()
        corpus = step("read_corpus", lambda: read_corpus(folder))
        chunks = step("chunk_documents", lambda: chunk_documents(corpus, max_chars=args.max_chars))
        _, questions = make_corpus(args.scale_docs, args.seed)
        cands = step("make questions", lambda: make_candidates(chunks, questions,
                                                               random.Random(args.seed)))
        emb = None
        if args.embedder != "none":
            spec = None if args.embedder == "default" else args.embedder
            emb = step("load embedder", lambda: build_embedder(spec, Cache(Path(tmp) / "c.sqlite"),
                                                               "cpu"))
        res = step("filter_candidates", lambda: filter_candidates(cands, chunks, embedder=emb,
                                                                  k=args.k))
    if trace:
        tracemalloc.stop()
    text_chars = sum(len(d.text) for d in corpus.documents)
    text_mib = sum(len(d.text.encode("utf-8")) for d in corpus.documents) / 2**20
    chunk_mib = sum(len(c.text.encode("utf-8")) for c in chunks) / 2**20
    dim = emb.embed(["x"]).shape[1] if emb is not None else 0
    rt = res.stage("round_trip")
    work = sum(v for k, v in times.items() if k != "load embedder")
    fig = {
        "documents": len(corpus.documents), "disk_mib": disk / 2**20, "text_chars": text_chars,
        "text_mib": text_mib, "chunks": len(chunks), "chunk_text_mib": chunk_mib,
        "questions": len(cands), "embedder": getattr(emb, "name", "none (BM25)"),
        "chunk_vectors_mib": len(chunks) * dim * 4 / 2**20,
        "seconds": times, "stages_s": {s.name: s.seconds for s in res.stages},
        "seconds_without_model_load": work, "target_holds": work < SCALE_TARGET_S,
        "round_trip": {"method": rt.note, "checked": rt.checked, "kept": rt.checked - rt.dropped},
        "kept": len(res.kept), "dropped_by_reason": dict(res.counts),
        "memory": mem, "rss_before_mib": base_rss,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    _print_scale(fig)
    return fig


def _print_scale(f: dict[str, Any]) -> None:
    print(f"{f['documents']} documents ({f['disk_mib']:.2f} MiB on disk, {f['text_chars']:,} "
          f"characters, {f['text_mib']:.2f} MiB of text) -> {f['chunks']} chunks "
          f"({f['chunk_text_mib']:.2f} MiB), {f['questions']} questions; embedder {f['embedder']}")
    print(f"  {'step':20s} {'seconds':>8s} {'RSS MiB':>8s} {'traced':>8s} {'peak':>8s}")
    print(f"  {'(before)':20s} {'':8s} {f['rss_before_mib']:8.0f}")
    for name, s in f["seconds"].items():
        m = f["memory"][name]
        tr = (f"{m['traced_mib']:8.1f} {m['traced_peak_mib']:8.1f}"
              if "traced_mib" in m else "")
        print(f"  {name:20s} {s:8.2f} {m['rss_mib']:8.0f} {tr}")
    for name, s in f["stages_s"].items():
        print(f"    {name:18s} {s:8.2f}")
    rt = f["round_trip"]
    print(f"  round trip ({rt['method']}): {rt['kept']} of {rt['checked']} kept; dropped "
          f"{f['dropped_by_reason']}")
    print(f"  read + chunk + filters (model load apart): {f['seconds_without_model_load']:.1f} s "
          f"(target < {SCALE_TARGET_S:g} s: {'holds' if f['target_holds'] else 'MISSED'})")
    print(f"  chunk vectors {f['chunk_vectors_mib']:.1f} MiB; peak RSS {f['peak_rss_mib']:.0f} MiB")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--judge", default="demo")
    ap.add_argument("--docs", default=None, help="documents (default: the bundled corpus)")
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--embedder", default="default", help="default, none (BM25) or a path")
    ap.add_argument("--cache", default=None, help="cache file (default: fresh, in --out)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="keep the work files here (default: temp)")
    ap.add_argument("--metrics", default="answer_correctness,context_recall,rougeL,hit_rate@5,mrr")
    ap.add_argument("--no-judge-check", action="store_true",
                    help="skip run's judge check (faster; diff then cannot judge fitness)")
    ap.add_argument("--scale", action="store_true", help="the judge-free part at scale")
    ap.add_argument("--scale-docs", type=int, default=1000)
    ap.add_argument("--max-chars", type=int, default=250)
    ap.add_argument("--trace-memory", action="store_true",
                    help="--scale: tracemalloc peaks per step (slows the Python steps)")
    ap.add_argument("--json", default=None, help="write the figures here")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if args.scale:
        fig = scale(args)
    else:
        fig = demo(args)
    fig["machine"] = (f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
                      f"{platform.python_version()}; peak RSS "
                      f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(fig["machine"])
    if args.json:
        Path(args.json).write_text(json.dumps(fig, indent=2, default=str) + "\n",
                                   encoding="utf-8")


if __name__ == "__main__":
    main()
