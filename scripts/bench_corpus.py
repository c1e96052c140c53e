"""Time reading and chunking a synthetic corpus of documents.

    .venv/bin/python scripts/bench_corpus.py [--docs 1000] [--max-chars 1500] [--seed 0]

Writes ``--docs`` documents into a temporary folder (70 % English, 15 % Japanese,
15 % Chinese; a third each .txt, .md and .html; 1 to 6 KB of text each, built from
sentence pools with varied lengths and a few paragraph breaks), then times, one pass
each (nothing is cached between the steps): ``read_corpus`` on the folder,
``chunk_documents`` on the corpus (sentence splitting is most of the time),
``write_chunks`` and ``corpus_hash``. Prints the figures and the chunk counts.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import tempfile
import time
from pathlib import Path

from localeval.corpus import chunk_documents, corpus_hash, read_corpus
from localeval.generate import write_chunks

__all__ = ["main"]

_EN = ["The lamp has three brightness levels.", "Press the button once to switch it on.",
       "Dr. Smith wrote the first manual in 2021, and it has been revised twice since.",
       "Does the warranty cover the power adapter?", "Yes, for two years from purchase!",
       "Staff may work remotely up to 3 days per week; Tuesday is the office day.",
       "Receipts must be uploaded within 60 days, e.g. as a PDF or a photo."]
_JA = ["有給休暇は年に二十日です。", "申請は十日前までに行います！", "本当ですか？",
       "彼は「はい。」と言った。", "社員食堂は十一時から十四時まで営業しています。"]
_ZH = ["员工每年有二十天带薪假期。", "请提前十天申请！", "真的吗？", "他说：“是的。”然后走了。",
       "公司食堂每天十一点开门，下午两点关门。"]


def _document(rng: random.Random, pool: list[str], size: int, sep: str) -> list[str]:
    paragraphs, length = [], 0
    while length < size:
        para = sep.join(rng.choice(pool) for _ in range(rng.randint(2, 8)))
        paragraphs.append(para)
        length += len(para)
    return paragraphs


def make_corpus(folder: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(n):
        r = rng.random()
        pool, sep = (_EN, " ") if r < 0.7 else (_JA, "") if r < 0.85 else (_ZH, "")
        paras = _document(rng, pool, rng.randint(1000, 6000) // (1 if sep else 2), sep)
        kind = i % 3
        sub = folder / f"part{i % 10}"
        sub.mkdir(exist_ok=True)
        if kind == 0:
            (sub / f"doc{i:05d}.txt").write_text("\n\n".join(paras), encoding="utf-8")
        elif kind == 1:
            (sub / f"doc{i:05d}.md").write_text(f"# Document {i}\n\n" + "\n\n".join(paras),
                                                encoding="utf-8")
        else:
            body = "".join(f"<p>{p}</p>\n" for p in paras)
            (sub / f"doc{i:05d}.html").write_text(
                f"<html><head><title>Doc {i}</title><style>p{{}}</style></head>"
                f"<body><script>x()</script>{body}</body></html>", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--max-chars", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "corpus"
        folder.mkdir()
        make_corpus(folder, args.docs, args.seed)
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        t0 = time.perf_counter()
        corpus = read_corpus(folder)
        t1 = time.perf_counter()
        chunks = chunk_documents(corpus, max_chars=args.max_chars)
        t2 = time.perf_counter()
        write_chunks(Path(tmp) / "chunks.jsonl", chunks)
        t3 = time.perf_counter()
        digest = corpus_hash(corpus)
        t4 = time.perf_counter()
    chars = sum(len(d.text) for d in corpus)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}")
    print(f"{len(corpus)} documents, {size / 2**20:.1f} MB on disk, {chars:,} characters "
          f"of text -> {len(chunks)} chunks (max_chars={args.max_chars})")
    print(f"read_corpus      {t1 - t0:7.2f} s")
    print(f"chunk_documents  {t2 - t1:7.2f} s")
    print(f"write_chunks     {t3 - t2:7.2f} s")
    print(f"corpus_hash      {t4 - t3:7.2f} s  ({digest[:12]})")
    print(f"total            {t4 - t0:7.2f} s")


if __name__ == "__main__":
    main()
