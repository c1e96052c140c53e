"""What a pipeline function returns, read into an answer, contexts and retrieved ids.

The contract (docs/test-sets.md, "Answers from your pipeline"):

- a string: the answer;
- a dict with ``answer`` and, optionally, ``contexts`` (the retrieved passages,
  a list of strings, best first) and ``retrieved_ids`` (the retrieved documents'
  ids, ranked, strings or integers);
- any object with those attributes (a dataclass, a pydantic model, a named tuple).

A value outside the contract raises ``TypeError`` with a message saying what was
expected; the caller records it as the row's ``pipeline_error``, as it does for
an exception the function raised itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["Output", "read_output", "OUTPUT_FIELDS"]

#: The fields a pipeline fills, in the order they are read.
OUTPUT_FIELDS = ("answer", "contexts", "retrieved_ids")
_SHAPE = ("expected a string (the answer), or a dict or object with 'answer' and optionally "
          "'contexts' (list of strings) and 'retrieved_ids' (ranked list of ids)")


@dataclass(frozen=True)
class Output:
    """One call's answer, and the contexts and ids when the pipeline gave them."""

    answer: str
    contexts: list[str] | None = None
    retrieved_ids: list[str] | None = None


def read_output(value: Any) -> Output:
    """``value`` (what the function returned) as an ``Output``; ``TypeError`` outside the contract."""
    if isinstance(value, str):
        return Output(value)
    if isinstance(value, Mapping):
        if "answer" not in value:
            keys = ", ".join(repr(k) for k in list(value)[:8]) or "none"
            raise TypeError(f"the pipeline returned a dict without 'answer' (its keys: {keys}); "
                            f"{_SHAPE}")
        fields = {f: value.get(f) for f in OUTPUT_FIELDS}
    elif value is None or isinstance(value, (bytes, int, float, list, tuple)) \
            or not hasattr(value, "answer"):
        raise TypeError(f"the pipeline returned {_kind(value)}; {_SHAPE}")
    else:
        fields = {f: getattr(value, f, None) for f in OUTPUT_FIELDS}
    answer = fields["answer"]
    if not isinstance(answer, str):
        raise TypeError(f"the pipeline's answer is {_kind(answer)}, expected a string")
    return Output(answer, _contexts(fields["contexts"]), _ids(fields["retrieved_ids"]))


def _contexts(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise TypeError(f"the pipeline's contexts are {_kind(value)}, expected a list of strings")
    for i, c in enumerate(value):
        if not isinstance(c, str):
            hint = " (pass its text, e.g. doc.page_content)" if hasattr(c, "page_content") else ""
            raise TypeError(f"the pipeline's contexts[{i}] is {_kind(c)}, expected a string{hint}")
    return list(value)


def _ids(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise TypeError(f"the pipeline's retrieved_ids are {_kind(value)}, expected a ranked "
                        "list of ids")
    out = []
    for i, d in enumerate(value):
        if isinstance(d, bool) or not isinstance(d, (str, int)):
            raise TypeError(f"the pipeline's retrieved_ids[{i}] is {_kind(d)}, expected a string "
                            "or an integer id")
        out.append(str(d))
    return out


def _kind(value: Any) -> str:
    if value is None:
        return "None"
    name = type(value).__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"
