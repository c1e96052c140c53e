"""How a metric's details (the judge's working) are shown: any JSON-like value as a node.

A node is a plain dict the template's recursive macro renders:

    {"kind": "text", "text": str, "tone": str}     a string or number
    {"kind": "verdict", "ok": bool, "text": str, "title": str}
    {"kind": "list", "entries": [node], "ordered": bool, "inline": bool, "more": int}
    {"kind": "table", "columns": [str], "rows": [{"cells": [node], "bad": bool}], "more": int}
    {"kind": "dict", "entries": [(label, tone, node)]}

Known keys get friendlier shapes: verdicts become check marks, a list of
statements with a parallel list of verdicts becomes one table. Nothing here
escapes or builds HTML; the template does that.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from localeval.report.numbers import plain_number

__all__ = ["to_node", "label", "LABELS", "MAX_LIST_ITEMS", "MAX_DEPTH"]

#: Lists longer than this in the judge's working are cut (with a note) to keep
#: one runaway detail from making the page unusable.
MAX_LIST_ITEMS = 200
#: Deeper nesting than this is shown as JSON text.
MAX_DEPTH = 6

# Friendlier labels for keys metrics commonly put in their details; any other
# key is shown with underscores turned into spaces. Matched case-insensitively.
LABELS: dict[str, str] = {
    "statements": "Statements",
    "statement": "Statement",
    "verdicts": "Verdicts",
    "verdict": "Verdict",
    "reason": "Reason",
    "reasons": "Reasons",
    "tp": "True positives (TP)",
    "fp": "False positives (FP)",
    "fn": "False negatives (FN)",
    "questions": "Generated questions",
    "question": "Question",
    "cosine": "Cosine",
    "cosines": "Cosines",
    "similarity": "Similarity",
    "similarities": "Similarities",
    "noncommittal": "Noncommittal",
    "ratings": "Judge ratings",
    "rating": "Rating",
    "classifications": "Reference statements",
    "entities": "Entities",
    "context_entities": "Context entities",
    "reference_entities": "Reference entities",
    "sentences": "Relevant sentences",
    "sentence": "Sentence",
    "contexts": "Contexts",
    "context": "Context",
    "repeats": "Score per repeat",
    "std": "Std. dev. over repeats",
    "f1": "F1",
    "weights": "Weights",
    "probabilities": "Verdict probabilities",
    "probs": "Verdict probabilities",
}
# Keys whose 0/1 (or bool) values are verdicts: shown as check / cross.
_VERDICT_KEYS = {"verdict", "verdicts", "attributed", "supported", "relevant", "useful",
                 "faithful", "present"}
# Keys whose value 1 is a bad sign (shown as a warning, not a check mark).
_FLAG_BAD_KEYS = {"noncommittal"}
# Section tones for the TP/FP/FN classification.
_TONES = {"tp": "good", "fp": "bad", "fn": "bad"}
# A dict holding one of these lists plus parallel lists of the same length
# (verdicts, cosines...) is shown as one table, one row per item.
_PRIMARY_LISTS = ("statements", "questions", "sentences", "contexts", "claims")
_PARALLEL_LISTS = ("verdicts", "cosines", "similarities", "scores", "reasons", "ratings",
                   "noncommittal", "probabilities", "probs")
# Column order in tables: the text first, then the judgement, then the reason.
_COLUMN_RANK = {k: 0 for k in ("id", "statement", "question", "sentence", "claim", "text",
                               "context", "entity")}
_COLUMN_RANK.update({k: 1 for k in ("verdict", "rating", "noncommittal", "cosine",
                                    "similarity", "score", "probability")})
_COLUMN_RANK["reason"] = 2
_SINGULAR = {"statements": "statement", "questions": "question", "sentences": "sentence",
             "contexts": "context", "claims": "claim", "verdicts": "verdict",
             "cosines": "cosine", "similarities": "similarity", "scores": "score",
             "reasons": "reason", "ratings": "rating", "probabilities": "probability",
             "probs": "probability"}


def label(key: str) -> str:
    """The heading shown for a details key."""
    k = str(key)
    if k.lower() in LABELS:
        return LABELS[k.lower()]
    # plain snake_case keys read better as words; anything else (step names,
    # ids, mixed case) may be data and is shown as written
    return k.replace("_", " ").capitalize() if re.fullmatch(r"[a-z][a-z0-9_]*", k) else k


def _text(s: str, tone: str = "") -> dict[str, Any]:
    return {"kind": "text", "text": s, "tone": tone}


def _verdict(v: Any, key: str) -> dict[str, Any] | None:
    """A check/cross node for verdict-like keys, None when ``v`` is not a verdict value."""
    k = key.lower()
    if isinstance(v, str) or v not in (0, 1):  # True/False compare equal to 1/0
        return None
    if k in _VERDICT_KEYS:
        ok = bool(v)
        return {"kind": "verdict", "ok": ok, "text": "✓" if ok else "✗",
                "title": "yes (1)" if ok else "no (0)"}
    if k in _FLAG_BAD_KEYS:
        return {"kind": "verdict", "ok": not bool(v), "text": "yes" if v else "no",
                "title": key}
    return None


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def to_node(value: Any, key: str = "", depth: int = 0) -> dict[str, Any]:
    """Turn any JSON-like value into a node, with friendlier shapes for known keys."""
    if depth > MAX_DEPTH:
        return _text(json.dumps(value, ensure_ascii=False, default=str), "mono")
    if value is None:
        return _text("null", "muted")
    if _is_scalar(value):
        v = _verdict(value, key)
        if v is not None:
            return v
        if isinstance(value, str):
            return _text(value) if value else _text("(empty)", "muted")
        return _text(plain_number(value), "num")
    if isinstance(value, Mapping):
        return _dict_node(value, depth)
    if isinstance(value, (list, tuple)):
        return _list_node(list(value), key, depth)
    return _text(str(value))


def _dict_node(d: Mapping[str, Any], depth: int) -> dict[str, Any]:
    d = dict(d)
    items: list[tuple[str, str, dict[str, Any]]] = []
    for prim in _PRIMARY_LISTS:
        if prim in d and isinstance(d[prim], list):
            merged = _merge_parallel(d, prim)
            if merged is not None:
                rows, used = merged
                for k in used:
                    d.pop(k)
                items.append((label(prim), "", _list_node(rows, prim, depth + 1)))
    for k, v in d.items():
        items.append((label(k), _TONES.get(str(k).lower(), ""), to_node(v, str(k), depth + 1)))
    return {"kind": "dict", "entries": items}


def _merge_parallel(d: Mapping[str, Any],
                    prim: str) -> tuple[list[dict[str, Any]], list[str]] | None:
    """Zip ``d[prim]`` with same-length parallel lists into rows; None if there are none."""
    base = d[prim]
    n = len(base)
    partners = [k for k in _PARALLEL_LISTS
                if k != prim and isinstance(d.get(k), list) and len(d[k]) == n]
    if not partners or n == 0:
        return None
    rows: list[dict[str, Any]] = []
    for i in range(n):
        row: dict[str, Any] = {}
        for k in (prim, *partners):
            item = d[k][i]
            if isinstance(item, Mapping):
                # e.g. verdicts [{"reason", "verdict"}]: their keys become columns
                for ik, iv in item.items():
                    row.setdefault(ik, iv)
            else:
                row[_SINGULAR.get(k, k)] = item
        rows.append(row)
    return rows, [prim, *partners]


def _list_node(items: list[Any], key: str, depth: int) -> dict[str, Any]:
    if not items:
        return _text("(none)", "muted")
    more = max(0, len(items) - MAX_LIST_ITEMS)
    items = items[:MAX_LIST_ITEMS]
    child_key = _SINGULAR.get(key.lower(), key)
    if all(isinstance(x, Mapping) for x in items) and all(
            _is_scalar(v) or _small(v) for x in items for v in x.values()):
        cols: list[str] = []
        for x in items:
            for k in x:
                if k not in cols:
                    cols.append(k)
        cols.sort(key=lambda c: _COLUMN_RANK.get(str(c).lower(), 1))
        rows = []
        for x in items:
            cells = [to_node(x[c], str(c), depth + 1) if c in x else _text("", "muted")
                     for c in cols]
            # a row whose verdict is "no" is tinted, so failures stand out
            bad = any(c["kind"] == "verdict" and not c["ok"] for c in cells)
            rows.append({"cells": cells, "bad": bad})
        return {"kind": "table", "columns": [label(c) for c in cols], "rows": rows,
                "more": more}
    nodes = [to_node(x, child_key, depth + 1) for x in items]
    # numbers, verdicts and short names (entities, ids) read best on one line
    short_names = key.lower().endswith(("entities", "ids")) and all(
        isinstance(x, str) and len(x) <= 60 for x in items)
    inline = short_names or all(not isinstance(x, str) and _is_scalar(x) for x in items)
    return {"kind": "list", "entries": nodes, "ordered": not inline and len(items) > 1,
            "inline": inline, "more": more}


def _small(v: Any) -> bool:
    """Short lists of scalars may sit in a table cell."""
    return isinstance(v, (list, tuple)) and len(v) <= 8 and all(_is_scalar(x) for x in v)

