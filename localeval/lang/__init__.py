"""Language: detection, sentence splitting and word tokenisation for en/ja/zh.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "CJK_CHAR": ".detect",
    "CJK_RUN": ".detect",
    "LANGS": ".detect",
    "auto_bleu_tokenizer": ".tokenize",
    "bleu_tokens": ".tokenize",
    "check_bleu_tokenizer": ".tokenize",
    "detect_lang": ".detect",
    "normalise": ".matching",
    "normalised_pieces": ".matching",
    "porter_stem": ".tokenize",
    "resolve_lang": ".detect",
    "rouge_tokens": ".tokenize",
    "split_sentences": ".detect",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
