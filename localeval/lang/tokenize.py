"""Language-aware tokenisation for the text metrics (BLEU, ROUGE), and the word tokens
other parts of localeval count (example-copy detection, generated-text loops, BM25,
the diff view's word diff), each a named function at the end of this module.

Why this module exists: BLEU and ROUGE count word n-grams, so their numbers
depend entirely on what a "word" is. The reference tools get English right
and CJK wrong:

- rouge-score keeps only ``[a-z0-9]`` after lowercasing, so Japanese and
  Chinese text has no tokens at all and identical strings score 0.
- sacrebleu's ``ja-mecab`` tokenizer needs MeCab with ipadic (not installed
  here); its ``zh`` tokenizer splits every Han character.

So English goes through the reference tokenizers unchanged (rouge-score's
own function and sacrebleu's own tokenizer objects, so our numbers equal
theirs), and Japanese goes through a morphological analyser (fugashi with
unidic-lite: the MeCab engine with a dictionary that ships as a wheel),
Chinese through jieba's word segmenter.

Both analysers are imported lazily: ``localeval --help`` and the retrieval
metrics never pay for them.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import unicodedata
from typing import Callable

from localeval.lang.detect import CJK_CHAR, CJK_RUN, LANGS, detect_lang
from localeval.lang.matching import normalise

__all__ = [
    "ja_words",
    "zh_words",
    "words",
    "rouge_tokens",
    "RougeTokenizer",
    "porter_stem",
    "bleu_tokens",
    "bleu_tokenizer_names",
    "check_bleu_tokenizer",
    "auto_bleu_tokenizer",
    "cjk_bigrams",
    "copy_tokens",
    "char_words",
    "lexical_tokens",
    "diff_pieces",
]

_local = threading.local()


def _ja_tagger():
    # A MeCab tagger is not safe to share between threads; one per thread.
    tagger = getattr(_local, "ja_tagger", None)
    if tagger is None:
        import fugashi  # lazy: C extension plus a 50 MB dictionary

        try:
            tagger = fugashi.Tagger()  # finds unidic-lite when it is installed
        except RuntimeError as e:  # pragma: no cover - broken install
            from localeval.errors import ModelError

            raise ModelError(
                f"Japanese tokenizer unavailable (fugashi + unidic-lite): {e}") from None
        _local.ja_tagger = tagger
    return tagger


_jieba_lock = threading.Lock()
_jieba_ready = False


def _jieba():
    global _jieba_ready
    import jieba  # lazy: loads a prefix dictionary (~0.5 s) on first use

    if not _jieba_ready:
        with _jieba_lock:
            if not _jieba_ready:
                # jieba logs "Building prefix dict..." at DEBUG to stderr; keep runs quiet.
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba_ready = True
    return jieba


def _split_ws(tokens) -> list[str]:
    # Analysers emit whitespace as tokens (jieba: " ", unidic: U+3000); BLEU
    # and ROUGE never count whitespace, and a token never contains it.
    return [p for t in tokens for p in t.split()]


def ja_words(text: str) -> list[str]:
    """Japanese morphemes (surface forms) from fugashi + unidic-lite."""
    return _split_ws(w.surface for w in _ja_tagger()(text))


def zh_words(text: str) -> list[str]:
    """Chinese words from jieba's default (precise, HMM) mode."""
    return _split_ws(_jieba().lcut(text))


def words(text: str, lang: str = "auto") -> list[str]:
    """Words of ``text`` in its language: morphemes for Japanese, jieba words
    for Chinese, whitespace-separated tokens otherwise. ``lang="auto"`` detects
    the language of this text (``localeval.lang.detect_lang``).
    """
    lang = detect_lang(text) if lang == "auto" else lang
    if lang == "ja":
        return ja_words(text)
    if lang == "zh":
        return zh_words(text)
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; use auto, en, ja or zh")
    return text.split()


# -- ROUGE ---------------------------------------------------------------------
_VALID = re.compile(r"^[a-z0-9]+$")


@functools.cache
def _porter():
    from nltk.stem import porter

    # The same stemmer object rouge-score builds (nltk's default mode).
    return porter.PorterStemmer()


