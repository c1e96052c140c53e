"""What a checker folder holds and how its model is read: family, input format, label map.

Decided from ``config.json`` (its ``architectures`` and ``id2label``), following
each publisher's card and code, and overridden by an optional
``localeval_checker.json`` in the folder for a model whose config does not say
enough (a label map of bare ``LABEL_0``/``LABEL_1`` that is not MiniCheck's, a
longer window). Nothing here loads torch: the folder is refused before any
weight is read. docs/checkers.md lists the formats with their sources.

Formats:

- ``minicheck`` (pair): MiniCheck-RoBERTa/DeBERTa (Liyan06/MiniCheck,
  ``minicheck/inference.py``): one text ``document + eos_token + claim``,
  truncated at 512 (RoBERTa) / 2048 (DeBERTa) tokens, softmax over the labels,
  label 1 = supported; documents cut into chunks of 400 tokens. Any other
  ``*ForSequenceClassification`` is read the same way, its supported label found
  by name (supported, entailment, consistent...).
- ``hhem`` (pair): Vectara HHEM-2.1-open (``modeling_hhem_v2.py`` of the model
  folder): the prompt ``<pad> Determine if the hypothesis is true given the
  premise?\\n\\nPremise: {text1}\\n\\nHypothesis: {text2}`` through a Flan-T5
  ``T5ForTokenClassification``, softmax of the first token's logits, label 1 =
  consistent. localeval reads the weights into transformers' own class and never
  imports the folder's Python files (``hhem.py``).
- ``minicheck-t5`` (text2text): MiniCheck-Flan-T5: ``"predict: " + document +
  eos_token + claim``, one decoder step from the start token, softmax over the
  logits of the first tokens of "0" and "1" (ids 3 and 209 in Flan-T5's
  vocabulary, the ids MiniCheck's code reads), "1" = supported; chunks of 500.
- ``lettucedetect`` (span): LettuceDetect (KRLabsOrg/LettuceDetect,
  ``lettucedetect/detectors/transformer.py``): the QA prompt with the passages
  and question, then the answer as the second sequence, truncated ``only_first``
  at 4096 tokens; per answer token softmax, label 1 = hallucinated.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from localeval.checker.base import Family
from localeval.errors import ModelError, printable

__all__ = ["Layout", "read_layout", "SETTINGS_FILE", "WEIGHT_FILES"]

#: The folder's optional settings file.
SETTINGS_FILE = "localeval_checker.json"
#: Files that hold weights, as transformers names them.
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "spiece.model", "vocab.json", "vocab.txt", "spm.model",
                   "sentencepiece.bpe.model")

Format = Literal["minicheck", "hhem", "minicheck-t5", "lettucedetect"]

#: Label names that mean "the document supports the claim" (lower case).
SUPPORTED_NAMES = frozenset({"supported", "support", "entailment", "entailed", "entails",
                             "consistent", "factual", "faithful", "grounded"})
HALLUCINATED_NAMES = frozenset({"hallucinated", "hallucination", "unsupported",
                                "not_supported", "inconsistent"})
_GENERIC = ("label_0", "label_1")

_PAIR_ARCHS = frozenset({
    "RobertaForSequenceClassification", "XLMRobertaForSequenceClassification",
    "DebertaV2ForSequenceClassification", "DebertaForSequenceClassification",
    "BertForSequenceClassification", "ModernBertForSequenceClassification",
    "ElectraForSequenceClassification"})
HHEM_ARCH = "HHEMv2ForSequenceClassification"


@dataclass(frozen=True)
class Layout:
    """How to read one checker folder."""

    folder: Path
    architecture: str
    family: Family
    format: Format
    #: pair: the supported label's index; span: the hallucinated label's index
    label: int
    #: text2text: the texts whose first tokens are read (supported, unsupported)
    label_texts: tuple[str, str] = ("1", "0")
    window_tokens: int = 400
    max_tokens: int = 512
    #: lettucedetect: the language of its prompt (en, de, fr, es, it, pl, cn)
    prompt_lang: str = "en"
    #: classes the folder's config would import (auto_map), run only when trusted
    remote_code: tuple[str, ...] = ()
    config: dict[str, Any] | None = None

    def describe(self) -> dict[str, Any]:
        """Everything that changes a probability, for the fingerprint."""
        return {"architecture": self.architecture, "family": self.family,
                "format": self.format, "label": self.label,
                "label_texts": list(self.label_texts), "window_tokens": self.window_tokens,
                "max_tokens": self.max_tokens, "prompt_lang": self.prompt_lang}


class _Settings(BaseModel):
    """``localeval_checker.json``: every key optional; unknown keys refused."""

    model_config = ConfigDict(extra="forbid")
    family: Family | None = None
    format: Format | None = None
    supported_label: int | None = None
    hallucinated_label: int | None = None
    supported_text: str | None = None
    unsupported_text: str | None = None
    window_tokens: int | None = None
    max_tokens: int | None = None
    prompt_lang: str | None = None


def _fail(folder: Path, what: str) -> ModelError:
    return ModelError(f"checker folder {printable(folder)}: {what}")


def _read_json(folder: Path, name: str, *, required: bool) -> dict[str, Any] | None:
    path = folder / name
    if not path.is_file():
        if required:
            raise _fail(folder, f"no {name} (a checker folder is a transformers model folder "
                                "saved with save_pretrained)")
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise _fail(folder, f"{name} cannot be read ({printable(e)})") from None
    if not isinstance(data, dict):
        raise _fail(folder, f"{name} is not a JSON object")
    return data


def _labels(config: dict[str, Any]) -> dict[int, str]:
    """The config's label map; none written means transformers' default two labels
    (``LABEL_0``, ``LABEL_1``), which ``save_pretrained`` leaves out."""
    raw = config.get("id2label")
    if not raw:
        n = config.get("num_labels", 2)
        return {i: f"LABEL_{i}" for i in range(n)} if isinstance(n, int) and n > 0 else {}
    try:
        return {int(k): str(v) for k, v in dict(raw).items()}
    except (TypeError, ValueError, AttributeError):
        return {}


def _find_label(folder: Path, labels: dict[int, str], names: frozenset[str],
                opposite: frozenset[str], generic: int, what: str) -> int:
    """The index whose name is in ``names``; else the other of two when one is in
    ``opposite``; else ``generic`` for a bare two-label map (the card's convention)."""
    low = {i: n.strip().lower() for i, n in labels.items()}
    hits = [i for i, n in low.items() if n in names]
    if len(hits) == 1:
        return hits[0]
    others = [i for i, n in low.items() if n in opposite]
    if len(labels) == 2 and len(others) == 1:
        return next(i for i in labels if i != others[0])
    if sorted(low.values()) == list(_GENERIC):
        return generic
    shown = ", ".join(f"{i}: {n}" for i, n in sorted(labels.items())) or "none"
    raise _fail(folder, f"its label map ({printable(shown)}) has no {what} label; name its "
                        f"index in {SETTINGS_FILE}")


def _has_any(folder: Path, names: tuple[str, ...]) -> bool:
    return any((folder / n).is_file() for n in names)


def _base_layout(folder: Path, config: dict[str, Any], arch: str) -> Layout:
    labels = _labels(config)
    model_type = str(config.get("model_type", ""))
    positions = int(config.get("max_position_embeddings") or 512)
    if arch == HHEM_ARCH:
        return Layout(folder, arch, "pair", "hhem", 1, window_tokens=2000, max_tokens=4096)
    if arch == "T5ForConditionalGeneration":
        return Layout(folder, arch, "text2text", "minicheck-t5", 1, window_tokens=500,
                      max_tokens=2048)
    if arch == "ModernBertForTokenClassification":
        label = _find_label(folder, labels, HALLUCINATED_NAMES, SUPPORTED_NAMES, 1,
                            "hallucinated")
        return Layout(folder, arch, "span", "lettucedetect", label, window_tokens=4096,
                      max_tokens=min(positions, 4096))
    if arch in _PAIR_ARCHS or arch.endswith("ForSequenceClassification"):
        label = _find_label(folder, labels, SUPPORTED_NAMES, HALLUCINATED_NAMES, 1,
                            "supported")
        if "roberta" in model_type:  # learned positions, two kept for padding offset
            most = positions - 2
        elif model_type.startswith("deberta"):  # relative positions; MiniCheck reads 2048
            most = 2048
        else:
            most = positions
        return Layout(folder, arch, "pair", "minicheck", label, window_tokens=min(400, most),
                      max_tokens=most)
    raise _fail(folder, f"architecture {printable(arch)} is not a checker localeval knows "
                        "(known: *ForSequenceClassification pair classifiers, "
                        f"{HHEM_ARCH}, T5ForConditionalGeneration, "
                        "ModernBertForTokenClassification)")


def _apply(folder: Path, layout: Layout, s: _Settings) -> Layout:
    if s.family is not None and s.family != layout.family:
        raise _fail(folder, f"{SETTINGS_FILE} says family {s.family!r} but config.json's "
                            f"architecture {layout.architecture} is a {layout.family} model")
    if s.format is not None and s.format != layout.format:
        raise _fail(folder, f"{SETTINGS_FILE} says format {s.format!r}, which does not fit "
                            f"architecture {layout.architecture} ({layout.format})")
    new = layout
    label = s.supported_label if layout.family != "span" else s.hallucinated_label
    if label is not None:
        new = replace(new, label=label)
    if s.supported_text is not None or s.unsupported_text is not None:
        new = replace(new, label_texts=(s.supported_text or layout.label_texts[0],
                                        s.unsupported_text or layout.label_texts[1]))
    if s.max_tokens is not None:
        new = replace(new, max_tokens=s.max_tokens, window_tokens=min(new.window_tokens,
                                                                      s.max_tokens))
    if s.window_tokens is not None:
        new = replace(new, window_tokens=s.window_tokens)
    if s.prompt_lang is not None:
        new = replace(new, prompt_lang=s.prompt_lang)
    if new.window_tokens < 16 or new.max_tokens < 16:
        raise _fail(folder, "window_tokens and max_tokens must be at least 16")
    return new


def read_layout(path: str | os.PathLike[str]) -> Layout:
    """The folder's layout, checked: config, architecture, label map, tokenizer, weights.

    Raises ``ModelError`` naming the folder and what is wrong; reads no weight.
    """
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise _fail(folder, "not a folder (a checker is a transformers model folder; "
                            "localeval never downloads one at run time)")
    folder = folder.resolve()
    config = _read_json(folder, "config.json", required=True)
    assert config is not None
    archs = config.get("architectures")
    if not isinstance(archs, list) or not archs or not isinstance(archs[0], str):
        raise _fail(folder, "config.json names no architecture (\"architectures\")")
    layout = _base_layout(folder, config, archs[0])
    raw = _read_json(folder, SETTINGS_FILE, required=False)
    if raw is not None:
        try:
            layout = _apply(folder, layout, _Settings.model_validate(raw))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise _fail(folder, f"{SETTINGS_FILE}: {where}: {first['msg']}") from None
    auto_map = config.get("auto_map")
    remote = tuple(sorted(str(v) for v in dict(auto_map).values())) if isinstance(
        auto_map, dict) else ()
    layout = replace(layout, remote_code=remote, config=config)
    _check_files(layout)
    return layout


def _check_files(layout: Layout) -> None:
    folder = layout.folder
    if not _has_any(folder, WEIGHT_FILES):
        raise _fail(folder, f"no weights ({' or '.join(WEIGHT_FILES[::2])})")
    if layout.format == "hhem":
        return  # its tokenizer is the foundation model's (hhem.foundation_folder checks it)
    if not _has_any(folder, TOKENIZER_FILES):
        raise _fail(folder, f"no tokenizer ({', '.join(TOKENIZER_FILES)})")
    n = len(_labels(layout.config or {}))
    if layout.family != "text2text" and not 0 <= layout.label < n:
        raise _fail(folder, f"label {layout.label} is outside its {n} labels")
