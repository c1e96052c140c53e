"""``METRIC=VALUE`` options, parsed once: ``--fail-under``, ``--fail-under-each``,
``diff --threshold`` and ``diff --fail-if-worse`` (and the margins of ``assert_not_worse``).

A METRIC is a metric key as the results name it, parameters included:
``ndcg@10``, ``rougeL:threshold=0.5``, ``answer_correctness:weights=0.5,0.5;threshold=0.8``
(``Metric.key``: ``;`` between parameters, ``,`` inside a list value). So a piece
splits at its LAST ``=``, unless that ``=`` belongs to the key: when the text
before it ends in a parameter without its ``=`` (``rougeL:threshold`` is no key),
the whole piece is the metric and no value was given. A comma-separated list
(``--fail-if-worse a=0.02,b=0.01``) keeps a key's list values together: a comma
piece that does not start a registered metric continues the previous key when
that key has parameters, as ``-m`` reads them (``metrics.parse_metrics``).

One rule for every value: a finite number (``nan``, ``inf`` and ``1e400`` are
refused: a gate with one could never fail or never pass), within the option's
bounds. Every error is a ``UsageError`` naming the option and the piece.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any, Collection, Iterable

from localeval.errors import UsageError

__all__ = ["ValueRule", "split_metric_value", "split_metric_list", "parse_metric_value",
           "parse_metric_values", "check_metric_value"]


@dataclass(frozen=True)
class ValueRule:
    """What one option accepts.

    ``bare`` says what a piece without a value is: ``"error"`` (a value is
    required), ``"metric"`` (the metric with ``default`` as its value) or
    ``"value"`` (a value for every metric: the metric is None).
    """

    option: str
    what: str = "value"
    form: str = "METRIC=VALUE"
    example: str = "faithfulness=0.85"
    minimum: float | None = None
    bare: str = "error"
    default: float = 0.0

    def refuse(self, piece: Any, problem: str) -> UsageError:
        return UsageError(f"bad {self.option} {piece!r}: {problem} (expected {self.form}, "
                          f"e.g. {self.example})")


def _param_text_complete(name: str) -> bool:
    """False when ``name`` ends inside a parameter: ``rougeL:threshold`` lacks its ``=``."""
    if ":" not in name:
        return True
    params = name.split(":", 1)[1]
    return all("=" in seg for seg in params.split(";") if seg.strip())


def split_metric_value(piece: str) -> tuple[str, str | None]:
    """``"rougeL:threshold=0.5=0.02"`` -> ``("rougeL:threshold=0.5", "0.02")``;
    ``"rougeL:threshold=0.5"`` -> ``("rougeL:threshold=0.5", None)`` (no value given)."""
    text = piece.strip()
    name, eq, raw = text.rpartition("=")
    if not eq or not _param_text_complete(name):
        return text, None
    return name.strip(), raw.strip()


def _starts_metric(token: str, names: Collection[str]) -> bool:
    from localeval.metrics.specs import builtin_names

    head = token.split("=", 1)[0].split(":", 1)[0].split("@", 1)[0].strip()
    return head in names or head in builtin_names().values()


def split_metric_list(text: str, names: Collection[str] = ()) -> list[str]:
    """A comma-separated list of metric pieces, a key's list values kept together:
    ``"a:weights=0.5,0.5=0.02,bleu=0.01"`` -> ``["a:weights=0.5,0.5=0.02", "bleu=0.01"]``.

    A comma piece continues the previous one when that one has parameters
    (``:``) and the piece does not start a registered metric or one of ``names``.
    """
    out: list[str] = []
    for tok in (t.strip() for t in text.split(",")):
        if not tok:
            continue
        if out and ":" in out[-1] and not _starts_metric(tok, names):
            out[-1] = f"{out[-1]},{tok}"
        else:
            out.append(tok)
    return out


def check_metric_value(value: Any, rule: ValueRule, piece: Any = None) -> float:
    """A value given as a Python object or text, checked against ``rule``; returns the float."""
    shown = piece if piece is not None else value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise rule.refuse(shown, f"the {rule.what} {value.strip()!r} is not a number") \
                from None
    elif isinstance(value, Real) and not isinstance(value, bool):
        number = float(value)
    else:
        raise rule.refuse(shown, f"the {rule.what} is {type(value).__name__} {value!r}, "
                                 "not a number")
    if not math.isfinite(number):
        raise rule.refuse(shown, f"the {rule.what} {value!r} is not a finite number: a gate "
                                 "with it could never fail")
    if rule.minimum is not None and number < rule.minimum:
        raise rule.refuse(shown, f"the {rule.what} must be at least {rule.minimum:g}")
    return number


def parse_metric_value(piece: str, rule: ValueRule) -> tuple[str | None, float]:
    """One ``METRIC=VALUE`` piece -> (metric or None for a bare value, value)."""
    name, raw = split_metric_value(piece)
    if raw is None:
        if rule.bare == "metric" and name:
            return name, rule.default
        if rule.bare == "value":
            return None, check_metric_value(name, rule, piece)
        raise rule.refuse(piece, f"no {rule.what} after the metric")
    if not name:
        raise rule.refuse(piece, "no metric before '='")
    return name, check_metric_value(raw, rule, piece)


def parse_metric_values(items: Iterable[str] | None, rule: ValueRule, *, commas: bool = False,
                        names: Collection[str] = ()) -> list[tuple[str | None, float]]:
    """Every piece of a repeatable option, in order (``commas``: each item is a list)."""
    out = []
    for item in items or ():
        for piece in split_metric_list(item, names) if commas else [item]:
            out.append(parse_metric_value(piece, rule))
    return out
