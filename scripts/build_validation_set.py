#!/usr/bin/env python
"""Build a labelled context-relevance validation set from queries with known answers.

Given queries with their positive (answer-bearing) passage ids, a corpus and
k, this retrieves the top-k passages per query with a local embedder and
writes localeval samples labelled "positive" (the contexts contain a
positive passage) or "negative". Scoring the file with a context metric and
running ``localeval validate RESULTS THIS_FILE`` then shows how well the
judge separates the two groups: the method of the MIRACL-ja study of RAGAS
context relevance (see docs/judging-the-judges.md).

Modes:

* ``paired`` (default, as in that study): for every query one positive
  sample (the top-k, with positives that ranked below k swapped in for the
  lowest-ranked non-positives) and one negative sample (the k best-ranked
  non-positive passages, i.e. hard negatives). Balanced by construction.
* ``natural``: one sample per query, the plain top-k, labelled by whether a
  positive was retrieved. Measures the judge on the retriever's real output.

Input (JSONL):
  queries: {"id", "question", "positive_ids": [...]}  (also accepted: query_id/qid,
           query/text, positives / relevant_ids / positive_passages [{docid}, ...])
  corpus:  {"id", "text"}  (also accepted: docid/_id/doc_id; optional "title")

Example:
  python scripts/build_validation_set.py queries.jsonl corpus.jsonl -k 10 -o valset.jsonl
  localeval run valset.jsonl -m context_relevancy -o run/
  localeval validate run/ valset.jsonl

Each sample also records ``positive_positions`` (1-based places of the positive
passages in its contexts). In paired mode, positives that ranked below k are
placed last, as in the study; a judge that truncates long contexts then never
sees them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

__all__ = ["load_queries", "load_corpus", "build_samples", "main"]

_QID = ("id", "query_id", "qid", "_id")
_QTEXT = ("question", "query", "text", "user_input")
_QPOS = ("positive_ids", "positives", "relevant_ids", "positive_passages")
_DID = ("id", "docid", "_id", "doc_id")


def _die(msg: str, file: str | None = None, line: int | None = None,
         column: str | None = None) -> None:
    from localeval.errors import DataError

    raise DataError(msg, file=file, row=line, column=column)


def _jsonl(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    p = Path(path)
    if not p.is_file():
        _die("file not found", str(p))
    out = []
    with open(p, encoding="utf-8-sig") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                _die(f"malformed JSON: {e.msg}", str(p), n)
            if not isinstance(obj, dict):
                _die("expected a JSON object", str(p), n)
            out.append((n, obj))
    if not out:
        _die("file is empty", str(p))
    return out


def _pick(obj: dict[str, Any], names: Sequence[str]) -> tuple[str | None, Any]:
    for k in names:
        if k in obj and obj[k] is not None:
            return k, obj[k]
    return None, None


def load_queries(path: str | Path) -> list[dict[str, Any]]:
    """[{"id", "question", "positive_ids": [str]}] from a JSONL file."""
    out, seen = [], set()
    for n, obj in _jsonl(path):
        _, qid = _pick(obj, _QID)
        _, text = _pick(obj, _QTEXT)
        col, pos = _pick(obj, _QPOS)
        if qid is None:
            qid = str(n)
        if not isinstance(text, str) or not text.strip():
            _die("missing question text", str(path), n, "question")
        if pos is None:
            pos = []
        if not isinstance(pos, list):
            _die("positive ids must be a list", str(path), n, col)
        ids = []
        for p in pos:
            pid = p.get("docid", p.get("id")) if isinstance(p, dict) else p
            if pid is None or isinstance(pid, (bool, list, dict)):
                _die(f"bad positive passage {p!r}", str(path), n, col)
            ids.append(str(pid))
        if str(qid) in seen:
            _die(f"duplicate query id {qid!r}", str(path), n, "id")
        seen.add(str(qid))
        out.append({"id": str(qid), "question": text, "positive_ids": ids})
    return out


def load_corpus(path: str | Path, with_title: bool = False) -> tuple[list[str], list[str]]:
    """(ids, texts) from a JSONL corpus."""
    ids, texts, seen = [], [], set()
    for n, obj in _jsonl(path):
        _, did = _pick(obj, _DID)
        text = obj.get("text")
        if did is None:
            _die("missing passage id", str(path), n, "id")
        if not isinstance(text, str):
            _die("missing passage text", str(path), n, "text")
        if with_title and isinstance(obj.get("title"), str) and obj["title"].strip():
            text = f"{obj['title']}\n{text}"
        if str(did) in seen:
            _die(f"duplicate passage id {did!r}", str(path), n, "id")
        seen.add(str(did))
        ids.append(str(did))
        texts.append(text)
    return ids, texts


def _rank(sims: np.ndarray, m: int) -> np.ndarray:
    """Indices of the m most similar passages, best first (ties: lower index first)."""
    m = min(m, sims.size)
    part = np.argpartition(-sims, m - 1)[:m] if m < sims.size else np.arange(sims.size)
    return part[np.lexsort((part, -sims[part]))]


def build_samples(queries: Sequence[dict[str, Any]], doc_ids: Sequence[str],
                  doc_texts: Sequence[str], q_emb: np.ndarray, d_emb: np.ndarray, k: int,
                  mode: str = "paired") -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Labelled samples from embeddings (rows unit-norm, so dot product = cosine).

    Returns (samples, counts) where counts tallies positives, negatives,
    queries without a positive in the corpus and unknown positive ids.
    """
    if mode not in ("paired", "natural"):
        raise ValueError("mode must be 'paired' or 'natural'")
    if k < 1 or k > len(doc_ids):
        raise ValueError(f"k must be between 1 and the corpus size ({len(doc_ids)})")
    index = {d: i for i, d in enumerate(doc_ids)}
    counts = {"positive": 0, "negative": 0, "queries_without_positive": 0,
              "unknown_positive_ids": 0, "natural_hits": 0}
    samples: list[dict[str, Any]] = []

    def sample(q: dict[str, Any], idx: Sequence[int], label: str, sid: str,
               pos_ids: list[str]) -> dict[str, Any]:
        counts[label] += 1
        pos_set = set(pos_ids)
        return {"id": sid, "question": q["question"],
                "contexts": [doc_texts[i] for i in idx],
                "retrieved_ids": [doc_ids[i] for i in idx],
                "relevant_ids": pos_ids, "label": label, "query_id": q["id"],
                # 1-based places of the positives in the contexts: a judge that truncates
                # long contexts (a small context window; RAGAS's older nv_context_relevance
                # keeps 4192 characters) misses positives placed late, so break NG rates
                # down by this when they look high.
                "positive_positions": [r + 1 for r, i in enumerate(idx)
                                       if doc_ids[i] in pos_set]}

    for qi, q in enumerate(queries):
        pos_ids = [p for p in q["positive_ids"] if p in index]
        counts["unknown_positive_ids"] += len(q["positive_ids"]) - len(pos_ids)
        pos = {index[p] for p in pos_ids}
        sims = d_emb @ q_emb[qi]
        ranked = _rank(sims, k + len(pos)).tolist()
        top = ranked[:k]
        if not pos:
            counts["queries_without_positive"] += 1
        if mode == "natural":
            hit = any(i in pos for i in top)
            counts["natural_hits"] += hit
            samples.append(sample(q, top, "positive" if hit else "negative", q["id"], pos_ids))
            continue
        if pos:
            # positives ranked below k, best first (as the MIRACL-ja script orders them)
            missing = sorted((i for i in pos if i not in top), key=lambda i: (-sims[i], i))
            slots = list(top)
            for p in reversed(missing):  # lowest-ranked missing positive -> last free slot
                for j in range(len(slots) - 1, -1, -1):
                    if slots[j] not in pos:
                        slots[j] = p
                        break
            samples.append(sample(q, slots, "positive", f"{q['id']}:pos", pos_ids))
        negs = [i for i in ranked if i not in pos][:k]
        samples.append(sample(q, negs, "negative", f"{q['id']}:neg", pos_ids))
    return samples, counts


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("queries", help="JSONL: id, question, positive_ids")
    ap.add_argument("corpus", help="JSONL: id, text (optional title)")
    ap.add_argument("-k", type=int, default=10, help="passages per sample (default 10)")
    ap.add_argument("-o", "--out", required=True, help="output JSONL (a localeval dataset)")
    ap.add_argument("--mode", choices=["paired", "natural"], default="paired")
    ap.add_argument("--embedder", default=None, help="sentence-transformers folder or model "
                    "name in models/ (default: all-MiniLM-L6-v2; use a multilingual model "
                    "such as multilingual-e5 for Japanese/Chinese)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--with-title", action="store_true", help="prefix passage text with title")
    args = ap.parse_args(argv)

    from localeval.embed import load_embedder
    from localeval.errors import LocalevalError

    try:
        queries = load_queries(args.queries)
        doc_ids, doc_texts = load_corpus(args.corpus, args.with_title)
        t0 = time.perf_counter()
        emb = load_embedder(args.embedder, device=args.device, batch_size=args.batch_size)
        t1 = time.perf_counter()
        d_emb = np.asarray(emb.embed(doc_texts), dtype=np.float32)
        q_emb = np.asarray(emb.embed([q["question"] for q in queries]), dtype=np.float32)
        t2 = time.perf_counter()
        samples, counts = build_samples(queries, doc_ids, doc_texts, q_emb, d_emb, args.k,
                                        args.mode)
    except (LocalevalError, ValueError) as e:
        print(f"build_validation_set: error: {e}", file=sys.stderr)
        return getattr(e, "exit_code", 2)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        for s in samples:
            f.write(json.dumps(s, ensure_ascii=False) + "\n")
    print(f"queries: {len(queries)}  corpus: {len(doc_ids)}  k: {args.k}  mode: {args.mode}")
    print(f"embedder: {getattr(emb, 'name', '?')}  load {t1 - t0:.1f} s, "
          f"embed {len(doc_ids) + len(queries)} texts {t2 - t1:.1f} s")
    print(f"samples: {len(samples)} (positive {counts['positive']}, negative "
          f"{counts['negative']})")
    if args.mode == "natural":
        print(f"hit rate@{args.k}: {counts['natural_hits'] / max(1, len(queries)):.3f}")
    if counts["queries_without_positive"] or counts["unknown_positive_ids"]:
        print(f"warning: {counts['queries_without_positive']} queries without a positive in "
              f"the corpus, {counts['unknown_positive_ids']} positive ids not in the corpus",
              file=sys.stderr)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
