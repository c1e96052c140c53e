"""One model of the catalog: its manifest entry, its files, and the checks on both.

A ``[[model]]`` table from ``models/manifest.toml`` or ``models/local.toml``
becomes a ``ModelEntry`` only after ``entry_from_table`` has checked every
field (types, hashes, paths that stay inside ``models/``), so a typo in a
manifest is one ``ManifestError`` naming the file and the entry, not a
confusing failure later. ``FileSpec`` is one file of a model; an embedder is
a folder of them.

Standard library only: ``scripts/fetch_models.py`` imports this on a
connected machine where localeval's dependencies need not be installed.
That is why it raises ``ManifestError`` (a ValueError); the catalog's
resolver turns that into ``ModelError`` (exit 3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from localeval.errors import ManifestError

__all__ = ["ManifestError", "FileSpec", "ModelEntry", "entry_from_table", "human_size",
           "FETCH_HINT"]

#: What to run on a machine with internet (``catalog/fetch.py``) for a model that is absent.
FETCH_HINT = "localeval models fetch {name} --to models/"

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_KINDS = ("judge", "embedder", "checker")
#: Kinds that are a folder of files (hashed per file); a judge is one GGUF file.
FOLDER_KINDS = ("embedder", "checker")


@dataclass(frozen=True)
class FileSpec:
    """One file of a model, relative to ``models/`` (or absolute for ``path =`` entries)."""

    rel: str                 # "Qwen2.5-7B-Instruct-Q4_K_M.gguf" or "multilingual-e5-base/config.json"
    url: str                 # where `models fetch` downloads it ("" when unknown)
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
            # a file of another repository (HHEM's foundation tokenizer) names its own URL
            url = str(f.get("url") or (base + rel if base else ""))
            out.append(FileSpec(f"{self.file}/{rel}", url,
                                int(f.get("size_bytes", 0)), bool(f.get("size_approx", True)),
                                str(f.get("sha256", "")), bool(f.get("verified_hash", False))))
        return out

    def fetchable(self) -> bool:
        """Whether ``models fetch`` is the way to get it: a manifest model (from its URL or a
        ``--url-override``), not one of your own registered from a path or without a URL."""
        if self.path:
            return False
        return self.source != "local" or any(s.url for s in self.file_specs())

    def restore_hint(self, models_dir: Path) -> str:
        """What brings this model's files back: fetching it, or, for a model of your own
        that no URL can fetch, putting it back or registering it again."""
        if self.fetchable():
            return FETCH_HINT.format(name=self.name)
        if self.path:
            return (f"registered at {self.root(models_dir)}, which no longer exists: put it "
                    "back or register it again with `localeval models add PATH`")
        return (f"it has no download URL: copy it back to {self.root(models_dir)}, or "
                "register it again with `localeval models add PATH`")

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
              "verified_hash": (bool,), "url": (str,)}


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


def entry_from_table(table: dict[str, Any], where: str, source: str) -> ModelEntry:
    """A checked ``ModelEntry`` from one ``[[model]]`` table; ManifestError names what is wrong."""
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
        raise ManifestError(f"{where}: kind must be 'judge', 'embedder' or 'checker', not "
                            f"'{table['kind']}'")
    _check_relpath(table["file"], f"{where}: file", nested=False)
    _check_hash(table.get("sha256", ""), table.get("verified_hash", False), where)
    files = table.get("files", [])
    if table["kind"] in FOLDER_KINDS:
        kind = table["kind"]
        if table.get("sha256"):
            raise ManifestError(f"{where}: {'an' if kind == 'embedder' else 'a'} {kind} is a "
                                "folder; give sha256 per [[model.files]]")
        if not files and not table.get("path") and not table.get("bundled"):
            raise ManifestError(f"{where}: {'an' if kind == 'embedder' else 'a'} {kind} needs "
                                "[[model.files]] entries")
    elif files:
        raise ManifestError(f"{where}: only embedders and checkers have [[model.files]]")
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
