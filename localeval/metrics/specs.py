"""Metric names and specs: the registry and the parser of ``--metrics`` text.

``register`` makes a metric class findable by name; ``parse_metrics`` turns
``"faithfulness,ndcg@10,answer_correctness:weights=0.5,0.5"`` into metric
instances, converting each parameter to its field's type. The built-in
families register themselves when first asked for, so ``localeval --help``
imports none of them.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Mapping, Sequence

from localeval.errors import InvalidArgument, UsageError, printable
from localeval.metrics.base import Metric, Thresholded

__all__ = ["register", "registry", "builtin_names", "get_metric", "parse_metrics"]

_REGISTRY: dict[str, type[Metric]] = {}


def register(cls: type[Metric]) -> type[Metric]:
    """Class decorator: make a metric available by name and aliases."""
    for n in (cls.name, *cls.aliases):
        if n in _REGISTRY and _REGISTRY[n] is not cls:
            raise ValueError(f"metric name {n!r} registered twice")
        _REGISTRY[n] = cls
    return cls


def registry() -> dict[str, type[Metric]]:
    """Canonical name -> class for every registered metric (aliases excluded)."""
    _load_builtin()
    return {n: c for n, c in _REGISTRY.items() if c.name == n}


def builtin_names() -> dict[str, str]:
    """Every registered name and alias, case-folded -> as registered (to refuse ``Faithfulness``)."""
    _load_builtin()
    return {n.casefold(): n for n in _REGISTRY}


def get_metric(name: str) -> type[Metric]:
    _load_builtin()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(registry()))
        raise UsageError(f"unknown metric {name!r}{_defined_in_file(name)}; known metrics: "
                         f"{known}") from None


def _defined_in_file(name: str) -> str:
    """A hint when ``name`` is a table of a metrics file (TOML) in the working folder:
    the user wrote ``-m polite`` and forgot ``--metrics-file``."""
    import tomllib
    from pathlib import Path

    for path in sorted(Path.cwd().glob("*.toml")) + sorted(Path.cwd().glob("*/*.toml"))[:50]:
        try:
            if name in tomllib.loads(path.read_text(encoding="utf-8")):
                return (f" (it is defined in the metrics file {path.relative_to(Path.cwd())}: "
                        f"pass --metrics-file {path.relative_to(Path.cwd())}; in Python, "
                        "load_metrics_file)")
        except (OSError, ValueError, UnicodeDecodeError):
            continue
    return ""


def _load_builtin() -> None:
    # Import the metric families for their @register side effects, lazily so
    # that `localeval --help` stays fast.
    import importlib

    for mod in ("retrieval", "bleu", "rouge", "answer", "rag_context", "nvidia", "strings",
                "chrf", "factual", "tools", "tool_checks", "agents", "topics",
                "conversational", "retention"):
        try:
            importlib.import_module(f"localeval.metrics.{mod}")
        except ModuleNotFoundError as e:  # family not built yet
            if e.name != f"localeval.metrics.{mod}":
                raise


# -- spec parsing ---------------------------------------------------------------
def parse_metrics(spec: str | Sequence[str | Metric],
                  defined: Mapping[str, Metric] | None = None) -> list[Metric]:
    """Parse ``"faithfulness,ndcg@10,answer_correctness:weights=0.5,0.5"``.

    Commas separate metrics, but a comma-separated token that is not a metric
    name (a number, or ``key=value``) continues the previous metric's
    parameters, so list-valued parameters need no quoting. ``;`` also
    separates parameters. ``defined`` maps the names of user-defined metrics
    (a ``--metrics-file``) to their instances; such a name takes no parameters
    except ``threshold``.
    """
    defined = dict(defined or {})
    if isinstance(spec, str):
        items: list[str | Metric] = []
        for tok in (t.strip() for t in spec.split(",")):
            if not tok:
                continue
            head = tok.split(":", 1)[0].split("@", 1)[0]
            if items and isinstance(items[-1], str) and ":" in items[-1] and (
                "=" in tok and ":" not in tok or _is_number(tok)) and not _known(head) \
                    and head not in defined:
                items[-1] = f"{items[-1]},{tok}"
            else:
                items.append(tok)
    elif isinstance(spec, (list, tuple)):
        items = [_metric_item(it, i) for i, it in enumerate(spec, 1)]
    else:
        raise InvalidArgument(f"metrics must be a list of metric names or metric instances "
                              f"(or one comma-separated text), got {_what(spec)}")
    out: list[Metric] = []
    for it in items:
        out.append(it if isinstance(it, Metric) else _parse_defined(it, defined)
                   if it.split(":", 1)[0].strip() in defined else _parse_one(it))
    # compared ignoring case: results.csv, pandas and compare would take one for the other
    keys = [m.key.casefold() for m in out]
    dup = {m.key for m in out if keys.count(m.key.casefold()) > 1}
    if dup:
        raise UsageError("metric given twice (names are compared ignoring case): "
                         + ", ".join(printable(k) for k in sorted(dup)))
    return out


def _what(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _metric_item(item: Any, position: int) -> str | Metric:
    """One element of a metric list: a name or a metric instance, else a plain error."""
    if isinstance(item, (str, Metric)):
        return item
    if isinstance(item, type):  # Faithfulness where Faithfulness() belongs
        name = item.__name__
        raise InvalidArgument(f"metrics: pass an instance: {name}(), not {name} (the class)")
    raise InvalidArgument(f"metrics: item {position} is not a metric (got {_what(item)}); pass "
                          "metric names such as 'faithfulness' or metric instances")


def _parse_defined(text: str, defined: Mapping[str, Metric]) -> Metric:
    """A user-defined metric by name, optionally ``name:threshold=0.8``."""
    name, _, param_text = text.partition(":")
    metric = defined[name.strip()]
    params = dict(_split_params(param_text)) if param_text else {}
    unknown = sorted(set(params) - {"threshold"})
    if unknown:
        raise UsageError(f"metric {name.strip()!r} is defined in the metrics file; only "
                         f"'threshold' can be given after its name, not {', '.join(unknown)}")
    if "threshold" not in params:
        return metric
    try:
        return Thresholded(metric, float(params["threshold"]))
    except ValueError:
        raise UsageError(f"metric {name.strip()!r}: threshold must be a number") from None


def _known(name: str) -> bool:
    _load_builtin()
    return name in _REGISTRY


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _parse_one(text: str) -> Metric:
    name, _, param_text = text.partition(":")
    name, _, at = name.partition("@")
    cls = get_metric(name.strip())
    kwargs: dict[str, Any] = {}
    if at:
        if not cls.at_field:
            raise UsageError(f"metric {cls.name!r} takes no @k")
        kwargs[cls.at_field] = at
    if param_text:
        for key, raw in _split_params(param_text):
            kwargs[key] = raw
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    threshold = None
    if "threshold" in kwargs and "threshold" not in fields:
        try:
            threshold = float(kwargs.pop("threshold"))
        except ValueError:
            raise UsageError(f"metric {cls.name!r}: threshold must be a number") from None
    conv: dict[str, Any] = {}
    for k, raw in kwargs.items():
        if k not in fields:
            raise UsageError(
                f"metric {cls.name!r} has no parameter {k!r}; parameters: "
                + (", ".join(fields) or "none"))
        try:
            conv[k] = _convert(raw, hints[k])
        except (TypeError, ValueError) as e:
            raise UsageError(f"metric {cls.name!r}: bad value {raw!r} for {k}: {e}") from None
    try:
        metric = cls(**conv)
    except (TypeError, ValueError) as e:
        raise UsageError(f"metric {cls.name!r}: {e}") from None
    return Thresholded(metric, threshold) if threshold is not None else metric


def _split_params(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for tok in (t.strip() for t in text.replace(";", ",").split(",")):
        if not tok:
            continue
        if "=" in tok:
            k, v = tok.split("=", 1)
            out.append((k.strip(), v.strip()))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + "," + tok)
        else:
            raise UsageError(f"bad metric parameter {tok!r}: expected key=value")
    return out


def _convert(raw: Any, hint: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        if raw.lower() in ("none", "null") and type(None) in args:
            return None
        for a in args:
            if a is type(None):
                continue
            try:
                return _convert(raw, a)
            except (TypeError, ValueError):
                continue
        raise ValueError("no matching type")
    if origin in (tuple, list):
        inner = args[0] if args else str
        vals = [_convert(x.strip(), inner) for x in raw.split(",") if x.strip()]
        return tuple(vals) if origin is tuple else vals
    if origin is typing.Literal:
        for a in args:
            if str(a) == raw:
                return a
        raise ValueError(f"expected one of {', '.join(map(str, args))}")
    if hint is bool:
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected true or false")
    if hint in (int, float, str):
        return hint(raw)
    return raw