@functools.lru_cache(maxsize=1 << 18)
def porter_stem(word: str) -> str:
    """rouge-score's stemming of one token, memoised.

    rouge-score calls nltk's Porter stemmer for every token of every text;
    that call dominates its run time with ``use_stemmer=True``. Vocabularies
    are small, so a cache makes stemming nearly free.
    """
    return _porter().stem(word) if len(word) > 3 else word


_ALNUM_RUN = re.compile(r"[a-z0-9]+")


def _rouge_en(text: str, stem: bool) -> tuple[str, ...]:
    # rouge-score lowercases, replaces every run of non-[a-z0-9] characters
    # with a space, splits on whitespace and drops empty tokens: exactly the
    # maximal [a-z0-9] runs of the lowercased text, found here in one regex
    # pass (rouge-score's three passes are most of its run time). Tests check
    # token identity with rouge_score.tokenize on random and odd Unicode text.
    toks = _ALNUM_RUN.findall(text.lower())
    if stem:
        # Stem in rouge-score's order (stem, then drop non-[a-z0-9]+ results),
        # through the cache.
        toks = [s for s in map(porter_stem, toks) if _VALID.match(s)]
    return tuple(toks)


def _rouge_cjk(text: str, lang: str, stem: bool) -> tuple[str, ...]:
    # NFKC folds full-width Latin and half-width kana to one form; lowercase
    # like rouge-score; drop punctuation-only tokens (rouge-score drops all
    # non-alphanumerics). Latin words inside CJK text are stemmed like English.
    text = unicodedata.normalize("NFKC", text).lower()
    toks = ja_words(text) if lang == "ja" else zh_words(text)
    out = [t for t in toks if any(c.isalnum() for c in t)]
    if stem:
        out = [porter_stem(t) if _VALID.match(t) else t for t in out]
    return tuple(out)


def rouge_tokens(text: str, lang: str = "en", stem: bool = False) -> tuple[str, ...]:
    """Tokens ROUGE counts for ``text``.

    ``lang="en"``: exactly rouge-score's tokens (lowercase, ``[a-z0-9]+``,
    optional Porter stemming of words longer than 3 characters).
    ``"ja"`` / ``"zh"``: morphemes / jieba words, NFKC-normalised, lowercased,
    punctuation-only tokens dropped. ``"auto"``: detect this text's language.
    """
    if lang == "auto":
        lang = detect_lang(text)
    if lang == "en":
        return _rouge_en(text, stem)
    if lang in ("ja", "zh"):
        return _rouge_cjk(text, lang, stem)
    raise ValueError(f"unknown language {lang!r}; use auto, en, ja or zh")


class RougeTokenizer:
    """``rouge_score.tokenizers.Tokenizer``-compatible wrapper of ``rouge_tokens``.

    Lets ``rouge_scorer.RougeScorer(types, tokenizer=RougeTokenizer("ja"))``
    score Japanese with the tokens localeval uses.
    """

    def __init__(self, lang: str = "auto", stem: bool = False) -> None:
        self.lang, self.stem = lang, stem

    def tokenize(self, text: str) -> list[str]:
        return list(rouge_tokens(text, self.lang, self.stem))


# -- BLEU ----------------------------------------------------------------------
#: Tokenizers localeval adds to sacrebleu's own ('13a', 'intl', 'zh', 'char', 'none', ...).
_OWN_BLEU = {"ja-fugashi": ja_words, "zh-jieba": zh_words}


# sacrebleu tokenizers usable offline. Its 'spm' / 'flores*' / 'spBLEU-1K'
# tokenizers download a SentencePiece model on first use, which an offline
# evaluator must never do, so they are not offered.
_SACRE_BLEU = ("13a", "intl", "zh", "char", "none", "ja-mecab", "ko-mecab")


def bleu_tokenizer_names() -> tuple[str, ...]:
    """Accepted ``tokenize`` values of the bleu metric (besides ``auto``)."""
    return tuple(_OWN_BLEU) + _SACRE_BLEU


