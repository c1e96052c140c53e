"""The sentence-transformers embedder: a local model on CUDA, MPS or CPU, and nothing else.

The model folder comes from ``catalog.locate_model`` (never the Hub) and is
loaded with the Hub switched offline and ``local_files_only=True``. Its
fingerprint covers the model's files and every setting that changes its
vectors, so the cache never mixes vectors of two models. torch and
sentence-transformers are imported only when a model is constructed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from localeval.catalog import DEFAULT_EMBEDDER, is_default_spec, locate_model
from localeval.embed.base import normalise_rows, prep_text
from localeval.embed.language import guess_english_only
from localeval.embed.offline import hub_offline, quiet_transformers
from localeval.embed.resolve import manifest_entry, model_files_digest
from localeval.errors import ModelError

__all__ = ["pick_device", "SentenceTransformerEmbedder"]


def pick_device(device: str = "auto") -> str:
    """``auto``: CUDA, then Apple MPS, then CPU. An explicit device must exist."""
    import torch

    dev = (device or "auto").strip().lower()
    if dev == "auto":
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return "mps"
        return "cpu"
    if dev.startswith("cuda") and not torch.cuda.is_available():
        raise ModelError(f"embedding device {device} requested but CUDA is not available; "
                         "use device 'cpu' or 'auto'")
    if dev == "mps" and not (getattr(torch.backends, "mps", None)
                             and torch.backends.mps.is_available()):
        raise ModelError(f"embedding device {device} requested but MPS is not available")
    return dev


class SentenceTransformerEmbedder:
    """A local sentence-transformers model; rows are float32 and unit-norm.

    ``fp16=None`` means full precision on every device: on an H200 float32 gave
    the CPU's vectors to 4e-8 (the same fingerprint, so one cache serves both
    machines) and ran 3x faster than float16 for a MiniLM-shaped model
    (docs/performance.md, "On a GPU"); ``fp16=True`` asks for half precision.
    ``prompt=None`` picks the prompt
    the model expects for symmetric similarity: the model's own ``query``
    prompt if its config defines one, ``"query: "`` for E5 models (their
    card asks for it on both sides of a similarity), else none.

    ``model_calls`` counts encode calls and ``texts_encoded`` the texts sent,
    so tests and benchmarks can see what the cache saved.
    """

    def __init__(self, path_or_name: str | os.PathLike[str] | None = None,
                 device: str = "auto", batch_size: int = 64, fp16: bool | None = None, *,
                 models_dir: str | os.PathLike[str] | None = None, prompt: str | None = None,
                 english_only: bool | None = None, name: str | None = None) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        from localeval.catalog import models_dir_default

        models_dir = Path(models_dir) if models_dir else models_dir_default()
        self.path = locate_model(path_or_name, "embedder", models_dir)
        spec = str(path_or_name).strip() if path_or_name is not None else DEFAULT_EMBEDDER
        is_default = is_default_spec(path_or_name)
        if not name and not is_default and not Path(spec).expanduser().is_dir():
            entry = manifest_entry(spec, Path(models_dir))  # an alias gets its canonical name
            name = entry.name if entry is not None else spec
        self.name = name or (DEFAULT_EMBEDDER if is_default else self.path.name)
        self.batch_size = batch_size
        if not ((self.path / "modules.json").is_file() or (self.path / "config.json").is_file()):
            raise ModelError(f"cannot load embedding model from {self.path}: not a "
                             "sentence-transformers model folder (no modules.json or config.json)")
        files_digest = model_files_digest(self.path)

        try:
            import torch  # noqa: F401  (heavy: only when a model is built)
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise ModelError(f"sentence-transformers is not installed ({e}); "
                             "pip install sentence-transformers") from None
        self.device = pick_device(device)
        self.fp16 = bool(fp16)
        try:
            with hub_offline(), quiet_transformers():
                model = SentenceTransformer(str(self.path), device=self.device,
                                            local_files_only=True, trust_remote_code=False)
        except ModelError:
            raise
        except Exception as e:  # corrupt or incomplete files: one clear line, exit 3
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise ModelError(f"cannot load embedding model from {self.path}: "
                             f"{type(e).__name__}: {first}"[:500]) from e
        if self.fp16:
            model.half()
        model.eval()
        self._model = model
        self._lock = threading.Lock()
        self.prompt = self._pick_prompt(prompt)
        dim_fn = getattr(model, "get_embedding_dimension", None) or \
            model.get_sentence_embedding_dimension
        dim = dim_fn()
        if dim is None:  # sentence-transformers returns None for a model without a fixed width
            raise ModelError(f"cannot load embedding model from {self.path}: it does not "
                             "declare its embedding dimension")
        self.dim = int(dim)
        self.max_seq_length = model.max_seq_length
        self.english_only = (english_only if english_only is not None
                             else guess_english_only(self.path, self.name, models_dir))
        settings = {
            "files": files_digest,
            "precision": "float16" if self.fp16 else "float32",
            "max_seq_length": self.max_seq_length,
            "prompt": self.prompt,
            "normalize": True,
        }
        self.fingerprint = hashlib.sha256(
            json.dumps(settings, sort_keys=True).encode()).hexdigest()
        self.model_calls = 0
        self.texts_encoded = 0

    def _pick_prompt(self, prompt: str | None) -> str:
        if prompt is not None:
            return prompt
        prompts = getattr(self._model, "prompts", None) or {}
        default_name = getattr(self._model, "default_prompt_name", None)
        if default_name:
            return ""  # sentence-transformers applies the model's default itself
        if prompts.get("query"):
            return str(prompts["query"])
        names = f"{self.name} {self.path.name}".lower()
        if re.search(r"(^|[-_/ ])(multilingual-)?e5([-_ ]|$)", names):
            return "query: "
        return ""

    def __repr__(self) -> str:
        return (f"SentenceTransformerEmbedder(name={self.name!r}, device={self.device!r}, "
                f"fp16={self.fp16}, dim={self.dim})")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        batch = [prep_text(t) for t in texts]
        if not batch:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            self.model_calls += 1
            self.texts_encoded += len(batch)
            out = self._model.encode(
                batch, batch_size=self.batch_size, normalize_embeddings=True,
                convert_to_numpy=True, show_progress_bar=False,
                prompt=self.prompt or None,
            )
        return normalise_rows(out)
