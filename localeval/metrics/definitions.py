"""User-defined metrics from a TOML file (``localeval run --metrics-file criteria.toml``).

Each table is one metric; its name is the table's name and ``type`` says
what it is::

    [polite]
    type = "aspect_critic"
    definition = "Is the answer polite and free of blame?"
    strictness = 3

    [completeness]
    type = "rubrics_score"
    rubrics = { 1 = "Misses the point.", 3 = "Answers in part.", 5 = "Answers fully." }

    [helpful]
    type = "geval"
    criteria = "Does the answer help the user act on their question?"
    scale = [1, 10]

    [per_sample]
    type = "instance_rubrics"
    column = "rubrics"

TOML (``tomllib``, the standard library's reader) rather than a new syntax:
rubrics and step lists need nesting, and users already write pyproject.toml.
Every problem is one ``UsageError`` naming the file and the table, and the key
when one value is wrong: values are checked strictly, by type, by the metric's
own parameter model (``localeval.metrics.parameters``), never coerced.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from localeval.errors import InvalidArgument, UsageError, printable
from localeval.metrics.base import Metric

__all__ = ["load_metrics_file", "metric_from_table", "TYPES"]

#: ``type`` value -> (module, class) of the user-defined metric.
TYPES: dict[str, tuple[str, str]] = {
    "aspect_critic": ("criteria", "AspectCritic"),
    "rubrics_score": ("rubrics", "RubricsScore"),
    "instance_rubrics": ("rubrics", "InstanceRubrics"),
    "geval": ("geval", "GEval"),
}
_ALIASES = {"aspectcritic": "aspect_critic", "rubrics": "rubrics_score",
            "rubricsscore": "rubrics_score", "instancerubrics": "instance_rubrics",
            "g_eval": "geval"}


def metric_from_table(name: str, table: dict[str, Any], where: str = "") -> Metric:
    """One user-defined metric from its TOML table (``type`` plus its parameters)."""
    import dataclasses
    import importlib

    at = f"{where}[{printable(name)}]"
    if not isinstance(table, dict):
        raise UsageError(f"{at}: expected a table with a 'type' and its parameters")
    params = dict(table)
    kind = params.pop("type", "")
    if not isinstance(kind, str):
        raise UsageError(f"{at}: type: expected text (one of {', '.join(TYPES)})")
    kind = kind.strip().lower()
    kind = _ALIASES.get(kind, kind)
    if kind not in TYPES:
        raise UsageError(f"{at}: 'type' must be one of {', '.join(TYPES)}"
                         + (f", not {kind!r}" if kind else " (missing)"))
    if params.pop("name", name) != name:
        raise UsageError(f"{at}: 'name' differs from the table name; the table name is the "
                         "metric's name")
    module, cls_name = TYPES[kind]
    cls = getattr(importlib.import_module(f"localeval.metrics.{module}"), cls_name)
    allowed = {f.name for f in dataclasses.fields(cls)} - {"name"}
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise UsageError(f"{at}: unknown parameter {', '.join(map(printable, unknown))} for "
                         f"type {kind!r}; "
                         f"parameters: {', '.join(sorted(allowed))}")
    try:
        return cls(name=name, **params)
    except InvalidArgument as e:
        raise UsageError(f"{at}: {e.detail}") from None
    except (TypeError, ValueError) as e:
        raise UsageError(f"{at}: {e}") from None


def load_metrics_file(path: str | Path) -> dict[str, Metric]:
    """Name -> metric for every table of the TOML file at ``path``, in file order."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise UsageError(f"metrics file {p}: cannot read it ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise UsageError(f"metrics file {p}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"metrics file {p}: not valid TOML ({e})") from None
    if not data:
        raise UsageError(f"metrics file {p}: defines no metric (one [name] table per metric)")
    out: dict[str, Metric] = {}
    for name, table in data.items():
        _check_table_name(name, out, p)
        out[name] = metric_from_table(name, table, f"{p}: ")
    return out


def _check_table_name(name: str, earlier: dict[str, Metric], path: Path) -> None:
    """A table's name must be a valid metric name (``criteria.check_name``), and differ, also in
    case, from every built-in metric and alias and from the file's earlier tables: results,
    ``compare`` and spreadsheets would otherwise take one for the other."""
    from localeval.metrics.criteria import check_name
    from localeval.metrics.specs import builtin_names

    at = f"{path}: [{printable(name)}]"
    try:
        check_name(name)
    except ValueError as e:
        raise UsageError(f"{at}: {e}") from None
    same = builtin_names().get(name.casefold())
    if same is not None:
        raise UsageError(f"{at}: the name of the built-in metric {same!r}"
                         + (" (names are compared ignoring case)" if same != name else "")
                         + "; choose another")
    twin = next((n for n in earlier if n.casefold() == name.casefold()), None)
    if twin is not None:
        raise UsageError(f"{at}: the same name as [{printable(twin)}] earlier in the file "
                         "(names are compared ignoring case); choose another")
