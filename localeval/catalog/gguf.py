"""Check and describe GGUF model files before llama.cpp touches them.

llama.cpp is C++: a file that is not GGUF, is cut short, or has a corrupt
header can end in an abort that takes the Python process with it, and at
best gives a vague "failed to load model". So every model path is first read
with the ``gguf`` package's ``GGUFReader`` (memory-mapped, pure Python) and
every tensor is checked to lie inside the file; anything wrong becomes one
``ModelError`` naming the path. The metadata read here (architecture,
parameter count, quantisation, context length, chat template) also feeds
the run signature and, through ``gguf_summary``, the models manifest.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from localeval.errors import ModelError

__all__ = ["check_gguf", "read_gguf_metadata", "gguf_summary", "GGUF_MAGIC",
           "MAX_CONTEXT_LENGTH"]

GGUF_MAGIC = b"GGUF"
#: The largest context length believed from a GGUF header (16M tokens; the longest
#: real models claim 10M). A larger claim is a broken header: 2^31 and more overflow
#: llama.cpp's int32, and llama-cpp-python allocates the trained context for every
#: tokenize call (1 GiB per call for 2^28).
MAX_CONTEXT_LENGTH = 1 << 24
_HEADER = 4 + 4 + 8 + 8  # magic, version, tensor count, kv count


def _open_reader(path: Path):
    """A ``GGUFReader`` over ``path`` after cheap checks; ModelError on any defect."""
    if not path.exists():
        raise ModelError(f"{path}: model file not found")
    if not path.is_file():
        raise ModelError(f"{path}: not a file")
    size = path.stat().st_size
    try:
        with path.open("rb") as f:
            head = f.read(_HEADER)
    except OSError as e:
        raise ModelError(f"{path}: cannot read model file: {e.strerror or e}") from None
    if head[:4] != GGUF_MAGIC:
        raise ModelError(f"{path}: not a GGUF file (no GGUF magic bytes; "
                         "convert the model with llama.cpp's convert_hf_to_gguf.py)")
    if len(head) < _HEADER:
        raise ModelError(f"{path}: truncated GGUF file ({size} bytes, header incomplete)")

    from gguf import GGUFReader

    try:
        reader = GGUFReader(path, "r")
    except Exception as e:  # the reader raises ValueError/IndexError/... on bad bytes
        if isinstance(e, ValueError) and "cannot reshape" in str(e):
            # a tensor's memory map came out short: the data stops before the end
            raise ModelError(f"{path}: truncated GGUF file: tensor data runs past the end of "
                             f"the file ({size} bytes; an incomplete copy?)") from None
        raise ModelError(f"{path}: corrupt or truncated GGUF file ({type(e).__name__}: "
                         f"{e})") from None
    if not reader.tensors:
        raise ModelError(f"{path}: GGUF file holds no tensors (a vocabulary-only file?)")
    for t in reader.tensors:
        end = int(t.data_offset) + int(t.n_bytes)
        if end > size:
            raise ModelError(f"{path}: truncated GGUF file: tensor {t.name!r} ends at byte "
                             f"{end} but the file has {size} bytes (incomplete copy?)")
    return reader


def check_gguf(path: str | os.PathLike[str]) -> None:
    """Raise ``ModelError`` unless ``path`` is a complete, readable GGUF file."""
    _open_reader(Path(path))


def _field(reader, key: str) -> Any:
    f = reader.fields.get(key)
    if f is None:
        return None
    try:
        return f.contents()
    except Exception:
        return None


def read_gguf_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Describe a GGUF model file (checking it first).

    Keys: ``path``, ``size_bytes``, ``architecture``, ``name``,
    ``parameters`` (sum of tensor elements), ``file_type`` (e.g. "Q8_0"),
    ``tensor_types`` (type -> count), ``context_length``, ``chat_template``
    (None when absent), ``vocab_size``, ``bos_token_id``, ``eos_token_id``,
    ``add_bos_token``, ``context_length_claimed`` and ``context_note``.

    ``context_length`` is None unless the header holds a whole number from 1 to
    ``MAX_CONTEXT_LENGTH``; otherwise ``context_note`` says what the header
    claimed (``context_length_claimed``), so the judge can override it before
    llama.cpp reads it.
    """
    import gguf

    p = Path(path)
    reader = _open_reader(p)
    arch = _field(reader, "general.architecture")
    ftype_raw = _field(reader, "general.file_type")
    try:
        ftype = gguf.LlamaFileType(int(ftype_raw)).name.removeprefix("MOSTLY_").removeprefix(
            "ALL_") if ftype_raw is not None else None
    except ValueError:
        ftype = f"unknown({ftype_raw})"
    tensor_types: dict[str, int] = {}
    for t in reader.tensors:
        name = gguf.GGMLQuantizationType(int(t.tensor_type)).name
        tensor_types[name] = tensor_types.get(name, 0) + 1
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    vocab = _field(reader, f"{arch}.vocab_size") if arch else None
    if vocab is None and tokens is not None:
        vocab = len(tokens.data)
    return {
        "path": str(p),
        "size_bytes": p.stat().st_size,
        "architecture": arch,
        "name": _field(reader, "general.name"),
        "parameters": int(sum(int(t.n_elements) for t in reader.tensors)),
        "file_type": ftype,
        "tensor_types": tensor_types,
        **_context_length(p, _field(reader, f"{arch}.context_length") if arch else None),
        "chat_template": _field(reader, "tokenizer.chat_template"),
        "vocab_size": vocab,
        "bos_token_id": _field(reader, "tokenizer.ggml.bos_token_id"),
        "eos_token_id": _field(reader, "tokenizer.ggml.eos_token_id"),
        "add_bos_token": _field(reader, "tokenizer.ggml.add_bos_token"),
    }


def _context_length(path: Path, claimed: Any) -> dict[str, Any]:
    """``context_length`` (sane or None), what the header claimed, and a note when not sane."""
    ok = isinstance(claimed, int) and not isinstance(claimed, bool) \
        and 1 <= claimed <= MAX_CONTEXT_LENGTH
    note = None
    if claimed is not None and not ok:
        shown = claimed if isinstance(claimed, int) else repr(claimed)[:40]
        note = (f"{path.name}: the GGUF header claims a context length of {shown} tokens, "
                f"which is not a whole number from 1 to {MAX_CONTEXT_LENGTH}; ignoring it")
    return {"context_length": claimed if ok else None, "context_length_claimed": claimed,
            "context_note": note}


def _params_label(n: Any) -> str:
    if isinstance(n, str):
        return n
    if not n:
        return ""
    n = int(n)
    for div, unit in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= div:
            return f"{n / div:.1f}{unit}".replace(".0", "")
    return str(n)


def gguf_summary(path: Path | str) -> dict[str, Any]:
    """Architecture, parameters, quantisation, context length and chat template of a GGUF.

    ``read_gguf_metadata`` (which checks the file first) in the manifest's
    terms, for ``models add``; a damaged file is a ModelError.
    """
    meta = read_gguf_metadata(path)
    ctx = meta.get("context_length")
    return {
        "architecture": str(meta.get("architecture") or ""),
        "name": str(meta.get("name") or ""),
        "parameters": _params_label(meta.get("parameters")),
        "quantisation": str(meta.get("file_type") or ""),
        "context_length": int(ctx) if ctx is not None else None,
        "has_chat_template": bool(meta.get("chat_template")),
    }