def check_bleu_tokenizer(name: str) -> None:
    """Raise ValueError unless ``name`` is a usable BLEU tokenizer here."""
    if name not in bleu_tokenizer_names():
        raise ValueError(f"unknown tokenize {name!r}; use auto or one of "
                         + ", ".join(bleu_tokenizer_names()))
    if name in ("ja-mecab", "ko-mecab"):
        try:
            _sacre_tokenizer(name)
        except (ImportError, RuntimeError):
            extra = "ja" if name.startswith("ja") else "ko"
            raise ValueError(f"tokenize {name!r} needs MeCab (pip install 'sacrebleu[{extra}]')"
                             + ("; ja-fugashi works without it" if extra == "ja" else "")
                             ) from None


def auto_bleu_tokenizer(lang: str) -> str:
    """Tokenizer ``tokenize="auto"`` picks: sacrebleu's 13a for English (the
    WMT standard), fugashi for Japanese, jieba for Chinese."""
    return {"ja": "ja-fugashi", "zh": "zh-jieba"}.get(lang, "13a")


@functools.cache
def _sacre_tokenizer(name: str) -> Callable[[str], str]:
    from sacrebleu.metrics.bleu import BLEU

    # BLEU(tokenize=...).tokenizer is sacrebleu's public way to get the
    # tokenizer object (it has its own lru_cache).
    return BLEU(tokenize=name).tokenizer


def bleu_tokens(text: str, tokenize: str, lowercase: bool = False) -> list[str]:
    """Tokens BLEU counts, as sacrebleu makes them: optional lowercasing,
    right-strip, tokenizer, split on whitespace."""
    if lowercase:
        text = text.lower()
    text = text.rstrip()
    own = _OWN_BLEU.get(tokenize)
    if own is not None:
        return own(text)
    return _sacre_tokenizer(tokenize)(text).split()


# -- word tokens counted outside the text metrics ----------------------------------
# Four parts of localeval cut text into tokens for their own counts; each cut is
# named here, beside the metrics' ones, so that none is a private copy and each
# says what it is for. They differ on purpose (see each docstring).

#: Katakana and Han (no hiragana: particles and endings, not names).
_NAME_CJK_RUN = re.compile(r"[\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_NAME_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+|\d[\d.,:/-]*")
_ANY_WORD = re.compile(r"\w+")
_LETTERS_OR_DIGITS = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_DIFF_PIECE = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


def cjk_bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a run of CJK characters (the run itself when it is
    one character): the usual index terms for text written without spaces."""
    return [run[i:i + 2] for i in range(max(1, len(run) - 1))]


def copy_tokens(text: str, *, distinctive: bool) -> set[str]:
    """The tokens by which a judge's reply is caught copying a prompt's example.

    Latin words of two or more letters and numbers (``normalise``d), and bigrams
    of katakana and Han runs; with ``distinctive`` only capitalised words and
    numbers: names and figures, which an answer cannot share with an example
    by chance. Hiragana are left out: they are particles and endings.
    """
    out = set()
    for w in _NAME_WORD.findall(text):
        if not distinctive or w[0].isupper() or w[0].isdigit():
            out.add(normalise(w))
    for run in _NAME_CJK_RUN.findall(text):
        out.update(cjk_bigrams(run))
    out.discard("")
    return out


def char_words(text: str) -> list[str]:
    """Lower-cased words (``\\w+``), a word with a Japanese or Chinese character in it split
    into its characters: the units in which a loop of generated text repeats."""
    out: list[str] = []
    for w in _ANY_WORD.findall(text.lower()):
        out.extend(list(w) if CJK_CHAR.search(w) else [w])
    return out


def lexical_tokens(text: str) -> list[str]:
    """BM25's terms: NFKC-folded, case-folded runs of letters and of digits, and runs of
    kana and Han as character bigrams (``cjk_bigrams``), bigrams first.

    NFKC and ``casefold`` make full-width and half-width forms and case one
    term; bigrams find Japanese and Chinese words without a segmenter, as
    lexical retrieval of CJK text usually does.
    """
    t = unicodedata.normalize("NFKC", text).casefold()
    out: list[str] = []
    for run in CJK_RUN.findall(t):
        out.extend(cjk_bigrams(run))
    out.extend(_LETTERS_OR_DIGITS.findall(CJK_RUN.sub(" ", t)))
    return out


def diff_pieces(text: str) -> list[str]:
    """``text`` cut into runs of whitespace, words and single other characters, losing
    nothing (``"".join`` gives it back): the units of a word-level diff to show."""
    return _DIFF_PIECE.findall(text)
