"""``load_checker``: a local checker folder, verified, on CPU or GPU.

Never downloads: every transformers call passes ``local_files_only=True``. The
folder is checked before any weight is read (``layout.read_layout``: config,
architecture, label map, tokenizer, weight files); then the weights load, and
a tensor the architecture needs that the file lacks, or one of the wrong shape,
is a ``ModelError`` naming the folder (exit 3), never a silently random layer.
A folder whose ``config.json`` carries an ``auto_map`` (Python files that
transformers would import) is refused unless ``trust_remote_code=True``;
HHEM's is the exception, read without its code (``hhem.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from localeval.catalog import files_digest, model_files
from localeval.checker.base import Checker, pick_device
from localeval.checker.engine import TransformersChecker, torch_dtype
from localeval.checker.layout import Layout, read_layout
from localeval.errors import ModelError, printable

__all__ = ["load_checker", "folder_digest", "checker_fingerprint"]

_HASHED = {".json", ".txt", ".safetensors", ".bin", ".model", ".py", ".vocab", ".tiktoken"}


def folder_digest(folder: str | os.PathLike[str]) -> str:
    """sha256 over the relative path and sha256 of every weight, config, tokenizer and code
    file of the folder (its ``foundation/`` too), each through the catalog's one memoised
    file hash, as an embedder folder is hashed."""
    root = Path(folder).resolve()
    files = model_files(root, skip_dir=lambda d: d.startswith("."),
                        keep_file=lambda f: not f.startswith(".")
                        and Path(f).suffix.lower() in _HASHED)
    return files_digest(root, files)


def checker_fingerprint(digest: str, layout: Layout, dtype: str) -> str:
    """The folder's digest with every setting that changes a probability."""
    blob = json.dumps({"files": digest, "layout": layout.describe(), "dtype": dtype},
                      sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """transformers' load report and progress bar off while loading (the run has its own)."""
    from transformers.utils import logging as tlog

    level = tlog.get_verbosity()
    bar = tlog.is_progress_bar_enabled()
    tlog.set_verbosity_error()
    tlog.disable_progress_bar()
    try:
        yield
    finally:
        tlog.set_verbosity(level)
        if bar:
            tlog.enable_progress_bar()


def _refuse_remote(layout: Layout) -> ModelError:
    files = sorted({c.split(".")[0] + ".py" for c in layout.remote_code if "." in c})
    return ModelError(
        f"checker folder {printable(layout.folder)} asks to run its own code: config.json's "
        f"auto_map would import {', '.join(files) or 'its Python files'} "
        f"({', '.join(layout.remote_code)}) from the folder and run them to build the model. "
        "localeval runs no code from a model folder unless told to: pass "
        "trust_remote_code=True (--trust-remote-code) if you have read those files")


def _auto_class(layout: Layout) -> Any:
    import transformers as tf

    return {"pair": tf.AutoModelForSequenceClassification,
            "text2text": tf.AutoModelForSeq2SeqLM,
            "span": tf.AutoModelForTokenClassification}[layout.family]


def _load_transformers(layout: Layout, trust: bool, cache_dir: str | None) -> tuple[Any, Any]:
    from transformers import AutoTokenizer

    folder = str(layout.folder)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True,
                                                  trust_remote_code=trust, cache_dir=cache_dir)
    except (OSError, ValueError, KeyError) as e:
        raise ModelError(f"checker folder {printable(layout.folder)}: its tokenizer cannot be "
                         f"loaded ({printable(str(e).splitlines()[0] if str(e) else e)})"
                         ) from None
    try:
        model, info = _auto_class(layout).from_pretrained(
            folder, local_files_only=True, trust_remote_code=trust, cache_dir=cache_dir,
            output_loading_info=True, ignore_mismatched_sizes=True)  # listed, refused below
    except Exception as e:  # damaged weights: safetensors, torch and transformers each raise their own
        raise ModelError(f"checker folder {printable(layout.folder)}: its weights cannot be "
                         f"loaded ({printable(str(e).splitlines()[0] if str(e) else e)})"
                         ) from None
    missing = sorted(info.get("missing_keys") or ())
    mismatched = sorted(str(m[0] if isinstance(m, tuple) else m)
                        for m in (info.get("mismatched_keys") or ()))
    if missing or mismatched:
        what = (f"lack {len(missing)} tensors (first: {missing[0]})" if missing
                else f"have tensors of the wrong shape (first: {mismatched[0]})")
        raise ModelError(f"checker folder {printable(layout.folder)}: its weights {what} of "
                         f"{layout.architecture}; the folder is damaged or mixes two models")
    return tokenizer, model


def _backend(layout: Layout) -> type[TransformersChecker]:
    from localeval.checker.pair import HhemPair, MiniCheckPair
    from localeval.checker.span import LettuceSpan
    from localeval.checker.text2text import MiniCheckT5

    return {"minicheck": MiniCheckPair, "hhem": HhemPair, "minicheck-t5": MiniCheckT5,
            "lettucedetect": LettuceSpan}[layout.format]


def load_checker(path: str | os.PathLike[str], *, device: str = "auto", batch_size: int = 16,
                 trust_remote_code: bool = False, cache_dir: str | os.PathLike[str] | None = None,
                 dtype: str = "float32", name: str | None = None, cache: Any = None) -> Checker:
    """The checker in the local folder ``path``, verified and ready (see the module doc).

    ``device``: ``auto`` (CUDA when torch sees one, else CPU), ``cpu`` or ``cuda[:N]``;
    ``dtype``: float32 (always on CPU), or bfloat16/float16 on a GPU; ``cache_dir``:
    the Hugging Face cache looked in, offline, for a foundation a folder names by Hub id
    (HHEM's Flan-T5); ``cache``: a ``localeval.cache.Cache`` to answer repeated calls
    from (``CachedChecker``); ``name``: how reports name it (the folder's name).
    """
    layout = read_layout(path)
    if layout.remote_code and layout.format != "hhem" and not trust_remote_code:
        raise _refuse_remote(layout)
    dev = pick_device(device)
    tdtype = torch_dtype(dtype, dev)
    cache_text = os.fspath(cache_dir) if cache_dir is not None else None
    with _quiet():
        if layout.format == "hhem":
            from localeval.checker.hhem import load_hhem

            tokenizer, model = load_hhem(layout, cache_text)
        else:
            tokenizer, model = _load_transformers(layout, trust_remote_code, cache_text)
    try:
        model = model.to(device=dev, dtype=tdtype).eval()
    except (RuntimeError, ValueError) as e:
        raise ModelError(f"checker {printable(layout.folder)} cannot be placed on {dev} "
                         f"({printable(e)})") from None
    used = "float32" if dev == "cpu" else dtype
    fingerprint = checker_fingerprint(folder_digest(layout.folder), layout, used)
    checker: Checker = _backend(layout)(
        layout, tokenizer, model, device=dev, dtype=used, batch_size=batch_size,
        fingerprint=fingerprint, name=name or layout.folder.name)
    if cache is not None:
        from localeval.checker.cached import CachedChecker

        return CachedChecker(checker, cache)
    return checker
