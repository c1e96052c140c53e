"""The model manifest: the shipped ``manifest.toml`` + ``models/local.toml``, read and written.

The manifest says which judge and embedding models localeval knows: file
names, where a connected machine can fetch them, their published sha256 (when
one could be found), size, licence and when to pick each. ``local.toml`` holds
the user's own models registered with ``localeval models add``; the shipped
manifest is never edited. Each table is checked by ``entry_from_table``
(``localeval.catalog.entry``); ``entries_to_toml`` writes ``local.toml``.

Standard library only: ``scripts/fetch_models.py`` imports this on a
connected machine where localeval's dependencies need not be installed.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from localeval.catalog.entry import ManifestError, ModelEntry, entry_from_table

__all__ = [
    "Manifest",
    "load_manifest",
    "manifest_paths",
    "entries_to_toml",
    "MANIFEST_NAME",
    "LOCAL_NAME",
    "SHIPPED_MANIFEST",
]

MANIFEST_NAME = "manifest.toml"
LOCAL_NAME = "local.toml"


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


#: The manifest shipped with localeval: package data beside this module, so a wheel
#: installed anywhere knows its models (the checkout's ``models/`` is not in the wheel).
SHIPPED_MANIFEST = Path(__file__).resolve().with_name(MANIFEST_NAME)


def manifest_paths(models_dir: Path) -> tuple[Path, Path]:
    """(shipped manifest, local manifest) for a models folder.

    A ``manifest.toml`` inside ``models_dir`` replaces the shipped one (a site's
    own list, or a test's); otherwise the package's copy is used.
    """
    models_dir = Path(models_dir)
    shipped = models_dir / MANIFEST_NAME
    if not shipped.is_file():
        shipped = SHIPPED_MANIFEST
    return shipped, models_dir / LOCAL_NAME


#: tomllib's "Invalid value (at line 4, column 8)": the line and column are put first.
_TOML_AT = re.compile(r"(?P<msg>.*) \(at line (?P<line>\d+), column (?P<col>\d+)\)", re.DOTALL)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except tomllib.TOMLDecodeError as e:
        m = _TOML_AT.fullmatch(str(e))
        where = f"{path}: line {m['line']}, column {m['col']}" if m else str(path)
        msg = m["msg"] if m else str(e)
        raise ManifestError(f"{where}: not valid TOML ({msg[:1].lower()}{msg[1:]})") from None
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
    wheres: list[str] = []
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
            entries.append(entry_from_table(table, f"{path}, model {i}", source))
            wheres.append(f"{path}, model {i} ('{entries[-1].name}')")
        used.append(path)
    seen: dict[str, str] = {}
    for e, where in zip(entries, wheres):
        key = e.name.lower()
        if key in seen:  # blame the entry that repeats the name, and say where it was first
            raise ManifestError(f"{where}: the name is already used by {seen[key]}; model "
                                "names must be unique (in any case)")
        seen[key] = where
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
