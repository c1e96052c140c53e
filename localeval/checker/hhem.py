"""HHEM-2.1-open read without running its code.

The published folder (vectara/hallucination_evaluation_model) holds
``config.json`` (``HHEMv2ForSequenceClassification``, an ``auto_map`` to its
``modeling_hhem_v2.py``, ``foundation: google/flan-t5-base`` and the prompt),
the weights and two Python files. That code builds transformers'
``T5ForTokenClassification`` from the foundation's config, keeps it as ``t5``
and, for a batch, softmaxes the first token's logits and reads column 1; its
tokenizer is the foundation's. This module does the same with transformers' own
class: the weights under ``t5.`` are loaded into it and no file of the folder
is imported, so HHEM needs no ``trust_remote_code``. The foundation (config and
tokenizer) is read from ``FOLDER/foundation/`` or, offline, from the Hugging
Face cache (``cache_dir``); it is never downloaded here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localeval.checker.layout import Layout
from localeval.errors import ModelError, printable

__all__ = ["load_hhem", "read_state_dict", "FOUNDATION_DIR"]

#: The subfolder a checker folder may hold the foundation model's config and tokenizer in.
FOUNDATION_DIR = "foundation"
_PREFIX = "t5."
#: T5 keeps one embedding under two names; a file may hold either.
_TIED = ("transformer.shared.weight", "transformer.encoder.embed_tokens.weight")


def read_state_dict(folder: Path) -> dict[str, Any]:
    """The folder's weights as one state dict (safetensors, or a torch file read with
    ``weights_only``: no pickled code runs)."""
    import json

    import torch
    from safetensors.torch import load_file

    files: list[Path]
    index = next((folder / n for n in ("model.safetensors.index.json",
                                       "pytorch_model.bin.index.json")
                  if (folder / n).is_file()), None)
    if index is not None:
        names = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        files = [folder / n for n in names]
    else:
        files = [next(folder / n for n in ("model.safetensors", "pytorch_model.bin")
                      if (folder / n).is_file())]
    state: dict[str, Any] = {}
    for f in files:
        if f.suffix == ".safetensors":
            state.update(load_file(str(f)))
        else:
            state.update(torch.load(str(f), map_location="cpu", weights_only=True))
    return state


def _foundation(layout: Layout, cache_dir: str | None) -> tuple[Any, Any]:
    """The foundation's config and tokenizer, from the folder or the local HF cache."""
    from transformers import AutoConfig, AutoTokenizer

    local = layout.folder / FOUNDATION_DIR
    source = str(local) if (local / "config.json").is_file() else str(
        (layout.config or {}).get("foundation") or "google/flan-t5-base")
    try:
        config = AutoConfig.from_pretrained(source, local_files_only=True, cache_dir=cache_dir)
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True,
                                                  cache_dir=cache_dir)
    except (OSError, ValueError) as e:
        raise ModelError(
            f"checker folder {printable(layout.folder)}: HHEM builds its T5 from "
            f"{printable(source)} (config.json 'foundation'), whose config and tokenizer are "
            f"not here ({printable(str(e).splitlines()[0] if str(e) else type(e).__name__)}); "
            f"put them in {printable(local)} (localeval never downloads at run time)"
        ) from None
    return config, tokenizer


def load_hhem(layout: Layout, cache_dir: str | None) -> tuple[Any, Any]:
    """(tokenizer, model): transformers' ``T5ForTokenClassification`` with HHEM's weights."""
    from transformers import T5ForTokenClassification

    config, tokenizer = _foundation(layout, cache_dir)
    config.num_labels = 2
    model = T5ForTokenClassification(config)
    try:
        raw = read_state_dict(layout.folder)
    except Exception as e:  # a damaged file: safetensors and torch raise their own kinds
        raise ModelError(f"checker folder {printable(layout.folder)}: its weights cannot be "
                         f"read ({printable(e)})") from None
    state = {k[len(_PREFIX):]: v for k, v in raw.items() if k.startswith(_PREFIX)}
    for a, b in (_TIED, _TIED[::-1]):
        if a in state and b not in state:
            state[b] = state[a]
    try:
        missing, unexpected = model.load_state_dict(state, strict=False)
    except RuntimeError as e:
        raise ModelError(f"checker folder {printable(layout.folder)}: its weights do not fit "
                         f"the foundation's shape ({printable(str(e).splitlines()[0])})"
                         ) from None
    if missing:
        raise ModelError(f"checker folder {printable(layout.folder)}: its weights lack "
                         f"{len(missing)} tensors of HHEM's T5 (first: {missing[0]})")
    return tokenizer, model
