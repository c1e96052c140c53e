"""The model manifest (``models/manifest.toml`` + ``models/local.toml``) and lock file.

The manifest says which judge and embedding models localeval knows: file
names, where a connected machine can fetch them, their published sha256 (when
one could be found), size, licence and when to pick each. ``local.toml`` holds
the user's own models registered with ``localeval models add``; the shipped
manifest is never edited. ``models.lock.json`` records the sha256, size and
mtime of every file that was fetched, verified or added, so ``models list``
can say "verified" without re-hashing gigabytes.

This module uses the standard library only, on purpose: ``scripts/fetch_models.py``
loads it by file path on a connected machine where localeval and its heavy
dependencies need not be installed. It therefore raises ``ManifestError``
(a ValueError); ``localeval.models`` turns that into ``ModelError`` (exit 3).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterable, Iterator

__all__ = [
    "ManifestError",
    "FileSpec",
    "ModelEntry",
    "Manifest",
    "Lock",
    "LockRecord",
    "load_manifest",
    "manifest_paths",
    "sha256_file",
    "human_size",
    "entries_to_toml",
    "MANIFEST_NAME",
    "LOCAL_NAME",
    "LOCK_NAME",
    "CHUNK_BYTES",
]

MANIFEST_NAME = "manifest.toml"
LOCAL_NAME = "local.toml"
LOCK_NAME = "models.lock.json"
#: Hash in 8 MiB chunks: big enough that Python's loop overhead is noise,
#: small enough that a progress bar moves smoothly on multi-GB files.
CHUNK_BYTES = 8 * 1024 * 1024

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_KINDS = ("judge", "embedder")


class ManifestError(ValueError):
    """A manifest or lock file is malformed; the message names file and entry."""


# -- entries ----------------------------------------------------------------------------
@dataclass(frozen=True)
class FileSpec:
    """One file of a model, relative to ``models/`` (or absolute for ``path =`` entries)."""

    rel: str                 # "Qwen2.5-7B-Instruct-Q4_K_M.gguf" or "multilingual-e5-base/config.json"
    url: str                 # where fetch_models.py downloads it ("" when unknown)
    size_bytes: int          # 0 when unknown
    size_approx: bool
    sha256: str              # "" when no hash is known
    verified_hash: bool      # True when sha256 is the publisher's (not one recorded locally)


@dataclass
class ModelEntry:
    """One model in the manifest. ``file`` is a GGUF file name or an embedder's folder."""

    name: str
    kind: str
    file: str
    url: str = ""
    sha256: str = ""
    verified_hash: bool = False
    hash_source: str = ""
    size_bytes: int = 0
    size_approx: bool = True
    licence: str = ""
    quantisation: str = ""
    chat_format: str = ""
    chat_template: bool | None = None   # GGUF embeds tokenizer.chat_template (add fills it)
    context_length: int | None = None
    parameters: str = ""
    architecture: str = ""
    languages: list[str] = field(default_factory=list)
    english_only: bool | None = None
    repo: str = ""
    revision: str = ""
    bundled: str = ""
    default: bool = False
    aliases: list[str] = field(default_factory=list)
    note: str = ""
    path: str = ""           # local.toml only: where the model lives when not copied into models/
    added_at: str = ""       # local.toml only
    files: list[dict[str, Any]] = field(default_factory=list)  # embedders: path, size_bytes, ...
    source: str = "shipped"  # "shipped" or "local"; set by the loader, never written

    # -- where the model lives ----------------------------------------------------------
    def root(self, models_dir: Path) -> Path:
        """The GGUF file (judges) or the model folder (embedders) on this machine."""
        if self.path:
            return Path(self.path).expanduser()
        return Path(models_dir) / self.file

    def file_specs(self) -> list[FileSpec]:
        """Every file this model consists of, with what the manifest knows about it."""
        if self.kind == "judge":
            return [FileSpec(self.file, self.url, self.size_bytes, self.size_approx,
                             self.sha256, self.verified_hash)]
        base = self.url if not self.url or self.url.endswith("/") else self.url + "/"
        out = []
        for f in self.files:
            rel = str(f["path"])
            out.append(FileSpec(f"{self.file}/{rel}", base + rel if base else "",
                                int(f.get("size_bytes", 0)), bool(f.get("size_approx", True)),
                                str(f.get("sha256", "")), bool(f.get("verified_hash", False))))
        return out

    def file_path(self, spec: FileSpec, models_dir: Path) -> Path:
        """The local path of one of this model's files."""
        if self.kind == "judge":
            return self.root(models_dir)
        inner = spec.rel.split("/", 1)[1]
        return self.root(models_dir) / inner

    def expected_size(self) -> tuple[int, bool]:
        """(total bytes, approximate?) over all files; (0, True) when unknown."""
        specs = self.file_specs()
        total = sum(s.size_bytes for s in specs)
        return total, any(s.size_approx or not s.size_bytes for s in specs) or total == 0

    def matches(self, wanted: str) -> bool:
        w = wanted.strip().lower()
        names = [self.name, self.file, *self.aliases]
        if self.repo:
            names.append(self.repo)
        return any(w == n.lower() for n in names if n)

    def to_toml_dict(self) -> dict[str, Any]:
        """Non-default fields, in manifest order, for writing ``local.toml``."""
        out: dict[str, Any] = {}
        defaults = ModelEntry(name="", kind="", file="")
        for key in _FIELD_ORDER:
            val = getattr(self, key)
            if key in ("name", "kind", "file") or val != getattr(defaults, key):
                out[key] = val
        return out


