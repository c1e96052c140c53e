"""Pair checkers: a classifier over one (document, claim) input -> P(supported).

Two published formats (``layout.py`` cites them):

- MiniCheck-RoBERTa/DeBERTa (and any ``*ForSequenceClassification`` with a
  supported label): the one text ``document + eos_token + claim`` (the tokenizer
  reads the eos token in the text as the special token, so RoBERTa sees
  ``<s> document </s> claim </s>``), softmax over the labels, the supported
  label's probability.
- HHEM-2.1-open: ``HHEM_PROMPT.format(text1=document, text2=claim)`` through a
  ``T5ForTokenClassification``; softmax over the first token's two logits,
  label 1 (consistent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localeval.checker.base import Family
from localeval.checker.engine import TransformersChecker

__all__ = ["MiniCheckPair", "HhemPair", "HHEM_PROMPT", "pair_text"]

#: HHEM-2.1-open's prompt (its ``config.json`` ``prompt``, the same in its code).
HHEM_PROMPT = ("<pad> Determine if the hypothesis is true given the premise?\n\n"
               "Premise: {text1}\n\nHypothesis: {text2}")

#: Special tokens a MiniCheck text adds around the document and claim (<s>, </s> x2).
_PAIR_SPECIALS = 3


def pair_text(document: str, claim: str, eos: str) -> str:
    """MiniCheck's input: ``document + eos + claim`` (``Inferencer.batch_tokenize``)."""
    return f"{document}{eos}{claim}"


class MiniCheckPair(TransformersChecker):
    """MiniCheck-RoBERTa / -DeBERTa and other sequence-classification pair checkers."""

    family: Family = "pair"

    def texts(self, pairs: Sequence[tuple[str, str]]) -> list[str]:
        """The exact strings fed to the tokenizer (documents cut to fit, never claims)."""
        eos = self.tokenizer.eos_token or self.tokenizer.sep_token or ""
        return [pair_text(self.fit(doc, claim, _PAIR_SPECIALS), claim, eos)
                for doc, claim in pairs]

    def support(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        texts = self.texts(pairs)
        return self.batched(texts, len, self._score)

    def _score(self, texts: list[str]) -> list[float]:
        import torch

        enc = self.tokenizer(texts, max_length=self.max_tokens, truncation=True,
                             padding=True, return_tensors="pt")
        with torch.inference_mode():
            logits = self.model(**self.to_device(enc)).logits
        probs = torch.softmax(logits.float(), dim=-1)[:, self.layout.label]
        return [float(p) for p in probs.cpu()]


class HhemPair(TransformersChecker):
    """Vectara HHEM-2.1-open, read into transformers' ``T5ForTokenClassification``."""

    family: Family = "pair"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        given = (self.layout.config or {}).get("prompt")
        #: the config's prompt when it has both places, else the published one
        self.prompt = given if isinstance(given, str) and "{text1}" in given \
            and "{text2}" in given else HHEM_PROMPT
        self._overhead = self.count_tokens(self.prompt.format(text1="", text2="")) + 1

    def texts(self, pairs: Sequence[tuple[str, str]]) -> list[str]:
        return [self.prompt.format(text1=self.fit(doc, claim, self._overhead), text2=claim)
                for doc, claim in pairs]

    def support(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return self.batched(self.texts(pairs), len, self._score)

    def _score(self, texts: list[str]) -> list[float]:
        import torch

        enc = self.tokenizer(texts, max_length=self.max_tokens, truncation=True,
                             padding=True, return_tensors="pt")
        with torch.inference_mode():
            logits = self.model(**self.to_device(enc)).logits[:, 0, :]
        probs = torch.softmax(logits.float(), dim=-1)[:, self.layout.label]
        return [float(p) for p in probs.cpu()]
