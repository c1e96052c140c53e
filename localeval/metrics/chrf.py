"""chrF and chrF++ (sacrebleu's ``CHRF``), the answer against the reference.

chrF counts character n-grams after removing whitespace, so it needs no word
segmentation and Japanese and Chinese score correctly as they are. chrF++
(``word_order`` > 0) adds word n-grams, and sacrebleu finds words by splitting
on spaces, which CJK text has none of: a whole Japanese sentence would be
one "word". So for ``ja`` / ``zh`` pairs the texts are first segmented into
words with the tokenisers BLEU and ROUGE use (fugashi, jieba) and joined with
spaces; character n-grams are unchanged by this (whitespace is removed
before they are counted, unless ``whitespace=true``). Scores are sacrebleu's
divided by 100, like ragas's ChrfScore.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import ClassVar, Sequence

from localeval.lang import bleu_tokens
from localeval.metrics.base import Metric
from localeval.metrics.model_access import Judging
from localeval.metrics.specs import register
from localeval.metrics.text_pairs import check_lang, filled, pair_language, split_missing
from localeval.types import Sample, Score

__all__ = ["Chrf", "chrf_value"]


@functools.lru_cache(maxsize=16)
def _scorer(char_order: int, word_order: int, beta: int, lowercase: bool, whitespace: bool):
    from sacrebleu.metrics import CHRF  # lazy: sacrebleu imports regex tables

    return CHRF(char_order=char_order, word_order=word_order, beta=beta,
                lowercase=lowercase, whitespace=whitespace)


def _words(text: str, lang: str) -> str:
    # The BLEU word tokenisers of localeval.lang (fugashi / jieba), joined by spaces.
    return " ".join(bleu_tokens(text, "ja-fugashi" if lang == "ja" else "zh-jieba"))


def chrf_value(reference: str, answer: str, *, lang: str = "en", char_order: int = 6,
               word_order: int = 0, beta: int = 2, lowercase: bool = False,
               whitespace: bool = False) -> float:
    """Sentence chrF (0-1) of one pair; CJK texts are word-segmented for chrF++."""
    if word_order > 0 and lang in ("ja", "zh"):
        reference, answer = _words(reference, lang), _words(answer, lang)
    scorer = _scorer(char_order, word_order, beta, lowercase, whitespace)
    return float(scorer.sentence_score(answer, [reference]).score) / 100.0


@register
@dataclass(frozen=True)
class Chrf(Metric):
    """chrF (``word_order=2``: chrF++) of the answer against the reference."""

    name: ClassVar[str] = "chrf"
    aliases: ClassVar[tuple[str, ...]] = ("chrf_score",)
    requires: ClassVar[tuple[str, ...]] = ("answer", "reference")
    description: ClassVar[str] = "character n-gram F-score (sacrebleu chrF / 100)"

    char_order: int = 6
    word_order: int = 0
    beta: int = 2
    lowercase: bool = False
    whitespace: bool = False
    lang: str = "auto"

    def __post_init__(self) -> None:
        if self.char_order < 1 or self.word_order < 0:
            raise ValueError("char_order must be >= 1 and word_order >= 0")
        if self.beta < 1:
            raise ValueError("beta must be >= 1")
        check_lang(self.lang)

    def score(self, sample: Sample, ctx: Judging | None = None) -> Score:
        return self.score_batch([sample], ctx)[0]

    def score_batch(self, samples: Sequence[Sample], ctx: Judging | None = None) -> list[Score]:
        out, todo = split_missing(samples, self.requires)
        for i in todo:
            ref, hyp = samples[i].reference or "", samples[i].answer or ""
            # The language only matters to chrF++'s word n-grams.
            lang = pair_language(self.lang, ctx, ref, hyp) if self.word_order else "any"
            value = chrf_value(ref, hyp, lang=lang, char_order=self.char_order,
                               word_order=self.word_order, beta=self.beta,
                               lowercase=self.lowercase, whitespace=self.whitespace)
            out[i] = Score(value, details={"lang": lang} if self.word_order else {})
        return filled(out)
