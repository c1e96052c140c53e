"""Strict checks of a user-defined metric's parameters: one pydantic model per kind.

Why strict: a metrics file is TOML, whose values can be of any type, and the
Python way of reading them silently misreads: ``tuple("19")`` is ``("1", "9")``,
a text step list becomes one step per letter, ``str({...})`` turns a table into
its repr, ``int(inf)`` crashes. Each kind declares its parameters as a pydantic
model with strict scalars (no text as a number, no float or boolean as an
integer) whose lists are read as tuples; the same model checks the arguments of
Python callers, so both get one ``InvalidArgument`` naming the key, what it
expects (the field's description) and what it got.
"""

from __future__ import annotations

from typing import Annotated, Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from localeval.errors import InvalidArgument

__all__ = ["Parameters", "Level", "Texts", "MAX_LEVEL", "check_parameters", "refuse", "shown"]

#: Largest rubric level or scale end, in magnitude. A judge cannot use more, and
#: levels are scaled to 0-1 in floating point, which is exact only well below 2**53.
MAX_LEVEL = 1_000_000

Level = Annotated[StrictInt, Field(ge=-MAX_LEVEL, le=MAX_LEVEL)]
Texts = tuple[StrictStr, ...]


class Parameters(BaseModel):
    """Base of the per-kind parameter models (only the declared fields are checked)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


def shown(value: Any) -> str:
    """A value as the user wrote it, in words that fit TOML and Python alike."""
    if isinstance(value, str):
        return f"text {value[:60]!r}" + ("..." if len(value) > 60 else "")
    if isinstance(value, bool):
        return f"the boolean {value}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value!r}"
    if value is None:
        return "None"
    if isinstance(value, dict):
        return "a table" if value else "an empty table"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} item(s)"
    return f"a {type(value).__name__}"


def refuse(metric: Any, key: str, what: str) -> NoReturn:
    """Raise InvalidArgument ``"{Kind} {name!r}: {key}: {what}"`` (detail: ``"{key}: {what}"``)."""
    raise InvalidArgument(f"{type(metric).__name__} {metric.name!r}: {key}: {what}",
                          detail=f"{key}: {what}")


def check_parameters(metric: Any, model: type[Parameters]) -> None:
    """Check ``metric``'s fields named in ``model``; store the checked values (lists as tuples)."""
    values = {k: getattr(metric, k) for k in model.model_fields}
    try:
        checked = model.model_validate(values)
    except ValidationError as e:
        err = e.errors()[0]
        key = str(err["loc"][0])
        value = values[key]
        got = shown(value)
        index = next((i for i in err["loc"][1:] if isinstance(i, int)), None)
        if index is not None and isinstance(value, (list, tuple)) and index < len(value):
            got += f" whose item {index + 1} is {shown(value[index])}"
        refuse(metric, key, f"expected {model.model_fields[key].description}, got {got}")
    for k in model.model_fields:
        object.__setattr__(metric, k, getattr(checked, k))
