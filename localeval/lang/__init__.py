"""Language: detection, sentence splitting and word tokenisation for en/ja/zh (the text
metrics' tokens, and the named token cuts other packages count: ``tokenize``).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "CJK_CHAR": ".detect",
    "CJK_RUN": ".detect",
    "LANGS": ".detect",
    "auto_bleu_tokenizer": ".tokenize",
    "bleu_tokens": ".tokenize",
    "char_words": ".tokenize",
    "check_bleu_tokenizer": ".tokenize",
    "cjk_bigrams": ".tokenize",
    "copy_tokens": ".tokenize",
    "diff_pieces": ".tokenize",
    "lexical_tokens": ".tokenize",
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
