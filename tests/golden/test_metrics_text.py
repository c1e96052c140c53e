"""Text metrics: equal to sacrebleu and rouge-score on English, sensible on CJK."""

from __future__ import annotations

import math
import random

import pytest
import sacrebleu
from rouge_score import rouge_scorer
from rouge_score import tokenize as rs_tokenize
from rouge_score.tokenizers import DefaultTokenizer
from sacrebleu.metrics.bleu import BLEU

from localeval.errors import UsageError
from localeval.metrics import Judging, parse_metrics
from localeval.metrics.bleu import Bleu, corpus_bleu, corpus_bleu_from_scores, weighted_bleu
from localeval.metrics.rouge import Rouge1, Rouge2, RougeL, rouge_scores
from localeval.lang.tokenize import RougeTokenizer, ja_words, rouge_tokens, words, zh_words
from localeval.types import Sample

KINDS = ("rouge1", "rouge2", "rougeL")

# Words with what tokenizers disagree about: case, punctuation, hyphens,
# apostrophes, numbers, accents, stemmable suffixes.
_WORDS = ("the a of cat cats running runs ran jumped jumps over lazy dog dogs "
          "quick brown fox generously generous happily happiness organization "
          "organizations state-of-the-art don't it's U.S. 3.14 1,000 2024 "
          "café naïve Straße ÉCOLE résumé x86_64 e-mail C++ (see) \"quoted\" "
          "end. end, end! end? — – … ½ ² Ⅻ İstanbul").split()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _pairs(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        # Mostly short sentences; some over 64 and 128 tokens (multi-word LCS).
        length = rng.choice([0, 1, 2, 3]) if i % 17 == 0 else (
            rng.randint(60, 200) if i % 7 == 0 else rng.randint(3, 30))
        ref = _sentence(rng, length)
        toks = ref.split()
        hyp = [t for t in toks if rng.random() > 0.3]
        for _ in range(rng.randint(0, 4)):
            hyp.insert(rng.randint(0, len(hyp)), rng.choice(_WORDS))
        pairs.append((ref, " ".join(hyp) if i % 23 else ""))
    return pairs


def _samples(pairs) -> list[Sample]:
    return [Sample(id=str(i), reference=r, answer=h) for i, (r, h) in enumerate(pairs)]


# -- ROUGE -----------------------------------------------------------------------
def test_corrected_rouge_example_from_metrics_md():
    s = Sample(id="1", reference="The quick brown fox jumps over the lazy dog.",
               answer="The brown fox jumped over the dog.")
    r2 = Rouge2(measure="r").score(s)
    assert r2.value == pytest.approx(0.25)  # "brown fox", "over the": 2 / 8
    assert Rouge1(measure="r").score(s).value == pytest.approx(6 / 9)
    rl = RougeL().score(s)
    assert rl.details["recall"] == pytest.approx(6 / 9)
    assert rl.details["precision"] == pytest.approx(6 / 7)
    assert rl.value == pytest.approx(2 * (6 / 7) * (6 / 9) / (6 / 7 + 6 / 9))
    ref = rouge_scorer.RougeScorer(list(KINDS)).score(s.reference, s.answer)
    assert r2.details["fmeasure"] == ref["rouge2"].fmeasure


def test_measure_selects_value_details_keep_all():
    s = Sample(id="1", reference="a b c d", answer="a b x")
    p, r, f = (Rouge1(measure=m).score(s) for m in "prf")
    assert (p.value, r.value) == (pytest.approx(2 / 3), pytest.approx(0.5))
    assert f.value == pytest.approx(f.details["fmeasure"])
    assert set(f.details) >= {"precision", "recall", "fmeasure"}


@pytest.mark.parametrize("stem", [False, True])
def test_rouge_equals_rouge_score(stem):
    pairs = _pairs(400, seed=stem)
    scorer = rouge_scorer.RougeScorer(list(KINDS), use_stemmer=stem)
    samples = _samples(pairs)
    ours = {m.kind: m.score_batch(samples, None)
            for m in (Rouge1(stem=stem), Rouge2(stem=stem), RougeL(stem=stem))}
    for i, (ref, hyp) in enumerate(pairs):
        expected = scorer.score(ref, hyp)
        for kind in KINDS:
            d = ours[kind][i].details
            e = expected[kind]
            # Bit-identical: same counts, same arithmetic.
            assert (d["precision"], d["recall"], d["fmeasure"]) == (
                e.precision, e.recall, e.fmeasure), (kind, ref, hyp)


@pytest.mark.parametrize("stem", [False, True])
def test_english_tokens_identical_to_rouge_score(stem):
    tok = DefaultTokenizer(use_stemmer=stem)
    texts = [p for pair in _pairs(200, seed=3) for p in pair] + [
        "İstanbul ǅ ﬁ ß ẞ ½ ² ①", "  leading and trailing  ", "ÀÉÎÕÜ àéîõü", "", "---"]
    for t in texts:
        assert list(rouge_tokens(t, "en", stem)) == tok.tokenize(t)
        assert list(rouge_tokens(t, "en", False)) == rs_tokenize.tokenize(t, None)


def test_rouge_scores_function_all_kinds_at_once():
    pairs = _pairs(50, seed=9)
    res = rouge_scores([r for r, _ in pairs], [h for _, h in pairs], KINDS)
    scorer = rouge_scorer.RougeScorer(list(KINDS))
    for i, (r, h) in enumerate(pairs):
        e = scorer.score(r, h)
        for kind in KINDS:
            assert tuple(res[kind][i]) == (e[kind].precision, e[kind].recall, e[kind].fmeasure)


# -- CJK -------------------------------------------------------------------------
JA = "東京都の人口は約千四百万人で、日本で最も多い。"
ZH = "北京是中华人民共和国的首都，也是全国的政治中心。"


def test_rouge_score_default_tokenizer_scores_identical_japanese_zero():
    # The known complaint this module fixes.
    scorer = rouge_scorer.RougeScorer(list(KINDS))
    assert all(scorer.score(JA, JA)[k].fmeasure == 0.0 for k in KINDS)
    assert all(scorer.score(ZH, ZH)[k].fmeasure == 0.0 for k in KINDS)


@pytest.mark.parametrize("text,lang", [(JA, "ja"), (ZH, "zh")])
def test_identical_cjk_strings_score_one(text, lang):
    s = Sample(id="1", reference=text, answer=text)
    for m in (Rouge1(), Rouge2(), RougeL(), Rouge1(lang=lang), RougeL(stem=True)):
        score = m.score(s)
        assert score.value == 1.0 and score.details["lang"] == lang
    bleu = Bleu().score(s)
    assert bleu.value == pytest.approx(1.0) and bleu.details["tokenize"] == (
        "ja-fugashi" if lang == "ja" else "zh-jieba")


def test_cjk_tokenisers_split_words():
    assert ja_words("東京都に住んでいます。") == ["東京", "都", "に", "住ん", "で", "い", "ます", "。"]
    assert zh_words("我来到北京清华大学") == ["我", "来到", "北京", "清华大学"]
    assert words("hello  world") == ["hello", "world"]
    assert words(JA, "auto") == ja_words(JA)
    # ROUGE tokens drop punctuation, fold full-width forms, lowercase Latin.
    assert rouge_tokens("ＡＢＣ社の新製品。", "ja") == ("abc", "社", "の", "新", "製品")


def test_japanese_partial_overlap_and_engine_matches_rouge_score_with_our_tokens():
    pairs = [("東京都に住んでいます。", "大阪に住んでいます。"),
             ("猫が好きです", "犬が好きです"),
             ("今日は雨が降っています", "明日は晴れるでしょう"),
             (JA, JA[:10])]
    scorer = rouge_scorer.RougeScorer(list(KINDS), tokenizer=RougeTokenizer("ja"))
    res = rouge_scores([r for r, _ in pairs], [h for _, h in pairs], KINDS, langs="ja")
    for i, (r, h) in enumerate(pairs):
        e = scorer.score(r, h)
        for kind in KINDS:
            assert tuple(res[kind][i]) == (e[kind].precision, e[kind].recall, e[kind].fmeasure)
    assert 0 < res["rouge1"][0][2] < 1


def test_pair_language_detected_from_both_sides():
    # A kanji-only answer alone would look Chinese; with its Japanese
    # reference the pair is Japanese and both sides are tokenised alike.
    s = Sample(id="1", reference="東京都庁に行きます", answer="東京都庁")
    score = Rouge1().score(s)
    assert score.details["lang"] == "ja" and score.details["precision"] == 1.0
    # The run's --lang (Judging.lang) overrides detection; the metric's own lang wins over both.
    assert Rouge1().score(s, Judging(lang="zh")).details["lang"] == "zh"
    assert Rouge1(lang="ja").score(s, Judging(lang="zh")).details["lang"] == "ja"


# -- BLEU ------------------------------------------------------------------------
def _sb(score: float) -> float:
    """sacrebleu's score on localeval's 0-1 scale, capped at 1: sacrebleu gives
    100.00000000000004 for identical texts (rounding in its exp(mean(log p))), localeval
    exactly 1.0; every other value is sacrebleu's to the last bit."""
    return min(1.0, score / 100.0)


def test_bleu_equals_sacrebleu_sentence_bleu():
    pairs = _pairs(300, seed=4)
    scores = Bleu().score_batch(_samples(pairs), None)
    for (ref, hyp), score in zip(pairs, scores):
        assert score.value == _sb(sacrebleu.sentence_bleu(hyp, [ref]).score), (ref, hyp)


@pytest.mark.parametrize("smoothing", ["none", "floor", "add-k", "exp"])
@pytest.mark.parametrize("tokenize", ["13a", "intl", "char"])
def test_bleu_smoothing_and_tokenizers_equal_sacrebleu(smoothing, tokenize):
    pairs = _pairs(60, seed=5)
    metric = _one(f"bleu:smoothing={smoothing},tokenize={tokenize}")
    got = metric.score_batch(_samples(pairs), None)
    for (ref, hyp), score in zip(pairs, got):
        expected = sacrebleu.sentence_bleu(hyp, [ref], smooth_method=smoothing,
                                           tokenize=tokenize).score
        assert score.value == _sb(expected)


def test_bleu_max_order_lowercase_and_smooth_value():
    pairs = _pairs(80, seed=6)
    samples = _samples(pairs)
    m = _one("bleu:max_order=2,lowercase=true,smoothing=floor,smooth_value=0.3")
    ref = BLEU(max_ngram_order=2, lowercase=True, smooth_method="floor", smooth_value=0.3,
               effective_order=True)
    for (r, h), score in zip(pairs, m.score_batch(samples, None)):
        assert score.value == _sb(ref.sentence_score(h, [r]).score)


def test_corpus_bleu_equals_sacrebleu():
    pairs = _pairs(200, seed=8)
    samples = _samples(pairs)
    refs, hyps = [r for r, _ in pairs], [h for _, h in pairs]
    expected = _sb(sacrebleu.corpus_bleu(hyps, [refs]).score)
    assert corpus_bleu(samples).value == expected
    scores = Bleu().score_batch(samples, None)
    assert corpus_bleu_from_scores(scores).value == expected
    two = _sb(BLEU(max_ngram_order=2).corpus_score(hyps, [refs]).score)
    assert corpus_bleu(samples, "bleu:max_order=2").value == two


def test_weighted_bleu_reduces_to_sacrebleu_for_uniform_weights():
    rng = random.Random(0)
    for _ in range(300):
        order = rng.randint(1, 5)
        hyp_len = rng.randint(0, 12)
        total = [max(hyp_len - n, 0) for n in range(order)]
        correct = [rng.randint(0, t) for t in total]
        ref_len = rng.randint(0, 14)
        for smoothing in ("none", "floor", "add-k", "exp"):
            for eff in (False, True):
                expected = BLEU.compute_bleu(list(correct), list(total), hyp_len, ref_len,
                                             smoothing, None, eff, order).score
                got = weighted_bleu(correct, total, hyp_len, ref_len, [1 / order] * order,
                                    smoothing, None, eff)
                assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_bleu_custom_weights_by_hand():
    # The Japanese RAG-metrics article's example with 2-gram weights. Hyp "the cat is on the mat" (6
    # tokens) vs "there is a cat on the mat" (7): unigram matches 5/6, bigram
    # ("on the", "the mat") 2/5, brevity penalty exp(1 - 7/6).
    s = Sample(id="1", reference="there is a cat on the mat", answer="the cat is on the mat")
    bp = math.exp(1 - 7 / 6)
    uniform = bp * math.exp(0.5 * math.log(5 / 6) + 0.5 * math.log(2 / 5))
    assert _one("bleu:max_order=2").score(s).value == pytest.approx(uniform, rel=1e-12)
    assert _one("bleu:weights=0.5,0.5,0,0").score(s).value == pytest.approx(uniform, rel=1e-12)
    skewed = bp * math.exp(0.75 * math.log(5 / 6) + 0.25 * math.log(2 / 5))
    got = _one("bleu:max_order=2,weights=0.75,0.25").score(s)
    assert got.value == pytest.approx(skewed, rel=1e-12)
    assert got.details["counts"] == [5, 2] and got.details["totals"] == [6, 5]


def test_bleu_parameter_errors():
    with pytest.raises(UsageError, match="max_order"):
        parse_metrics("bleu:weights=0.5,0.5")
    for spec in ("bleu:smoothing=magic", "bleu:tokenize=nope", "bleu:tokenize=spm",
                 "bleu:max_order=0",
                 "bleu:max_order=2,weights=-1,2", "rouge1:measure=x", "rougeL:lang=fr"):
        with pytest.raises(UsageError):
            parse_metrics(spec)


def test_missing_fields_unscored():
    s = Sample(id="1", reference="a b c")
    for m in (Bleu(), Rouge1(), RougeL()):
        score = m.score_batch([s], None)[0]
        assert score.value is None and "answer" in score.reason
    assert corpus_bleu([s]).value is None


def _one(spec: str):
    (m,) = parse_metrics(spec)
    return m


def test_vectorised_engine_equals_brute_force_on_long_repetitive_sequences():
    # Small alphabets and lengths across the 64-bit word boundaries stress the
    # bit-parallel LCS (carries between words) and the n-gram clipping.
    from collections import Counter

    from rouge_score.rouge_scorer import _lcs_table

    from localeval.metrics.ngrams import encode_pairs, lcs_lengths, ngram_matches

    rng = random.Random(21)
    lengths = [0, 1, 2, 5, 63, 64, 65, 127, 128, 129, 200, 300]
    refs, hyps = [], []
    for i in range(600):
        alphabet = rng.choice([2, 3, 5, 30])
        la = rng.choice(lengths) if i % 2 else rng.randint(0, 40)
        lb = rng.choice(lengths) if i % 3 else rng.randint(0, 40)
        refs.append([str(rng.randrange(alphabet)) for _ in range(la)])
        hyps.append([str(rng.randrange(alphabet)) for _ in range(lb)])
    batch = encode_pairs(refs, hyps)
    lcs = lcs_lengths(batch)
    matches = ngram_matches(batch, 4)
    for i, (r, h) in enumerate(zip(refs, hyps)):
        assert lcs[i] == (_lcs_table(r, h)[-1][-1] if r and h else 0), (len(r), len(h))
        for n in range(1, 5):
            rc = Counter(tuple(r[j:j + n]) for j in range(len(r) - n + 1))
            hc = Counter(tuple(h[j:j + n]) for j in range(len(h) - n + 1))
            assert matches[i, n - 1] == sum(min(c, hc[g]) for g, c in rc.items())
