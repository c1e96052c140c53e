"""The text filters of generated rows: degenerate output and near-duplicate questions.

Both look only at the texts (and, for near-duplicates, at an embedder when one is
given); neither asks a judge. Each function returns new ``Candidate`` objects:
a dropped one carries its reason (``Candidate.drop``) and what was measured.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from localeval.generate.candidates import Candidate
from localeval.lang import char_words, detect_lang, normalise
from localeval.prompts import copies_in

__all__ = ["EMPTY", "REPETITIVE", "repetition", "COPIES_CHUNK", "REFERENCE_IS_QUESTION",
           "COPIES_EXAMPLE", "WRONG_LANGUAGE",
           "NEAR_DUPLICATE", "COPY_SHARE", "COPY_RUN", "COPY_MIN_CHARS", "NEAR_JACCARD",
           "NEAR_COSINE", "chunk_copy", "language_ok", "degenerate", "near_duplicates",
           "id_order", "char_ngrams"]

# Reasons (the keys of FilterResult.counts).
EMPTY = "empty"
REPETITIVE = "repetitive"
COPIES_CHUNK = "copies_chunk"
REFERENCE_IS_QUESTION = "reference_is_question"
COPIES_EXAMPLE = "copies_example"
WRONG_LANGUAGE = "wrong_language"
NEAR_DUPLICATE = "near_duplicate"

#: A question copies its chunk when its longest verbatim run in the chunk (normalised
#: text) is at least this share of the question ...
COPY_SHARE = 0.9
#: ... (judged only for questions of at least this many normalised characters) ...
COPY_MIN_CHARS = 12
#: ... or at least this many characters long (halved for Japanese and Chinese), a
#: question that quotes whole sentences of its chunk.
COPY_RUN = 80
#: Near-duplicate questions: character 3-gram Jaccard at least this ...
NEAR_JACCARD = 0.8
#: ... or, with an embedder, a cosine at least this.
NEAR_COSINE = 0.95

#: A text loops when one run of 1-6 tokens comes back at least this many times ...
LOOP_REPEATS = 4
#: ... and its repeats make up at least this share of the text's tokens (of at least
#: LOOP_MIN_TOKENS): a small generator's "What is the answer to the question: What is
#: the answer to ..." or "これは、これは、...", written until the token limit.
LOOP_SHARE = 0.6
LOOP_MIN_TOKENS = 8

_DIGITS = re.compile(r"(\d+)")


def repetition(text: str) -> float:
    """The share of ``text``'s tokens taken by its most repeated run of 1-6 tokens, when
    that run comes back at least ``LOOP_REPEATS`` times (0.0 otherwise, and for short
    texts). Counted by hand: a loop is a property of one string, which no text library
    measures; ``n``-gram counts over one string take microseconds."""
    tokens = char_words(text)  # each Japanese or Chinese character a token
    if len(tokens) < LOOP_MIN_TOKENS:
        return 0.0
    best = 0.0
    for n in range(1, 7):
        seen: dict[tuple[str, ...], int] = {}
        for i in range(len(tokens) - n + 1):
            gram = tuple(tokens[i:i + n])
            seen[gram] = seen.get(gram, 0) + 1
        count = max(seen.values(), default=0)
        if count >= LOOP_REPEATS:
            best = max(best, min(1.0, count * n / len(tokens)))
    return best


def _no_words(text: str) -> bool:
    """Empty, or punctuation and spaces only (a lone "," written as a reference)."""
    return not any(ch.isalnum() for ch in text)


def id_order(c: Candidate) -> tuple[Any, ...]:
    """Natural order of ids: ``q2`` before ``q10`` (runs of digits compared as numbers)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in _DIGITS.split(c.id) if p)


def chunk_copy(question: str, contexts: Sequence[str]) -> tuple[float, int]:
    """(share, run): the longest run of the normalised question found verbatim in one of
    its normalised contexts, as a share of the question's length and in characters."""
    q = normalise(question)
    best = 0
    for ctx in contexts:
        c = normalise(ctx)
        if not q or not c:
            continue
        m = difflib.SequenceMatcher(None, q, c, autojunk=False).find_longest_match(
            0, len(q), 0, len(c))
        best = max(best, m.size)
    return (best / len(q) if q else 0.0), best


def _copies_chunk(share: float, run: int, question: str, lang: str) -> bool:
    n = len(normalise(question))
    long_run = COPY_RUN // 2 if lang in ("ja", "zh") else COPY_RUN
    return (n >= COPY_MIN_CHARS and share >= COPY_SHARE) or run >= long_run


def language_ok(question: str, expected: set[str]) -> tuple[bool, str]:
    """Whether the question's detected language is one of ``expected``, and that language.

    Han without kana reads as Chinese, so a Japanese question written only in kanji
    (``東京の人口は`` has kana; ``東京人口`` has none) is accepted where Japanese is
    expected; a question with kana is never Chinese.
    """
    got = detect_lang(question)
    return (got in expected or (got == "zh" and "ja" in expected)), got


