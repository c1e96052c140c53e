"""A run's name and tags (``--name v2 --tag branch=main``), checked, and its ``run`` section.

A team runs the same evaluation every week and on every pull request; the
folders and dates alone do not say which run was which, so a run may carry a
name and tags, recorded in summary.json's ``run`` section beside when it started
and what data it read (``localeval runs`` lists them). They are the user's
words and reach terminals, tables and pages, so they are checked once, here:
text, not empty, no control or bidi characters (a newline would break a
table's row, an ESC recolour the terminal), of a bounded length.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Iterable, Mapping

from localeval.errors import UsageError, printable

__all__ = ["check_name", "check_tags", "parse_tags", "run_section", "MAX_LABEL_CHARS",
           "MAX_TAGS"]

#: Longest name, tag key or tag value.
MAX_LABEL_CHARS = 200
#: Most tags a run may carry.
MAX_TAGS = 50


def check_name(name: Any, option: str = "name") -> str | None:
    """``name`` if it is a usable run name (None stays None); else a UsageError."""
    if name is None:
        return None
    return _text(name, option, "the run's name")


def check_tags(tags: Mapping[str, Any] | None, option: str = "tags") -> dict[str, str]:
    """``tags`` as ``{key: value}`` text; a number value is written as text (``pr=12``).

    A key must not hold ``=`` (``--tag`` splits on the first one), so that every
    tag given in Python can be given on the command line too.
    """
    if not tags:
        return {}
    if not isinstance(tags, Mapping):
        raise UsageError(f"{option}: expected a mapping of tag -> value, e.g. "
                         "{'branch': 'main'}, got " + type(tags).__name__)
    if len(tags) > MAX_TAGS:
        raise UsageError(f"{option}: {len(tags)} tags; at most {MAX_TAGS}")
    out: dict[str, str] = {}
    for key, value in tags.items():
        k = _text(key, option, "a tag's key")
        if "=" in k:
            raise UsageError(f"{option}: the tag key '{printable(k)}' holds '='; "
                             "a key is the part before the first '='")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        out[k] = _text(value, option, f"tag '{printable(k)}''s value")
    return out


def parse_tags(items: Iterable[str], option: str = "--tag") -> dict[str, str]:
    """``["branch=main", "pr=12"]`` (repeated ``--tag``) -> ``{"branch": "main", "pr": "12"}``."""
    tags: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"{option} '{printable(item)}': expected KEY=VALUE, "
                             f"e.g. {option} branch=main")
        key, value = key.strip(), value.strip()
        if key in tags:
            raise UsageError(f"{option} '{printable(key)}' given twice "
                             f"('{printable(tags[key])}' and '{printable(value)}'); keep one")
        tags[key] = value
    return check_tags(tags, option)


def run_section(name: str | None, tags: Mapping[str, str], data: str,
                started: datetime | None = None) -> dict[str, Any]:
    """summary.json's ``run``: when it started (UTC, to the second), what data it read
    (the path as given, or ``<DataFrame>``), and its name and tags when it has them."""
    when = (started or datetime.now(UTC)).astimezone(UTC)
    out: dict[str, Any] = {"started": when.isoformat(timespec="seconds").replace("+00:00", "Z"),
                           "data": data}
    if name is not None:
        out["name"] = name
    if tags:
        out["tags"] = dict(tags)
    return out


def _text(value: Any, option: str, what: str) -> str:
    if not isinstance(value, str):
        raise UsageError(f"{option}: {what} must be text, got {type(value).__name__}")
    if not value.strip():
        raise UsageError(f"{option}: {what} is empty")
    if len(value) > MAX_LABEL_CHARS:
        raise UsageError(f"{option}: {what} is {len(value)} characters long; at most "
                         f"{MAX_LABEL_CHARS}")
    if printable(value) != value:
        raise UsageError(f"{option}: {what} '{printable(value)}' holds control or "
                         "direction characters; use plain text")
    return value