_FIELD_ORDER = ["name", "kind", "file", "path", "default", "aliases", "url", "repo", "revision",
                "sha256", "verified_hash", "hash_source", "size_bytes", "size_approx",
                "architecture", "parameters", "quantisation", "chat_format", "chat_template",
                "context_length",
                "licence", "languages", "english_only", "bundled", "note", "added_at", "files"]
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,), "kind": (str,), "file": (str,), "url": (str,), "sha256": (str,),
    "verified_hash": (bool,), "hash_source": (str,), "size_bytes": (int,),
    "size_approx": (bool,), "licence": (str,), "quantisation": (str,), "chat_format": (str,),
    "chat_template": (bool,),
    "context_length": (int,), "parameters": (str,), "architecture": (str,), "languages": (list,),
    "english_only": (bool,), "repo": (str,), "revision": (str,), "bundled": (str,),
    "default": (bool,), "aliases": (list,), "note": (str,), "path": (str,), "added_at": (str,),
    "files": (list,),
}
_FILE_KEYS = {"path": (str,), "size_bytes": (int,), "size_approx": (bool,), "sha256": (str,),
              "verified_hash": (bool,)}


def _check_hash(value: str, verified: bool, where: str) -> None:
    if value and not _HEX64.match(value):
        raise ManifestError(f"{where}: sha256 must be 64 lowercase hex digits or \"\"")
    if verified and not value:
        raise ManifestError(f"{where}: verified_hash = true needs a sha256")


def _check_relpath(value: str, where: str, *, nested: bool) -> None:
    p = PurePosixPath(value)
    bad = (not value or value.startswith(("/", "\\")) or "\\" in value or ".." in p.parts
           or (not nested and len(p.parts) != 1))
    if bad:
        what = "a relative path inside the model folder" if nested else "a plain file or folder name"
        raise ManifestError(f"{where}: '{value}' must be {what}")


def _entry_from_table(table: dict[str, Any], where: str, source: str) -> ModelEntry:
    unknown = sorted(set(table) - set(_FIELD_TYPES))
    if unknown:
        raise ManifestError(f"{where}: unknown field(s) {', '.join(unknown)}")
    for key in ("name", "kind", "file"):
        if not table.get(key):
            raise ManifestError(f"{where}: missing required field '{key}'")
    for key, val in table.items():
        types = _FIELD_TYPES[key]
        # bool is an int subclass: size_bytes = true must not pass as 1
        if not isinstance(val, types) or (types == (int,) and isinstance(val, bool)):
            raise ManifestError(f"{where}: field '{key}' must be {types[0].__name__}, "
                                f"got {type(val).__name__}")
    name = table["name"]
    where = f"{where} ('{name}')"
    if table["kind"] not in _KINDS:
        raise ManifestError(f"{where}: kind must be 'judge' or 'embedder', not '{table['kind']}'")
    _check_relpath(table["file"], f"{where}: file", nested=False)
    _check_hash(table.get("sha256", ""), table.get("verified_hash", False), where)
    files = table.get("files", [])
    if table["kind"] == "embedder":
        if table.get("sha256"):
            raise ManifestError(f"{where}: an embedder is a folder; give sha256 per [[model.files]]")
        if not files and not table.get("path") and not table.get("bundled"):
            raise ManifestError(f"{where}: an embedder needs [[model.files]] entries")
    elif files:
        raise ManifestError(f"{where}: only embedders have [[model.files]]")
    seen: set[str] = set()
    for i, f in enumerate(files, 1):
        fw = f"{where}, files[{i}]"
        if not isinstance(f, dict) or "path" not in f:
            raise ManifestError(f"{fw}: each file needs a 'path'")
        for key, val in f.items():
            if key not in _FILE_KEYS:
                raise ManifestError(f"{fw}: unknown field '{key}'")
            types = _FILE_KEYS[key]
            if not isinstance(val, types) or (types == (int,) and isinstance(val, bool)):
                raise ManifestError(f"{fw}: field '{key}' must be {types[0].__name__}")
        _check_relpath(f["path"], f"{fw}: path", nested=True)
        _check_hash(f.get("sha256", ""), f.get("verified_hash", False), fw)
        if f["path"] in seen:
            raise ManifestError(f"{fw}: duplicate path '{f['path']}'")
        seen.add(f["path"])
    for key in ("languages", "aliases"):
        if not all(isinstance(v, str) for v in table.get(key, [])):
            raise ManifestError(f"{where}: '{key}' must be a list of strings")
    return ModelEntry(**table, source=source)


