"""exact_match, string_presence, non_llm_string_similarity and chrF: ragas's
definitions (rapidfuzz, sacrebleu), and Japanese / Chinese text."""

from __future__ import annotations

import pytest
from rapidfuzz import distance
from sacrebleu.metrics import CHRF

from localeval.metrics import (Chrf, ExactMatch, NonLLMStringSimilarity, StringPresence,
                               parse_metrics)
from localeval.types import Sample


def pair(answer, reference, i="p"):
    return Sample(id=i, answer=answer, reference=reference)


def test_exact_match_and_presence():
    samples = [pair("Paris", "Paris"), pair("Paris.", "Paris"), pair("It is Paris.", "Paris"),
               Sample(id="m", answer="x")]
    em = [s.value for s in ExactMatch().score_batch(samples)]
    sp = [s.value for s in StringPresence().score_batch(samples)]
    assert em[:3] == [1.0, 0.0, 0.0] and sp[:3] == [1.0, 1.0, 1.0]
    assert em[3] is None and sp[3] is None  # no reference: unscored, not 0


def test_normalize_folds_full_width_case_and_outer_punctuation():
    ja = pair("ＡＢＣ１２３です。", "abc123です")
    assert ExactMatch().score(ja).value == 0.0
    assert ExactMatch(normalize=True).score(ja).value == 1.0
    assert StringPresence(normalize=True).score(pair("答えは東京都です。", "東京都")).value == 1.0
    assert parse_metrics("exact_match:normalize=true")[0].key == "exact_match:normalize=True"


@pytest.mark.parametrize("measure, cls", [("levenshtein", distance.Levenshtein),
                                          ("hamming", distance.Hamming),
                                          ("jaro", distance.Jaro),
                                          ("jaro_winkler", distance.JaroWinkler)])
@pytest.mark.parametrize("ans, ref", [("kitten", "sitting"), ("東京都庁", "東京都"),
                                      ("北京是首都", "北京是中国首都"), ("", "abc")])
def test_string_similarity_equals_ragas(measure, cls, ans, ref):
    got = NonLLMStringSimilarity(distance=measure).score(pair(ans, ref)).value
    assert got == pytest.approx(1 - cls.normalized_distance(ref, ans))


def test_string_similarity_counts_cjk_characters():
    # one kanji of three differs: 1 - 1/3, the same as one letter of three
    assert NonLLMStringSimilarity().score(pair("東京都", "東京府")).value == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        NonLLMStringSimilarity(distance="cosine")


@pytest.mark.parametrize("ans, ref", [("The cat sat on the mat.", "A cat sat on a mat."),
                                      ("猫がマットの上に座った。", "猫はマットに座っていた。"),
                                      ("猫坐在垫子上。", "一只猫坐在垫子上。")])
def test_chrf_equals_sacrebleu(ans, ref):
    got = Chrf().score(pair(ans, ref)).value
    assert got == pytest.approx(CHRF().sentence_score(ans, [ref]).score / 100)
    assert 0 < got < 1


def test_chrf_plus_plus_segments_cjk_words():
    ja = pair("猫がマットの上に座った。", "猫はマットの上に座っていた。")
    got = Chrf(word_order=2).score(ja)
    assert got.details["lang"] == "ja"
    segmented = CHRF(word_order=2).sentence_score("猫 が マット の 上 に 座っ た 。",
                                                  ["猫 は マット の 上 に 座っ て い た 。"])
    assert got.value == pytest.approx(segmented.score / 100)
    # unsegmented, a whole Japanese sentence would be one "word": no word n-gram matches
    unsegmented = CHRF(word_order=2).sentence_score(ja.answer, [ja.reference]).score / 100
    assert got.value > unsegmented
    # character n-grams are untouched by the segmentation
    assert Chrf().score(ja).value == pytest.approx(
        CHRF().sentence_score(ja.answer, [ja.reference]).score / 100)
