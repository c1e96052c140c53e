"""ROUGE-1/2/L, equal to Google's rouge-score (its tokenizer and stemmer).

n-gram matches and LCS lengths run vectorised over the whole dataset
(``localeval.metrics.ngrams``), and one tokenisation is shared by rouge1,
rouge2 and rougeL on the same data. Japanese and Chinese are tokenised into
words (``localeval.lang``); rouge-score would score them 0.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

from localeval.lang import rouge_tokens
from localeval.metrics.base import Metric
from localeval.metrics.model_access import Judging
from localeval.metrics.ngrams import PairBatch, encode_pairs, lcs_lengths, ngram_matches
from localeval.metrics.specs import register
from localeval.metrics.text_pairs import check_lang, filled, pair_language, split_missing
from localeval.types import Sample, Score

__all__ = ["Rouge1", "Rouge2", "RougeL", "RougeBatch", "cached_rouge_batch", "rouge_scores"]


class RougeBatch:
    """Tokens of one dataset as ids, with n-gram matches and LCS computed on
    first use, so that rouge1, rouge2 and rougeL on the same data tokenise
    and count once."""

    def __init__(self, refs: tuple[str, ...], hyps: tuple[str, ...], langs: tuple[str, ...],
                 stem: bool) -> None:
        self.batch: PairBatch = encode_pairs(
            [rouge_tokens(t, lang, stem) for t, lang in zip(refs, langs)],
            [rouge_tokens(t, lang, stem) for t, lang in zip(hyps, langs)])
        self._matches: np.ndarray | None = None
        self._lcs: np.ndarray | None = None

    def matches(self, n: int) -> np.ndarray:
        if self._matches is None or self._matches.shape[1] < n:
            self._matches = ngram_matches(self.batch, max(n, 2))
        return self._matches[:, n - 1]

    def lcs(self) -> np.ndarray:
        if self._lcs is None:
            self._lcs = lcs_lengths(self.batch)
        return self._lcs


@functools.lru_cache(maxsize=2)
def cached_rouge_batch(refs: tuple[str, ...], hyps: tuple[str, ...], langs: tuple[str, ...],
                       stem: bool) -> RougeBatch:
    """The ``RougeBatch`` of these pairs, kept for the next ROUGE metric of the run.

    Keyed on the texts themselves (tuples of already-hashed str: cheap), so
    a cache hit can never return numbers for different data. Benchmarks call
    ``cached_rouge_batch.cache_clear()`` so that no timing reuses another.
    """
    return RougeBatch(refs, hyps, langs, stem)


def _prf(overlap: np.ndarray, hyp_count: np.ndarray, ref_count: np.ndarray) -> np.ndarray:
    # rouge-score's arithmetic, in the same operation order (bit-identical).
    p = overlap / np.maximum(hyp_count, 1)
    r = overlap / np.maximum(ref_count, 1)
    denom = p + r
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(denom > 0, 2 * p * r / denom, 0.0)
    return np.stack([p, r, f], axis=1)


def rouge_scores(refs: Sequence[str], hyps: Sequence[str], kinds: Sequence[str] = (
        "rouge1", "rouge2", "rougeL"), *, stem: bool = False,
        langs: Sequence[str] | str = "en") -> dict[str, np.ndarray]:
    """ROUGE of many (reference, hypothesis) pairs: ``{kind: array (n, 3)}``
    with columns precision, recall, F1, equal to rouge-score's
    ``RougeScorer(kinds, use_stemmer=stem).score(ref, hyp)`` for English.

    ``langs`` is one language for all pairs or one per pair (en, ja, zh;
    ``auto`` detects each text's own language).
    """
    if len(refs) != len(hyps):
        raise ValueError("refs and hyps differ in length")
    langs_t = (langs,) * len(refs) if isinstance(langs, str) else tuple(langs)
    rb = cached_rouge_batch(tuple(refs), tuple(hyps), langs_t, bool(stem))
    b = rb.batch
    out: dict[str, np.ndarray] = {}
    for kind in kinds:
        if kind == "rougeL":
            lcs = rb.lcs()
            res = _prf(lcs, b.hyp_len, b.ref_len)
            res[(b.hyp_len == 0) | (b.ref_len == 0)] = 0.0
        elif kind.startswith("rouge") and kind[5:].isdigit() and int(kind[5:]) > 0:
            n = int(kind[5:])
            res = _prf(rb.matches(n), np.maximum(b.hyp_len - n + 1, 0),
                       np.maximum(b.ref_len - n + 1, 0))
        else:
            raise ValueError(f"unknown ROUGE type {kind!r}")
        out[kind] = res
    return out


@dataclass(frozen=True)
class _Rouge(Metric):
    """ROUGE of the answer against the reference, rouge-score's definition.

    ``measure`` picks the value (f = F1, p = precision, r = recall); details
    always carry all three. ``stem`` is rouge-score's ``use_stemmer`` (Porter,
    words longer than 3 characters). ``lang``: ``auto`` (run's ``--lang``, else
    detected per pair), ``en`` (rouge-score's tokenizer), ``ja`` (fugashi
    morphemes), ``zh`` (jieba words).
    """

    kind = ""
    requires = ("answer", "reference")

    stem: bool = False
    measure: Literal["f", "p", "r"] = "f"
    lang: str = "auto"

    def __post_init__(self) -> None:
        if self.measure not in ("f", "p", "r"):
            raise ValueError("measure must be f, p or r")
        check_lang(self.lang)

    def score(self, sample: Sample, ctx: Judging | None = None) -> Score:
        return self.score_batch([sample], ctx)[0]

    def score_batch(self, samples: Sequence[Sample], ctx: Judging | None = None) -> list[Score]:
        out, todo = split_missing(samples, self.requires)
        # split_missing leaves out samples without either text
        refs = [samples[i].reference or "" for i in todo]
        hyps = [samples[i].answer or "" for i in todo]
        langs = [pair_language(self.lang, ctx, r, h) for r, h in zip(refs, hyps)]
        res = rouge_scores(refs, hyps, (self.kind,), stem=self.stem, langs=langs)[self.kind]
        col = {"p": 0, "r": 1, "f": 2}[self.measure]
        for i, (p, r, f), lang in zip(todo, res.tolist(), langs):
            out[i] = Score((p, r, f)[col], details={"precision": p, "recall": r, "fmeasure": f,
                                                    "lang": lang})
        return filled(out)


@register
@dataclass(frozen=True)
class Rouge1(_Rouge):
    name = "rouge1"
    kind = "rouge1"
    description = "ROUGE-1 (unigram overlap) of the answer against the reference"


@register
@dataclass(frozen=True)
class Rouge2(_Rouge):
    name = "rouge2"
    kind = "rouge2"
    description = "ROUGE-2 (bigram overlap) of the answer against the reference"


@register
@dataclass(frozen=True)
class RougeL(_Rouge):
    name = "rougeL"
    kind = "rougeL"
    description = "ROUGE-L (longest common subsequence) of the answer against the reference"
