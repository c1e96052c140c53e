"""JSON read strictly (RFC 8259), the one JSON reader of data, tool calls and records.

``NaN``, ``Infinity``, numbers too large for a float, numbers with thousands of
digits and absurd nesting are refused with a ``JSONValueError`` whose message is
meant for the user, so that no non-finite value reaches a score or a results file
and no input raises a ``RecursionError``. In the lowest layer because data files
(``dataset``) and the tool-call readers below them (``toolcheck``) both read JSON
text and must read it by the same rule.
"""

from __future__ import annotations

import json
import math
from typing import Any

from localeval.errors import JSONValueError

__all__ = ["loads_strict"]


def _reject_constant(name: str) -> Any:
    raise JSONValueError(f"{name} is not a number JSON allows; write null for a missing value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JSONValueError(f"the number {text[:40]} is too large for a float")
    return value


#: One decoder for every call: ``json.loads`` with hooks would build a new one each time.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
#: For result sets written by other tools (and older localeval runs), where NaN means
#: "unscored": non-finite numbers pass, nesting and digit limits still hold.
_LENIENT = json.JSONDecoder()


def loads_strict(text: str, allow_non_finite: bool = False) -> Any:
    """``json.loads`` that refuses NaN, Infinity, overflowing numbers and absurd nesting.

    Every failure is a ``ValueError`` whose message is meant for the user
    (``JSONDecodeError`` keeps its position in ``lineno``/``colno``).
    ``allow_non_finite`` lets NaN and Infinity through as floats.
    """
    try:
        return (_LENIENT if allow_non_finite else _DECODER).decode(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise JSONValueError("nested too deeply (arrays or objects inside each other "
                             "hundreds of levels deep)") from None
    except JSONValueError:
        raise
    except ValueError as e:  # int() past sys.get_int_max_str_digits()
        if "digits" in str(e):
            raise JSONValueError("a number with thousands of digits; write it as a "
                                 "string") from None
        raise JSONValueError(str(e)) from None
