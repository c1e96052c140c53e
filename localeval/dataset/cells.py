"""The one reader of list cells, for every command (``run``, ``compare``, ``validate``).

A list in a CSV/TSV cell comes two ways: as JSON (``["a", "b"]``, what localeval
and most tools write) or as the Python repr pandas' ``to_csv`` writes for a
list (``['a', 'b']``, what ``EvaluationDataset.to_pandas().to_csv()`` gives a
RAGAS user). JSON is read strictly (``formats.loads_strict``); the Python form
is read with ``ast.literal_eval``, which evaluates literals only (never
``eval``), and is accepted only when it is a list of strings.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from localeval.dataset.formats import loads_strict

__all__ = ["read_list_cell", "text_list"]


def read_list_cell(text: str) -> Any:
    """The value of a list cell: its JSON, else the Python list of strings pandas wrote.

    Raises ``json.JSONDecodeError`` when the cell is neither (the caller words the
    message for its column), and the ``ValueError`` of ``loads_strict`` for JSON
    that localeval refuses (NaN, huge numbers).
    """
    try:
        return loads_strict(text)
    except json.JSONDecodeError:
        py = _python_strings(text)
        if py is None:
            raise
        return py


def _python_strings(text: str) -> list[str] | None:
    """``['a', 'b']`` as a list of strings; None for anything else."""
    if not text.lstrip().startswith("["):
        return None
    try:
        out = ast.literal_eval(text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(out, list) and all(isinstance(x, str) for x in out):
        return out
    return None


def text_list(v: Any) -> list[str] | None:
    """A contexts value as a list of texts (a list, or a list cell as above); None otherwise."""
    if isinstance(v, list):
        return v if all(isinstance(x, str) for x in v) else None
    if not isinstance(v, str) or not v.strip().startswith("["):
        return None
    try:
        out = read_list_cell(v)
    except ValueError:
        return None
    return out if isinstance(out, list) and all(isinstance(x, str) for x in out) else None
