"""Time the filters of generated rows, the round-trip retrieval above all, on a synthetic corpus.

    .venv/bin/python scripts/bench_generate_filters.py [--docs 1000] [--max-chars 250]
        [--embedder default] [--device cpu] [--k 5] [--seed 0]

Builds ``--docs`` English documents in memory, each about one made-up product
(a name, a maker, a city, a year, a weight, a material: facts no other document
shares exactly), chunks them with ``localeval.corpus.chunk_documents``, and writes
one question per chunk from one of its sentences, as a generator would (a question
about the fact, not a copy of it). Then runs ``filter_candidates`` twice, once with
the BM25 fallback and once with the embedder (the bundled all-MiniLM-L6-v2 unless
``--embedder`` names another; on ``--device``), and prints each filter's time and
how many questions their own chunk ranked in the top ``--k`` for. The embedder's
load time is printed apart; its vectors are not cached between the two runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time

from localeval.corpus import Corpus, Document, chunk_documents
from localeval.generate import Candidate, filter_candidates

__all__ = ["main"]

_SYL = ["ka", "lo", "mi", "ren", "to", "vas", "quel", "dor", "ny", "pha", "zu", "bri", "sel",
        "tan", "gor", "vi", "ma", "lux", "e", "o"]
_KINDS = ["lamp", "kettle", "bicycle", "drill", "router", "camera", "blender", "scooter"]
_MATERIALS = ["aluminium", "walnut", "carbon fibre", "steel", "bamboo", "ceramic", "glass"]
_CITIES = ["Porto", "Lyon", "Gdansk", "Osaka", "Leeds", "Turin", "Graz", "Tartu", "Bilbao"]
_COLOURS = ["teal", "amber", "crimson", "ivory", "olive", "slate", "coral"]


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(_SYL) for _ in range(3)).capitalize()


def _facts(rng: random.Random, name: str) -> list[tuple[str, str]]:
    """(sentence, question) pairs about one product."""
    kind, maker = rng.choice(_KINDS), _name(rng) + " Works"
    year, weight = rng.randint(1990, 2024), round(rng.uniform(0.3, 20), 1)
    material, city, colour = rng.choice(_MATERIALS), rng.choice(_CITIES), rng.choice(_COLOURS)
    workers, price, months = rng.randint(40, 900), rng.randint(20, 900), rng.choice([12, 24, 36])
    return [
        (f"The {name} {kind} was first sold in {year} by {maker}.",
         f"In which year did {maker} start selling the {name}?"),
        (f"It weighs {weight} kilograms, and its housing is made of {material}.",
         f"What material is the housing of the {name} {kind} made of?"),
        (f"The {name} is assembled in {city}, in a plant that employs {workers} people.",
         f"Where is the {name} {kind} assembled?"),
        (f"A {colour} edition of the {name} costs {price} euros.",
         f"How much does the {colour} {name} cost?"),
        (f"The warranty of the {name} covers {months} months from the day of purchase.",
         f"How long is the warranty of the {name} {kind}?"),
        (f"Owners of the {name} are asked to register it on the {maker} website.",
         f"Where should owners register their {name}?"),
    ]


def make_corpus(n: int, seed: int) -> tuple[Corpus, dict[str, str]]:
    """The documents, and a question for each fact sentence."""
    rng = random.Random(seed)
    docs, questions = [], {}
    for i in range(n):
        name = _name(rng) + f"-{i}"
        pairs = _facts(rng, name)
        rng.shuffle(pairs)
        paras = [" ".join(s for s, _ in pairs[j:j + 2]) for j in range(0, len(pairs), 2)]
        docs.append(Document(id=f"doc{i:05d}.txt", text="\n\n".join(paras), source="bench"))
        questions.update(pairs)
    return Corpus(tuple(docs), (), "bench"), questions


def make_candidates(chunks, questions: dict[str, str], rng: random.Random) -> list[Candidate]:
    out = []
    for n, ch in enumerate(chunks):
        found = [(s, questions[s]) for s in _sentences(ch.text) if s in questions]
        if not found:
            continue
        sentence, question = rng.choice(found)
        out.append(Candidate(id=f"q{n}", question=question, reference=sentence,
                             contexts=(ch.text,), chunk_ids=(ch.id,), doc_ids=(ch.doc_id,),
                             synthesizer="single_hop_specific", lang=ch.lang))
    return out


def _sentences(text: str) -> list[str]:
    parts = []
    for para in text.split("\n\n"):
        for s in para.replace(". ", ".\n").split("\n"):
            if s.strip():
                parts.append(s.strip())
    return parts


def _report(label: str, res, total: float) -> None:
    rt = res.stage("round_trip")
    ranks = [c.checks.get("round_trip_rank") for c in (*res.kept, *res.dropped)
             if "round_trip_rank" in c.checks]
    top1 = sum(1 for r in ranks if r == 1)
    print(f"{label}: {total:.2f} s in all; round trip ({rt.note}) {rt.seconds:.2f} s for "
          f"{rt.checked} questions: kept {rt.checked - rt.dropped} "
          f"({100 * (rt.checked - rt.dropped) / max(1, rt.checked):.1f}%), rank 1 for "
          f"{top1} ({100 * top1 / max(1, len(ranks)):.1f}%)")
    for st in res.stages:
        print(f"  {st.name:16s} {st.seconds:7.2f} s  checked {st.checked:5d}  dropped "
              f"{st.dropped:5d}  {st.note}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--max-chars", type=int, default=250)
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    t = time.perf_counter()
    corpus, questions = make_corpus(args.docs, args.seed)
    chunks = chunk_documents(corpus, max_chars=args.max_chars)
    cands = make_candidates(chunks, questions, random.Random(args.seed))
    print(f"{len(corpus)} documents, {len(chunks)} chunks, {len(cands)} questions "
          f"(built and chunked in {time.perf_counter() - t:.1f} s)")

    t = time.perf_counter()
    res = filter_candidates(cands, chunks, k=args.k)
    _report("BM25 fallback", res, time.perf_counter() - t)

    from localeval.embed import SentenceTransformerEmbedder

    t = time.perf_counter()
    emb = SentenceTransformerEmbedder(None if args.embedder == "default" else args.embedder,
                                      device=args.device)
    print(f"embedder {emb.name} on {emb.device} loaded in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    res = filter_candidates(cands, chunks, embedder=emb, k=args.k)
    _report("embedder", res, time.perf_counter() - t)
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")


if __name__ == "__main__":
    main()
