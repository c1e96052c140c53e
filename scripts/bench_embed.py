"""Benchmark: embedding throughput through localeval versus bare sentence-transformers.

Both sides use the same loaded model object, batch size and device, so the
difference is exactly localeval's overhead (text hashing, SQLite look-up and
insert, de-duplication, re-normalisation). Runs are interleaved and the
median of ``--repeats`` is reported, because other processes on the machine
move single timings by more than the few percent being measured.

    .venv/bin/python scripts/bench_embed.py --n 2000 --repeats 3

Three workloads: 2,000 distinct sentences (fresh cache each time), the
same size with 30% duplicates (localeval embeds only the distinct ones), and
a second pass over the filled cache (no model calls at all).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from localeval.cache import Cache  # noqa: E402
from localeval.embed import CachedEmbedder, SentenceTransformerEmbedder  # noqa: E402

__all__ = ["make_sentences", "main"]

_WORDS = {
    "adj": "quick small large quiet red ancient modern local remote fragile robust annual "
           "internal external public private early late".split(),
    "noun": "system model report customer server policy contract river village engine "
            "algorithm invoice patient budget library network device committee".split(),
    "verb": "describes updates rejects approves monitors replaces measures explains "
            "stores delays improves reviews".split(),
    "prep": "after before during without despite under within beyond".split(),
}


def _clause(rng: random.Random) -> str:
    w = {k: rng.choice(v) for k, v in _WORDS.items()}
    return (f"the {w['adj']} {w['noun']} {w['verb']} the {rng.choice(_WORDS['adj'])} "
            f"{rng.choice(_WORDS['noun'])} {w['prep']} the {rng.choice(_WORDS['noun'])} "
            f"{rng.randint(1, 9999)}")


def make_sentences(n: int, seed: int = 0) -> list[str]:
    """Distinct RAG-like texts: 70% one or two clauses (answers), 30% 5-12 (contexts)."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        k = rng.randint(1, 2) if rng.random() < 0.7 else rng.randint(5, 12)
        text = "; ".join(_clause(rng) for _ in range(k)).capitalize() + "."
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def with_duplicates(n: int, share: float, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    unique = make_sentences(int(round(n * (1 - share))), seed=seed + 100)
    texts = unique + [rng.choice(unique) for _ in range(n - len(unique))]
    rng.shuffle(texts)
    return texts


def _time(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="texts per workload")
    ap.add_argument("--dup", type=float, default=0.3, help="share of duplicates in workload 2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch default)")
    ap.add_argument("--embedder", default=None, help="name or directory (default all-MiniLM-L6-v2)")
    args = ap.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    tmp = Path(tempfile.mkdtemp(prefix="bench-embed-"))
    os.environ.setdefault("LOCALEVAL_CACHE", str(tmp / "memo.sqlite"))  # file-hash memo
    t0 = time.perf_counter()
    inner = SentenceTransformerEmbedder(args.embedder, device=args.device,
                                        batch_size=args.batch_size)
    load_s = time.perf_counter() - t0
    model = inner._model  # the very object localeval encodes with
    raw_encode = model.encode
    in_encode = [0.0]

    def timed_encode(*a, **kw):  # time spent inside the model, seen from localeval
        t = time.perf_counter()
        try:
            return raw_encode(*a, **kw)
        finally:
            in_encode[0] += time.perf_counter() - t

    model.encode = timed_encode

    def bare(texts: list[str]) -> None:
        raw_encode(texts, batch_size=args.batch_size, normalize_embeddings=True,
                   convert_to_numpy=True, show_progress_bar=False,
                   prompt=inner.prompt or None)

    print(f"model {inner.name}  device {inner.device}  fp16 {inner.fp16}  dim {inner.dim}  "
          f"batch {args.batch_size}  torch threads {torch.get_num_threads()}  "
          f"cpus {os.cpu_count()}  load {load_s:.1f}s")
    bare(make_sentences(128, seed=99))  # warm-up: allocator, kernels, tokenizer

    distinct = make_sentences(args.n, seed=0)
    dups = with_duplicates(args.n, args.dup)
    rate: dict[tuple[str, str], list[float]] = {}
    overhead: dict[str, list[float]] = {"distinct": [], "duplicates": []}
    encoded: dict[str, int] = {}
    for r in range(args.repeats):
        for name, texts in (("distinct", distinct), ("duplicates", dups)):
            cache_path = tmp / f"{name}-{r}.sqlite"

            def ours(texts: list[str] = texts, name: str = name,
                     cache_path: Path = cache_path) -> None:
                emb = CachedEmbedder(inner, Cache(cache_path))
                before, in_encode[0] = inner.texts_encoded, 0.0
                total = _time(lambda: emb.embed(texts))
                encoded[name] = inner.texts_encoded - before
                overhead[name].append(total - in_encode[0])
                rate.setdefault((name, "localeval"), []).append(len(texts) / total)

            def plain(texts: list[str] = texts, name: str = name) -> None:
                rate.setdefault((name, "bare"), []).append(len(texts) / _time(lambda: bare(texts)))

            for fn in ((plain, ours) if r % 2 == 0 else (ours, plain)):  # interleaved
                fn()
            if name == "distinct":
                warm = CachedEmbedder(inner, Cache(cache_path))
                rate.setdefault(("warm", "localeval"), []).append(
                    len(texts) / _time(lambda w=warm, t=texts: w.embed(t)))
                assert warm.misses == 0

    med, best = statistics.median, max
    print(f"\n{'workload':<32}{'bare texts/s':>17}{'localeval texts/s':>19}{'ratio':>13}"
          f"{'overhead':>10}{'model texts':>14}")
    print(f"{'':<32}{'median / best':>17}{'median / best':>19}{'med / best':>13}"
          f"{'ms/1k':>10}")
    for name, label in (("distinct", f"{args.n} distinct, fresh cache"),
                        ("duplicates", f"{args.n} with {args.dup:.0%} duplicates")):
        b, o = rate[(name, "bare")], rate[(name, "localeval")]
        print(f"{label:<32}{med(b):>9.1f} /{best(b):>6.1f}{med(o):>11.1f} /{best(o):>6.1f}"
              f"{med(o) / med(b):>7.3f} /{best(o) / best(b):>5.3f}"
              f"{1000 * med(overhead[name]) / args.n * 1000:>10.2f}"
              f"{encoded[name]:>7} of {args.n}")
    w = rate[("warm", "localeval")]
    print(f"{'second pass, filled cache':<32}{'':>17}{med(w):>11.0f} /{best(w):>6.0f}"
          f"{'':>13}{'':>10}{0:>7} of {args.n}")
    share = [1 - o / (args.n / r) for o, r in zip(overhead["distinct"],
                                                  rate[("distinct", "localeval")], strict=True)]
    print("\nin-run share of localeval time spent in the model (distinct): "
          + ", ".join(f"{x:.4f}" for x in share))
    print("all runs (texts/s):")
    for (name, side), vals in rate.items():
        print(f"  {name:<11}{side:<10}" + "  ".join(f"{v:9.1f}" for v in vals))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