# -- the manifest --------------------------------------------------------------------------
@dataclass
class Manifest:
    """Shipped entries followed by the user's local ones; names are unique."""

    entries: list[ModelEntry]
    paths: list[Path]

    def __iter__(self) -> Iterator[ModelEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def find(self, wanted: str, kind: str | None = None) -> ModelEntry | None:
        """The entry whose name, file name, alias or repo id is ``wanted`` (any case)."""
        hits = [e for e in self.entries if e.matches(wanted)]
        if kind is not None and len(hits) > 1:
            hits = [e for e in hits if e.kind == kind] or hits
        # a local entry with the same file name as a shipped one is the user's override
        hits.sort(key=lambda e: e.source != "local")
        return hits[0] if hits else None

    def names(self, kind: str | None = None) -> list[str]:
        return [e.name for e in self.entries if kind is None or e.kind == kind]

    def default(self, kind: str) -> ModelEntry | None:
        for e in self.entries:
            if e.kind == kind and e.default:
                return e
        return None


def manifest_paths(models_dir: Path) -> tuple[Path, Path]:
    """(shipped manifest, local manifest) for a models folder.

    When ``models_dir`` has no ``manifest.toml`` (a models folder kept outside
    the checkout), the one shipped in the checkout's ``models/`` is used.
    """
    models_dir = Path(models_dir)
    shipped = models_dir / MANIFEST_NAME
    if not shipped.is_file():
        fallback = Path(__file__).resolve().parent.parent / "models" / MANIFEST_NAME
        if fallback.is_file():
            shipped = fallback
    return shipped, models_dir / LOCAL_NAME


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"{path}: not valid TOML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ManifestError(f"{path}: cannot read: {e}") from None


def load_manifest(models_dir: Path | None = None, *, shipped: Path | None = None,
                  local: Path | None = None) -> Manifest:
    """Read the shipped manifest and ``local.toml`` (either may be absent).

    ``shipped`` / ``local`` override the paths derived from ``models_dir``.
    """
    d_shipped, d_local = manifest_paths(Path(models_dir or "models"))
    shipped = shipped or d_shipped
    local = local or d_local
    entries: list[ModelEntry] = []
    used: list[Path] = []
    for path, source in ((shipped, "shipped"), (local, "local")):
        if not path.is_file():
            continue
        data = _read_toml(path)
        extra = sorted(set(data) - {"schema", "model"})
        if extra:
            raise ManifestError(f"{path}: unknown top-level key(s) {', '.join(extra)}; "
                                "models are [[model]] tables")
        schema = data.get("schema", 1)
        if schema != 1:
            raise ManifestError(f"{path}: schema {schema!r} is not supported by this localeval "
                                "(it reads schema 1); use the manifest shipped with it")
        tables = data.get("model", [])
        if not isinstance(tables, list):
            raise ManifestError(f"{path}: 'model' must be an array of tables ([[model]])")
        for i, table in enumerate(tables, 1):
            entries.append(_entry_from_table(table, f"{path}, model {i}", source))
        used.append(path)
    seen: dict[str, ModelEntry] = {}
    for e in entries:
        key = e.name.lower()
        if key in seen:
            first = seen[key]
            raise ManifestError(f"model name '{e.name}' appears twice ({first.source} and "
                                f"{e.source} manifest); names must be unique")
        seen[key] = e
    return Manifest(entries, used)


# -- TOML output (local.toml) -------------------------------------------------------------
def _toml_value(v: Any) -> str:
    # Hand-written because the standard library reads TOML but cannot write it, and
    # the schema here is tiny (strings, ints, bools, string lists): not worth a dependency.
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        # A JSON string is a valid TOML basic string except that TOML forbids a raw DEL.
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007F")
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to the manifest")


def entries_to_toml(entries: Iterable[ModelEntry], header: str = "") -> str:
    """Serialise entries as ``[[model]]`` tables that ``load_manifest`` reads back."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()] if header else []
    lines.append("schema = 1")
    for e in entries:
        lines += ["", "[[model]]"]
        table = e.to_toml_dict()
        files = table.pop("files", [])
        for k, v in table.items():
            if v is None:
                continue
            lines.append(f"{k} = {_toml_value(v)}")
        for f in files:
            lines += ["", "[[model.files]]"]
            lines += [f"{k} = {_toml_value(v)}" for k, v in f.items()]
    return "\n".join(lines) + "\n"


# -- hashing --------------------------------------------------------------------------------
def sha256_file(path: Path, on_progress: Callable[[int], None] | None = None) -> str:
    """sha256 of a file read in 8 MiB chunks; ``on_progress(nbytes)`` after each chunk."""
    h = hashlib.sha256()
    buf = bytearray(CHUNK_BYTES)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as fh:
        while True:
            n = fh.readinto(buf)
            if not n:
                break
            h.update(view[:n])
            if on_progress:
                on_progress(n)
    return h.hexdigest()


def human_size(n: int, approx: bool = False) -> str:
    """Decimal units, as Hugging Face shows them (4.68 GB)."""
    if n <= 0:
        return "?"
    units = ["B", "kB", "MB", "GB", "TB"]
    x = float(n)
    for unit in units:
        if x < 1000 or unit == units[-1]:
            text = f"{x:.0f} {unit}" if unit == "B" else f"{x:.2f} {unit}".replace(".00 ", " ")
            return ("~" if approx else "") + text
        x /= 1000
    return str(n)  # pragma: no cover


# -- the lock file --------------------------------------------------------------------------
@dataclass
class LockRecord:
    """What was true of one file when it was last hashed."""

    name: str
    file: str
    sha256: str
    size: int
    mtime_ns: int
    recorded_at: str
    how: str                           # "fetch", "verify" or "add"
    matches_manifest: bool | None      # None: the manifest had no hash to compare with
    url: str = ""
    fetched_at: str = ""               # set by fetch_models.py, kept by later verifies

    def still_valid(self, path: Path) -> bool:
        """The file has the size and mtime it had when hashed (so the hash still holds)."""
        try:
            st = path.stat()
        except OSError:
            return False
        return st.st_size == self.size and st.st_mtime_ns == self.mtime_ns


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Lock:
    """``models/models.lock.json``: one record per file, keyed by its path in models/."""

    VERSION = 1

    def __init__(self, path: Path, records: dict[str, LockRecord] | None = None) -> None:
        self.path = Path(path)
        self.records: dict[str, LockRecord] = records or {}

    @classmethod
    def load(cls, models_dir: Path) -> "Lock":
        path = Path(models_dir) / LOCK_NAME
        if not path.is_file():
            return cls(path)
        try:
            data = json.loads(path.read_text("utf-8"))
            raw = data["files"]
            records = {k: LockRecord(**v) for k, v in raw.items()}
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ManifestError(f"{path}: unreadable lock file ({e}); delete it and run "
                                "'localeval models verify' to rebuild it") from None
        return cls(path, records)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"version": self.VERSION,
                "files": {k: vars(r) for k, r in sorted(self.records.items())}}
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
        os.replace(tmp, self.path)

    @staticmethod
    def key(path: Path, models_dir: Path) -> str:
        """Path relative to models/ (posix), or absolute for files kept elsewhere."""
        path = Path(path).absolute()
        try:
            return path.relative_to(Path(models_dir).absolute()).as_posix()
        except ValueError:
            return path.as_posix()

    def get(self, path: Path, models_dir: Path) -> LockRecord | None:
        return self.records.get(self.key(path, models_dir))

    def valid(self, path: Path, models_dir: Path) -> LockRecord | None:
        """The record for ``path`` if the file is unchanged since it was hashed."""
        rec = self.get(path, models_dir)
        return rec if rec is not None and rec.still_valid(path) else None

    def record(self, path: Path, models_dir: Path, *, name: str, sha256: str, how: str,
               matches_manifest: bool | None, url: str = "", fetched_at: str = "") -> LockRecord:
        st = Path(path).stat()
        key = self.key(path, models_dir)
        now = _now()
        rec = LockRecord(name=name, file=key, sha256=sha256, size=st.st_size,
                         mtime_ns=st.st_mtime_ns, recorded_at=now, how=how,
                         matches_manifest=matches_manifest, url=url,
                         fetched_at=fetched_at or (now if how == "fetch" else ""))
        self.records[key] = rec
        return rec

    def forget(self, path: Path, models_dir: Path) -> None:
        self.records.pop(self.key(path, models_dir), None)
