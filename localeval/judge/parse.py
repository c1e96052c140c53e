"""Reading a judge's reply: strict UTF-8, strict JSON, the step's schema.

Every backend (in-process llama.cpp, HTTP) ends the same way: the bytes or
text the model produced become a validated pydantic object, or the sample
gets a ``JudgeCallError``. Kept in one place so that the backends cannot
drift apart in what they accept or in the errors a run records.

The errors made here are ``decided``: they are a deterministic outcome of
the request, so a resumed run should not pay for them again. Each carries the
failed call's ``usage`` when the backend passes it, so that accounting counts
calls whose output was unusable.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ValidationError

from localeval.errors import JudgeCallError
from localeval.types import Usage

__all__ = ["parse_reply", "is_json", "truncation_error", "invalid_output"]


def invalid_output(msg: str, usage: Usage | None = None) -> JudgeCallError:
    """The per-sample error for output that cannot be used (decided).

    ``usage`` is what the failed call cost; it travels on the error so that
    the run's accounting counts the call and its tokens.
    """
    return JudgeCallError(msg, usage=usage, decided=True)


def truncation_error(n_tokens: int, extra: str = "", usage: Usage | None = None) -> JudgeCallError:
    """The per-sample error for output cut at the token budget (decided, with ``usage``)."""
    return invalid_output(f"judge output truncated at {n_tokens} tokens{extra}", usage)


def is_json(reply: str | bytes) -> bool:
    """Whether ``reply`` is one complete JSON value (bytes must be valid UTF-8).

    Used to tell output that merely hit the token budget after closing its
    JSON from output that was cut off.
    """
    try:
        json.loads(reply.decode("utf-8") if isinstance(reply, bytes) else reply)
        return True
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are both ValueErrors
        return False


def parse_reply(reply: str | bytes, schema: type[BaseModel],
                usage: Usage | None = None) -> BaseModel:
    """Strict decode, strict JSON, strict schema: any failure is the sample's error.

    ``usage`` is the call's cost so far, put on the error when the reply fails.
    """
    if isinstance(reply, bytes):
        try:
            text = reply.decode("utf-8")
        except UnicodeDecodeError as e:
            raise invalid_output(f"judge output is not valid UTF-8 ({e.reason} at byte "
                                 f"{e.start})", usage) from None
    else:
        text = reply
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise invalid_output(f"judge output is not valid JSON ({e.msg} at char {e.pos}): "
                             f"{text[:200]!r}", usage) from None
    try:
        return schema.model_validate(obj)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first.get("loc", ()))
        raise invalid_output(f"judge output does not match {schema.__name__}: {loc}: "
                             f"{first.get('msg')}", usage) from None
