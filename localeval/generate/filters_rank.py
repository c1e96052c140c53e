"""Round-trip retrieval: is a generated question about its own chunk?

Every chunk of the corpus is ranked for the question, and the question is kept only
if one of its source chunks ranks in the top ``k`` among all of them: a judge-free
check that the question names something its chunk says and others do not (a
question so generic that any chunk could answer it, or about another chunk, fails).

With an embedder the ranking is by cosine (chunks embedded as passages, the
question as a query, with the prefixes the embedder declares: ``query_prefix`` and
``passage_prefix``, as E5 models ask); without one by BM25 (Okapi, k1=1.5, b=0.75,
computed here with numpy and scipy: no extra package) on lower-cased words and, for
Japanese and Chinese, character bigrams. Words found in more than half of the chunks
(of a corpus of at least ``COMMON_MIN_CHUNKS``) carry no weight, like a search
engine's stop words: a question about nothing ("What is the answer to the
question?") would otherwise rank its chunk in a small corpus's top five on "the",
"is" and "to" alone.

The rank is 1 plus the number of chunks that score higher than the best source
chunk, or as high: ties count against the question (a question that shares no
word with any chunk ranks last), except chunks whose text is the same as a source
chunk's (the same paragraph in two documents cannot tell them apart).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from localeval.corpus import Chunk
from localeval.generate.candidates import Candidate
from localeval.lang import lexical_tokens

__all__ = ["NOT_RETRIEVED", "UNKNOWN_CHUNK", "BM25", "round_trip", "embed_prefixes",
           "lexical_tokens"]

NOT_RETRIEVED = "not_retrieved"
UNKNOWN_CHUNK = "unknown_chunk"

#: Queries scored at once (a block of the query x chunk score matrix).
_BLOCK = 128
#: Scores this close count as a tie.
_TIE = 1e-6
#: BM25: words in more than this share of the chunks weigh nothing ...
COMMON_SHARE = 0.5
#: ... in a corpus of at least this many chunks.
COMMON_MIN_CHUNKS = 4


class BM25:
    """Okapi BM25 over a fixed list of texts; ``scores(queries)`` is queries x texts."""

    def __init__(self, texts: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        from scipy.sparse import csr_matrix

        self.vocab: dict[str, int] = {}
        rows, cols, vals = [], [], []
        lengths = np.zeros(len(texts), dtype=np.float64)
        for d, text in enumerate(texts):
            counts = Counter(lexical_tokens(text))
            lengths[d] = sum(counts.values())
            for tok, n in counts.items():
                rows.append(d)
                cols.append(self.vocab.setdefault(tok, len(self.vocab)))
                vals.append(n)
        n_docs, n_terms = len(texts), max(1, len(self.vocab))
        tf = np.asarray(vals, dtype=np.float64)
        df = np.bincount(np.asarray(cols, dtype=np.int64), minlength=n_terms)
        idf = np.log((n_docs - df + 0.5) / (df + 0.5) + 1.0)
        if n_docs >= COMMON_MIN_CHUNKS:
            idf[df > COMMON_SHARE * n_docs] = 0.0
        avg = lengths.mean() if n_docs and lengths.mean() > 0 else 1.0
        norm = k1 * (1 - b + b * lengths[np.asarray(rows, dtype=np.int64)] / avg)
        weights = idf[np.asarray(cols, dtype=np.int64)] * tf * (k1 + 1) / (tf + norm)
        self.matrix = csr_matrix((weights, (rows, cols)), shape=(n_docs, n_terms))
        self.n_terms = n_terms

    def query_matrix(self, queries: Sequence[str]) -> Any:
        from scipy.sparse import csr_matrix

        rows, cols = [], []
        for q, text in enumerate(queries):
            for tok in set(lexical_tokens(text)):
                j = self.vocab.get(tok)
                if j is not None:
                    rows.append(q)
                    cols.append(j)
        return csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(queries), self.n_terms))

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        return np.asarray((self.query_matrix(queries) @ self.matrix.T).toarray())


def embed_prefixes(embedder: Any) -> tuple[str, str]:
    """(query, passage) prefixes the embedder declares (``query_prefix``,
    ``passage_prefix``; looked up on a cache wrapper's ``inner`` too), else ("", "")."""
    for obj in (embedder, getattr(embedder, "inner", None)):
        q, p = getattr(obj, "query_prefix", None), getattr(obj, "passage_prefix", None)
        if isinstance(q, str) or isinstance(p, str):
            return q or "", p or ""
    return "", ""


def _rank(row: np.ndarray, sources: list[int], same_text: np.ndarray) -> int:
    best = float(row[sources].max())
    ahead = (row >= best - _TIE) & ~same_text
    ahead[sources] = False
    return 1 + int(ahead.sum())


def round_trip(cands: Sequence[Candidate], chunks: Sequence[Chunk], *, embedder: Any = None,
               k: int = 5) -> tuple[list[Candidate], str]:
    """``cands`` measured (``round_trip_rank``) or dropped, and the method used."""
    index = {c.id: i for i, c in enumerate(chunks)}
    texts = [c.text for c in chunks]
    by_text: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        by_text.setdefault(t, []).append(i)
    todo: list[int] = []
    out: list[Candidate] = list(cands)
    for n, c in enumerate(cands):
        if any(cid in index for cid in c.chunk_ids):
            todo.append(n)
        else:
            out[n] = c.drop(UNKNOWN_CHUNK, chunk_ids=list(c.chunk_ids))
    if embedder is not None:
        qp, pp = embed_prefixes(embedder)
        method = f"embedding ({getattr(embedder, 'name', type(embedder).__name__)})"
        chunk_vecs = np.asarray(embedder.embed([pp + t for t in texts]), dtype=np.float32) \
            if todo else np.zeros((0, 0), dtype=np.float32)
        q_vecs = np.asarray(embedder.embed([qp + cands[n].question for n in todo]),
                            dtype=np.float32) if todo else chunk_vecs
    else:
        method = "bm25"
        bm25 = BM25(texts) if todo else None
    for lo in range(0, len(todo), _BLOCK):
        block = todo[lo:lo + _BLOCK]
        if embedder is not None:
            scores = q_vecs[lo:lo + len(block)] @ chunk_vecs.T
        else:
            assert bm25 is not None
            scores = bm25.scores([cands[n].question for n in block])
        for row, n in zip(scores, block):
            c = cands[n]
            sources = [index[cid] for cid in c.chunk_ids if cid in index]
            same = np.zeros(len(texts), dtype=bool)
            for s in sources:
                same[by_text[texts[s]]] = True
            rank = _rank(row, sources, same)
            checks = {"round_trip_rank": rank, "round_trip_k": k, "round_trip_method": method}
            out[n] = c.measured(**checks) if rank <= k else c.drop(NOT_RETRIEVED, **checks)
    return out, method
