"""Checkers: small models that say whether a document supports a claim, run in-process
by transformers on CPU or GPU, batched and cached, beside the generative judge.

Modules: ``base`` (the ``Checker`` protocol, ``Span``, the device), ``layout`` (a
folder's family, input format and label map from its config and the optional
``localeval_checker.json``, checked before any weight is read), ``load``
(``load_checker``, the folder's fingerprint), ``engine`` (tokens and batches),
``pair`` (MiniCheck-RoBERTa/DeBERTa, HHEM), ``hhem`` (HHEM's weights read without
its code), ``text2text`` (MiniCheck-Flan-T5), ``span`` (LettuceDetect), ``windowing``
(``windows``: documents cut to a checker's window), ``cached`` (``CachedChecker``).
docs/checkers.md says what each family reads and where its format comes from.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "FAMILIES": ".base",
    "Checker": ".base",
    "Family": ".base",
    "Span": ".base",
    "pick_device": ".base",
    "SETTINGS_FILE": ".layout",
    "Layout": ".layout",
    "read_layout": ".layout",
    "checker_fingerprint": ".load",
    "folder_digest": ".load",
    "load_checker": ".load",
    "windows": ".windowing",
    "CachedChecker": ".cached",
    "HHEM_PROMPT": ".pair",
    "pair_text": ".pair",
    "t5_text": ".text2text",
    "lettuce_prompt": ".span",
    "FOUNDATION_DIR": ".hhem",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