def _examples_for(examples: Sequence[str] | Mapping[str, Sequence[str]],
                  c: Candidate) -> Sequence[str]:
    if isinstance(examples, Mapping):
        return list(examples.get(c.synthesizer, ())) + list(examples.get(c.lang, ()))
    return examples


def degenerate(c: Candidate, *, expected_langs: set[str],
               examples: Sequence[str] | Mapping[str, Sequence[str]] = ()) -> Candidate:
    """``c`` measured, or dropped for the first degenerate trait it shows."""
    q, ref = c.question or "", c.reference or ""
    if _no_words(q):
        return c.drop(EMPTY, empty="question")
    if _no_words(ref):
        return c.drop(EMPTY, empty="reference")
    for field, text in (("question", q), ("reference", ref)):
        loop = repetition(text)
        if loop >= LOOP_SHARE:
            return c.drop(REPETITIVE, repetitive=field, repetition=round(loop, 3))
    if normalise(q) == normalise(ref):
        return c.drop(REFERENCE_IS_QUESTION)
    share, run = chunk_copy(q, c.contexts)
    c = c.measured(chunk_copy=round(share, 4), chunk_copy_chars=run)
    if _copies_chunk(share, run, q, c.lang):
        return c.drop(COPIES_CHUNK)
    shown = _examples_for(examples, c)
    if shown:
        copied = copies_in({"question": q, "reference": ref},
                           [{"content": "\n".join(shown)}], [{"content": "\n".join(c.contexts)}])
        if copied:
            return c.drop(COPIES_EXAMPLE, copied=copied)
    ok, got = language_ok(q, expected_langs)
    if not ok:
        return c.drop(WRONG_LANGUAGE, question_lang=got,
                      expected_lang="/".join(sorted(expected_langs)))
    return c


def char_ngrams(text: str, n: int = 3) -> set[str]:
    """The character n-grams of ``text`` padded by a space (the whole text when shorter)."""
    t = f" {text} "
    return {t[i:i + n] for i in range(max(1, len(t) - n + 1))}


class _Jaccard:
    """Jaccard of character n-gram sets, a block of rows at a time (a sparse product)."""

    def __init__(self, sets: list[set[str]]) -> None:
        from scipy.sparse import csr_matrix

        vocab: dict[str, int] = {}
        rows, cols = [], []
        for i, s in enumerate(sets):
            for g in s:
                rows.append(i)
                cols.append(vocab.setdefault(g, len(vocab)))
        self.x = csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)),
                            shape=(len(sets), max(1, len(vocab))))
        self.sizes = np.array([len(s) for s in sets], dtype=np.float32)

    def rows(self, lo: int, hi: int) -> np.ndarray:
        inter = (self.x[lo:hi] @ self.x.T).toarray()
        union = self.sizes[lo:hi, None] + self.sizes[None, :] - inter
        return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


_BLOCK = 256


def near_duplicates(cands: Sequence[Candidate], *, embedder: Any = None,
                    jaccard: float = NEAR_JACCARD, cosine: float = NEAR_COSINE,
                    query_prefix: str = "") -> list[Candidate]:
    """``cands`` with near-duplicate questions dropped, the first in id order kept.

    Two questions are duplicates when their normalised texts are equal, their
    character 3-gram Jaccard is at least ``jaccard``, or (with an embedder) their
    cosine is at least ``cosine``. A question is compared with the questions kept
    before it; a dropped one names the most similar of them (``duplicate_of``)
    and the similarity.
    """
    order = sorted(range(len(cands)), key=lambda i: id_order(cands[i]))
    texts = [normalise(cands[i].question) for i in order]
    if not texts:
        return []
    jac = _Jaccard([char_ngrams(t) for t in texts])
    vecs = None
    if embedder is not None:
        vecs = np.asarray(embedder.embed([query_prefix + cands[i].question for i in order]),
                          dtype=np.float32)
    kept = np.zeros(len(order), dtype=bool)
    out: dict[int, Candidate] = {}
    for lo in range(0, len(order), _BLOCK):
        hi = min(lo + _BLOCK, len(order))
        jrows = jac.rows(lo, hi)
        crows = vecs[lo:hi] @ vecs.T if vecs is not None else None
        for pos in range(lo, hi):
            i = order[pos]
            jr = jrows[pos - lo, :pos]
            hit = jr >= jaccard  # equal normalised texts have a Jaccard of 1
            if crows is not None:
                hit |= crows[pos - lo, :pos] >= cosine
            hit &= kept[:pos]
            if not hit.any():
                kept[pos] = True
                out[i] = cands[i]
                continue
            score = jr + (crows[pos - lo, :pos] if crows is not None else 0.0)
            k = int(np.flatnonzero(hit)[np.argmax(score[hit])])
            how: dict[str, Any] = {"duplicate_of": cands[order[k]].id,
                                   "duplicate_jaccard": round(float(jr[k]), 4)}
            if crows is not None:
                how["duplicate_cosine"] = round(float(crows[pos - lo, k]), 4)
            out[i] = cands[i].drop(NEAR_DUPLICATE, **how)
    return [out[i] for i in range(len(cands))]
