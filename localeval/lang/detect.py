"""Language detection for the three languages localeval handles specially.

Only en / ja / zh matter here (they decide tokenisation, sentence splitting
and few-shot examples), so a script count is enough and exact: kana means
Japanese, Han without kana means Chinese. A general detector (langdetect,
fasttext) would add a dependency and a model for no gain on this decision.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["detect_lang", "LANGS", "resolve_lang", "split_sentences", "CJK_CHAR", "CJK_RUN"]

LANGS = ("en", "ja", "zh")

# The one definition of the scripts that mark Japanese and Chinese text.
_KANA_RANGES = "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # hiragana, katakana, half-width
_HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
_KANA = re.compile(f"[{_KANA_RANGES}]")
_HAN = re.compile(f"[{_HAN_RANGES}]")
#: One kana or Han character: a text that has one is not written with spaces between words.
CJK_CHAR = re.compile(f"[{_KANA_RANGES}{_HAN_RANGES}]")
#: A run of kana and Han characters (a stretch to tokenise by character).
CJK_RUN = re.compile(f"[{_KANA_RANGES}{_HAN_RANGES}]+")


def detect_lang(text: str) -> str:
    """Return "ja", "zh" or "en" (the default for everything else)."""
    if not text:
        return "en"
    if _KANA.search(text):
        return "ja"
    han = len(_HAN.findall(text))
    if han and han >= 0.1 * len(re.sub(r"\s", "", text)):
        return "zh"
    return "en"


def resolve_lang(configured: str, *texts: str | None) -> str:
    """``configured`` unless it is "auto"; then detect from the joined texts."""
    if configured and configured != "auto":
        if configured not in LANGS:
            raise ValueError(f"unknown language {configured!r}; use auto, en, ja or zh")
        return configured
    return detect_lang(" ".join(t for t in texts if t))


# Closing quotes and brackets that belong to the sentence before them.
_CLOSERS = "\"'\u201d\u2019\u300d\u300f\uff09\u300b\u3009\u3011\u3015\u3017\uff63)]}"


@lru_cache(maxsize=8)
def _segmenter(lang: str):
    import pysbd  # lazy: only the metrics that count sentences need it

    return pysbd.Segmenter(language=lang if lang in LANGS else "en", clean=False)


def split_sentences(text: str, lang: str = "en") -> list[str]:
    """Sentences of ``text`` (pysbd, as ragas uses), stripped, empty ones dropped.

    CJK fixes for pysbd ending a sentence at 。！？ inside a quotation, which
    leaves the closing quote at the start of the next segment:
    - zh: the closing quotes/brackets move back onto the previous sentence
      (``他说：“你好。”`` / ``然后走了。``), the convention of common Chinese splitters;
    - ja: the whole segment joins the previous one (``『本当か？』と聞いた。``), as
      pysbd already does for 「…。」と言った: a quote followed by と/って continues
      the sentence.
    """
    if not text or not text.strip():
        return []
    lang = lang if lang in LANGS else "en"
    out: list[str] = []
    for seg in _segmenter(lang).segment(text):
        if out and lang in ("zh", "ja"):
            stripped = seg.lstrip()
            lead = len(stripped) - len(stripped.lstrip(_CLOSERS))
            if lead and lang == "ja":
                out[-1] += stripped.rstrip()
                continue
            if lead:
                out[-1] += stripped[:lead]
                seg = stripped[lead:]
        seg = seg.strip()
        if seg:
            out.append(seg)
    return out
