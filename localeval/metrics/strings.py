"""String metrics without a model, as in ragas: exact_match, string_presence and
non_llm_string_similarity.

They compare the answer with the reference character by character, so they
need no tokeniser and treat Japanese and Chinese like any other script (a
kanji is one character, as a letter is). What CJK text does need is
``normalize=true``: NFKC folds full-width Latin, digits and half-width kana
(``ＡＢＣ１２３`` equals ``ABC123``), case is folded and outer punctuation
(``。``, ``！``) does not make two answers differ. It is off by default so the
numbers equal ragas's. Distances come from rapidfuzz (ragas's own
dependency), the maintained C++ implementation of Levenshtein, Hamming,
Jaro and Jaro-Winkler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Sequence

from localeval.lang import normalise
from localeval.metrics.base import Metric
from localeval.metrics.model_access import Judging
from localeval.metrics.specs import register
from localeval.metrics.text_pairs import filled, split_missing
from localeval.types import Sample, Score

__all__ = ["ExactMatch", "StringPresence", "NonLLMStringSimilarity", "DISTANCES",
           "string_similarity"]

Distance = Literal["levenshtein", "hamming", "jaro", "jaro_winkler"]
DISTANCES: tuple[str, ...] = ("levenshtein", "hamming", "jaro", "jaro_winkler")


def _distance_class(name: str) -> Any:
    from rapidfuzz import distance  # lazy: not needed by `localeval --help`

    return {"levenshtein": distance.Levenshtein, "hamming": distance.Hamming,
            "jaro": distance.Jaro, "jaro_winkler": distance.JaroWinkler}[name]


def string_similarity(reference: str, answer: str, measure: str = "levenshtein") -> float:
    """1 - rapidfuzz's normalised distance, ragas's NonLLMStringSimilarity value.

    Hamming on strings of different lengths counts the missing tail as
    substitutions (rapidfuzz pads), as ragas does.
    """
    return 1.0 - float(_distance_class(measure).normalized_distance(reference, answer))


@dataclass(frozen=True)
class _StringPair(Metric):
    """The answer against the reference, one pair at a time (it is cheap)."""

    requires: ClassVar[tuple[str, ...]] = ("answer", "reference")

    normalize: bool = False

    def _texts(self, s: Sample) -> tuple[str, str]:
        ref, ans = s.reference or "", s.answer or ""
        return (normalise(ref), normalise(ans)) if self.normalize else (ref, ans)

    def _value(self, ref: str, ans: str) -> float:
        raise NotImplementedError

    def score(self, sample: Sample, ctx: Judging | None = None) -> Score:
        return self.score_batch([sample], ctx)[0]

    def score_batch(self, samples: Sequence[Sample], ctx: Judging | None = None) -> list[Score]:
        out, todo = split_missing(samples, self.requires)
        for i in todo:
            ref, ans = self._texts(samples[i])
            out[i] = Score(self._value(ref, ans),
                           details={"normalized": True} if self.normalize else {})
        return filled(out)


@register
@dataclass(frozen=True)
class ExactMatch(_StringPair):
    """1.0 when the answer equals the reference, else 0.0."""

    name: ClassVar[str] = "exact_match"
    description: ClassVar[str] = "answer == reference (normalize=true: NFKC, case, outer punctuation)"

    def _value(self, ref: str, ans: str) -> float:
        return float(ref == ans)


@register
@dataclass(frozen=True)
class StringPresence(_StringPair):
    """1.0 when the reference occurs in the answer (ragas's StringPresence)."""

    name: ClassVar[str] = "string_presence"
    aliases: ClassVar[tuple[str, ...]] = ("string_present",)
    description: ClassVar[str] = "reference is a substring of the answer"

    def _value(self, ref: str, ans: str) -> float:
        return float(ref in ans)


@register
@dataclass(frozen=True)
class NonLLMStringSimilarity(_StringPair):
    """1 - normalised edit distance of answer and reference (rapidfuzz)."""

    name: ClassVar[str] = "non_llm_string_similarity"
    description: ClassVar[str] = "1 - normalised Levenshtein / Hamming / Jaro / Jaro-Winkler distance"

    distance: Distance = "levenshtein"

    def __post_init__(self) -> None:
        if self.distance not in DISTANCES:
            raise ValueError(f"distance must be one of {', '.join(DISTANCES)}")

    def _value(self, ref: str, ans: str) -> float:
        return string_similarity(ref, ans, self.distance)
