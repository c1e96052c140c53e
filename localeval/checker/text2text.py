"""Text-to-text checkers: MiniCheck-Flan-T5, read at its first decoder step.

MiniCheck's code (``minicheck/inference.py``) feeds ``"predict: " + document +
eos_token + claim`` to the encoder, one decoder step from the start token, and
takes the softmax over two logits: id 209 (supported) and id 3 (unsupported).
Those ids are the first tokens of "1" and "0" in Flan-T5's vocabulary ("1" is
the piece "▁1"; "0" begins with the piece "▁"), so this backend finds them the
same way in whatever tokenizer the folder has, and refuses a tokenizer in which
both texts begin with the same token.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localeval.checker.base import Family
from localeval.checker.engine import TransformersChecker
from localeval.errors import ModelError, printable

__all__ = ["MiniCheckT5", "t5_text", "label_token_ids"]

#: Tokens around the document and claim: the eos in the text and the closing eos.
_T5_SPECIALS = 2


def t5_text(document: str, claim: str, eos: str) -> str:
    """MiniCheck-Flan-T5's input string."""
    return f"predict: {document}{eos}{claim}"


def label_token_ids(tokenizer: Any, texts: tuple[str, str], folder: object) -> tuple[int, int]:
    """The first token ids of the (supported, unsupported) label texts."""
    ids = []
    for text in texts:
        toks = tokenizer(text, add_special_tokens=False)["input_ids"]
        if not toks:
            raise ModelError(f"checker folder {printable(folder)}: its tokenizer writes the "
                             f"label {text!r} with no token")
        ids.append(int(toks[0]))
    if ids[0] == ids[1]:
        raise ModelError(f"checker folder {printable(folder)}: labels {texts[0]!r} and "
                         f"{texts[1]!r} begin with the same token ({ids[0]}); name others in "
                         "localeval_checker.json (supported_text, unsupported_text)")
    return ids[0], ids[1]


class MiniCheckT5(TransformersChecker):
    """MiniCheck-Flan-T5-Large and other T5 checkers trained on the same format."""

    family: Family = "text2text"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.label_ids = label_token_ids(self.tokenizer, self.layout.label_texts,
                                         self.layout.folder)
        self._overhead = self.count_tokens(t5_text("", "", "")) + _T5_SPECIALS
        start = getattr(self.model.config, "decoder_start_token_id", None)
        self.decoder_start = int(start) if start is not None else 0

    def texts(self, pairs: Sequence[tuple[str, str]]) -> list[str]:
        eos = self.tokenizer.eos_token or ""
        return [t5_text(self.fit(doc, claim, self._overhead), claim, eos)
                for doc, claim in pairs]

    def support(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return self.batched(self.texts(pairs), len, self._score)

    def _score(self, texts: list[str]) -> list[float]:
        import torch

        enc = self.to_device(self.tokenizer(texts, max_length=self.max_tokens, truncation=True,
                                            padding=True, return_tensors="pt"))
        start = torch.full((enc["input_ids"].shape[0], 1), self.decoder_start,
                           dtype=torch.long, device=self.device)
        with torch.inference_mode():
            logits = self.model(**enc, decoder_input_ids=start).logits[:, 0, :]
        pair = logits[:, [self.label_ids[1], self.label_ids[0]]].float()  # MiniCheck's order
        probs = torch.softmax(pair, dim=-1)[:, 1]
        return [float(p) for p in probs.cpu()]
