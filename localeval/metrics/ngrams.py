"""Vectorised n-gram overlap and LCS lengths for many text pairs at once.

Why hand-written: rouge-score and sacrebleu count n-grams with a Python
``Counter`` per pair and rouge-score fills an O(n*m) LCS table in pure Python,
so a dataset of 10,000 pairs spends seconds in the interpreter. Here every
pair's tokens become integer ids in one flat array and the counting is a few
numpy sorts for the whole dataset; LCS is the bit-parallel algorithm
(Allison & Dix 1986, Hyyrö 2004) run for all pairs simultaneously, 64 reference
positions per machine word. The numbers are the same integers the reference
tools count (tests check this on random data); only the speed differs.

Layout used throughout: ``P`` pairs are ``2P`` sequences in one flat id array
with ``offsets`` (length ``2P + 1``); sequence ``p`` is pair ``p``'s reference,
sequence ``P + p`` its hypothesis.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["PairBatch", "encode_pairs", "ngram_matches", "lcs_lengths"]

_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@dataclass(frozen=True)
class PairBatch:
    """Token ids of ``n_pairs`` (reference, hypothesis) pairs, flat."""

    ids: np.ndarray  # int64, all tokens of all sequences
    offsets: np.ndarray  # int64, 2 * n_pairs + 1
    n_pairs: int
    vocab_size: int

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def ref_len(self) -> np.ndarray:
        return self.lengths[: self.n_pairs]

    @property
    def hyp_len(self) -> np.ndarray:
        return self.lengths[self.n_pairs:]


def encode_pairs(refs: Sequence[Sequence[str]], hyps: Sequence[Sequence[str]]) -> PairBatch:
    """Map tokens to ids through one shared vocabulary (equal strings, equal ids)."""
    if len(refs) != len(hyps):
        raise ValueError("refs and hyps differ in length")
    seqs = [*refs, *hyps]
    # C-speed passes only: flatten, distinct tokens in first-seen order, then
    # one dict lookup per token through map().
    flat_tokens = list(itertools.chain.from_iterable(seqs))
    vocab = {t: i for i, t in enumerate(dict.fromkeys(flat_tokens))}
    flat = np.fromiter(map(vocab.__getitem__, flat_tokens), dtype=np.int64,
                       count=len(flat_tokens))
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in seqs], out=offsets[1:])
    return PairBatch(flat, offsets, len(refs), max(len(vocab), 1))


def ngram_matches(batch: PairBatch, max_order: int) -> np.ndarray:
    """Clipped n-gram matches per pair and order, shape ``(n_pairs, max_order)``.

    ``out[p, n-1] = sum over n-grams g of min(count_ref(g), count_hyp(g))``:
    ROUGE-N's intersection and BLEU's clipped "correct" count (one reference).
    """
    P = batch.n_pairs
    out = np.zeros((P, max_order), dtype=np.int64)
    if P == 0 or batch.ids.size == 0:
        return out
    lens = batch.lengths
    seq = np.repeat(np.arange(2 * P, dtype=np.int64), lens)
    start = np.arange(batch.ids.size, dtype=np.int64)
    remaining = lens[seq] - (start - batch.offsets[:-1][seq])  # tokens from here to the end
    pair = seq % P
    is_hyp = seq >= P
    V = np.int64(batch.vocab_size)
    # Codes carry the pair, so equal n-grams of different pairs never meet;
    # after each order the codes are compressed to 0..G-1 so that
    # code * V + next_id stays far below 2**63.
    code = pair * V + batch.ids
    for n in range(1, max_order + 1):
        if n > 1:
            keep = remaining >= n
            start, pair, is_hyp, remaining, code = (
                start[keep], pair[keep], is_hyp[keep], remaining[keep], code[keep])
            if start.size == 0:
                break
            code = code * V + batch.ids[start + (n - 1)]
        uniq, code = np.unique(code, return_inverse=True)
        G = uniq.size
        ref_cnt = np.bincount(code[~is_hyp], minlength=G)
        hyp_cnt = np.bincount(code[is_hyp], minlength=G)
        group_pair = np.empty(G, dtype=np.int64)
        group_pair[code] = pair
        out[:, n - 1] = np.bincount(group_pair, weights=np.minimum(ref_cnt, hyp_cnt),
                                    minlength=P).astype(np.int64)
    return out


# Memory for one chunk's match masks: rows * max_len * words uint64 values.
_CHUNK_CELLS = 1 << 22


def lcs_lengths(batch: PairBatch) -> np.ndarray:
    """Length of the longest common subsequence of each pair, shape ``(n_pairs,)``.

    Bit-parallel LCS: the shorter sequence of a pair is a bit vector (bit i =
    its position i); the longer one is scanned token by token with
    ``V = (V + (V & M[t])) | (V & ~M[t])``, where ``M[t]`` marks the
    positions holding token t. The LCS length is the number of zero bits
    left in V. All pairs advance together; pairs are grouped by the number
    of 64-bit words they need and chunked by length to bound memory.
    """
    P = batch.n_pairs
    out = np.zeros(P, dtype=np.int64)
    if P == 0:
        return out
    lens = batch.lengths
    la, lb = lens[:P], lens[P:]
    idx = np.arange(P, dtype=np.int64)
    a_is_ref = la <= lb
    a_seq = np.where(a_is_ref, idx, idx + P)  # bit-vector side: the shorter one
    b_seq = np.where(a_is_ref, idx + P, idx)
    m = np.minimum(la, lb)
    L = np.maximum(la, lb)
    words = (m + 63) // 64
    for w in np.unique(words[m > 0]):
        sel = np.nonzero((words == w) & (m > 0))[0]
        sel = sel[np.argsort(L[sel], kind="stable")]  # similar lengths share a chunk
        i = 0
        while i < sel.size:
            # Longest chunk whose mask table (rows * longest scan * words) fits
            # the budget; lengths are sorted, so the cell count only grows.
            rest = L[sel[i:]]
            cells = rest * np.arange(1, rest.size + 1) * int(w)
            rows = max(1, int(np.searchsorted(cells, _CHUNK_CELLS, side="right")))
            chunk = sel[i:i + rows]
            out[chunk] = _lcs_chunk(batch, a_seq[chunk], b_seq[chunk], int(w))
            i += rows
    return out


def _lcs_chunk(batch: PairBatch, a_seq: np.ndarray, b_seq: np.ndarray, w: int) -> np.ndarray:
    ids, off = batch.ids, batch.offsets
    C = a_seq.size
    la = off[a_seq + 1] - off[a_seq]
    lb = off[b_seq + 1] - off[b_seq]
    lmax = int(lb.max())
    rows = np.arange(C, dtype=np.int64)

    # Positions of every token of the a-side (bit side) and b-side (scanned).
    row_a = np.repeat(rows, la)
    pos_a = np.arange(row_a.size, dtype=np.int64) - np.repeat(np.cumsum(la) - la, la)
    tok_a = ids[np.repeat(off[a_seq], la) + pos_a]
    row_b = np.repeat(rows, lb)
    pos_b = np.arange(row_b.size, dtype=np.int64) - np.repeat(np.cumsum(lb) - lb, lb)
    tok_b = ids[np.repeat(off[b_seq], lb) + pos_b]

    # Match mask per (row, token): OR of its a-side position bits, per word.
    V_ = np.int64(batch.vocab_size)
    key_a = row_a * V_ + tok_a
    order = np.argsort(key_a, kind="stable")
    key_sorted = key_a[order]
    first = np.flatnonzero(np.r_[True, key_sorted[1:] != key_sorted[:-1]])
    keys = key_sorted[first]
    pos_sorted = pos_a[order]
    bit = np.left_shift(np.uint64(1), (pos_sorted % 64).astype(np.uint64))
    word_of = pos_sorted // 64
    agg = np.zeros((keys.size, w), dtype=np.uint64)
    for wi in range(w):
        bits_w = np.where(word_of == wi, bit, np.uint64(0))
        agg[:, wi] = np.bitwise_or.reduceat(bits_w, first)

    key_b = row_b * V_ + tok_b
    g = np.searchsorted(keys, key_b)
    g_ok = np.minimum(g, keys.size - 1)
    hit = keys[g_ok] == key_b
    M = np.zeros((lmax, C, w), dtype=np.uint64)  # scan position first: contiguous slices
    M[pos_b[hit], row_b[hit], :] = agg[g_ok[hit]]

    # Valid bits per row and word (the top word may be partial).
    nbits = np.clip(la[:, None] - 64 * np.arange(w)[None, :], 0, 64)
    full = np.where(nbits >= 64, _ONES,
                    np.left_shift(np.uint64(1), np.minimum(nbits, 63).astype(np.uint64))
                    - np.uint64(1))
    V = full.copy()
    if w == 1:
        Vc, Fc = V[:, 0], full[:, 0]
        for j in range(lmax):
            U = Vc & M[j, :, 0]
            Vc = ((Vc + U) | (Vc ^ U)) & Fc  # V - U == V ^ U since U is a subset of V
        V[:, 0] = Vc
    else:
        S = np.empty_like(V)
        for j in range(lmax):
            U = V & M[j]
            carry = np.zeros(C, dtype=np.uint64)
            for wi in range(w):  # multi-word addition with carry
                s = V[:, wi] + U[:, wi]
                c1 = s < V[:, wi]
                s2 = s + carry
                carry = (c1 | (s2 < s)).astype(np.uint64)
                S[:, wi] = s2
            V = (S | (V ^ U)) & full
    return la - np.bitwise_count(V).sum(axis=1).astype(np.int64)
