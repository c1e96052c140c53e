"""Several calls made paired with several expected calls: a maximum matching, and what it
left over in words.

Each expected call is compared only with the calls an index says could match it, so a
conversation of thousands of calls costs about one comparison per call rather than one
per pair of calls of the same name. The index keys a call by one scalar argument's
value as the comparison sees it (a string normalised, a number as a float, a boolean, a
list of those item by item, or one scalar inside an object argument), so two values
that compare equal always share a key: an answer's candidates are the calls keyed, for
each of its required arguments, by one of that argument's accepted values. An argument whose
comparison is not a plain equality of those keys (a declared date, a list in any order)
is not used as a key; an answer with no usable argument is compared with every call of
its name.
"""

from __future__ import annotations

from typing import Any, Sequence

from localeval.toolcheck.calls import Failure, match_call
from localeval.toolcheck.shapes import OPTIONAL, Call, Choices, Function, PossibleAnswer
from localeval.toolcheck.values import normalise

__all__ = ["matching", "explain_unmatched"]

_NO_KEY = object()


def _scalar_key(v: Any) -> Any:
    """The key two values that compare equal share (``_NO_KEY``: not a scalar)."""
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", float(v))
    if isinstance(v, str):
        return ("s", normalise(v))
    if v is None:
        return ("z",)
    return _NO_KEY


def _value_key(v: Any) -> Any:
    """A scalar's key, or a list of scalars' (item by item: equal lists share it)."""
    if isinstance(v, (list, tuple)):
        keys = tuple(_scalar_key(x) for x in v)
        return _NO_KEY if any(k is _NO_KEY for k in keys) else ("l", keys)
    return _scalar_key(v)


def _call_keys(call: Call) -> list[tuple[str, Any]]:
    """(path, key) of each argument, and of each scalar inside an object argument."""
    out = []
    for arg, v in call.arguments.items():
        k = _value_key(v)
        if k is not _NO_KEY:
            out.append((arg, k))
        elif isinstance(v, dict):
            out.extend((f"{arg}\x00{ik}", kk) for ik, iv in v.items()
                       if (kk := _scalar_key(iv)) is not _NO_KEY)
    return out


def _plain_schema(schema: Any) -> bool:
    """Whether a value under ``schema`` compares by plain equality of keys (no declared
    date, no list in any order)."""
    return not (isinstance(schema, dict) and (schema.get("format") in ("date", "date-time")
                                              or schema.get("x-unordered")))


def _answer_keys(arg: str, opts: Sequence[Any], schema: Any) -> list[tuple[str, list[Any]]]:
    """The (path, keys) an accepted call must have one of, for one required argument: its
    values' keys, or for objects the keys of one inner key every accepted object requires."""
    props = schema.get("properties") or {} if isinstance(schema, dict) else {}
    values = [o for o in opts if o is not OPTIONAL]
    if not values or not _plain_schema(schema) or (
            isinstance(schema, dict) and not _plain_schema(schema.get("items"))):
        return []
    keys = [_value_key(o) for o in values]
    if all(k is not _NO_KEY for k in keys):
        return [(arg, keys)]
    out = []
    if all(isinstance(o, Choices) for o in values):
        inner = set.intersection(*(set(o.keys) - set(o.optional) for o in values))
        for ik in sorted(inner):
            ks = [_scalar_key(x) for o in values for x in o.keys[ik] if x is not OPTIONAL]
            if ks and all(k is not _NO_KEY for k in ks) and _plain_schema(props.get(ik)):
                out.append((f"{arg}\x00{ik}", ks))
    elif all(isinstance(o, dict) for o in values):
        inner = set.intersection(*(set(o) for o in values))
        for ik in sorted(inner):
            ks = [_scalar_key(o[ik]) for o in values]
            if all(k is not _NO_KEY for k in ks) and _plain_schema(props.get(ik)):
                out.append((f"{arg}\x00{ik}", ks))
    return out


class _Index:
    """Calls by (name, argument, key), and by name."""

    def __init__(self, calls: Sequence[Call], which: Sequence[int]) -> None:
        self.by_key: dict[tuple[str, str, Any], list[int]] = {}
        self.by_name: dict[str, list[int]] = {}
        for i in which:
            c = calls[i]
            self.by_name.setdefault(c.name, []).append(i)
            for path, k in _call_keys(c):
                self.by_key.setdefault((c.name, path, k), []).append(i)

    def candidates(self, a: PossibleAnswer, fmap: dict[str, Function] | None) -> list[int]:
        """The calls that could match ``a`` (a superset of those that do)."""
        fn = fmap.get(a.name) if fmap is not None else None
        best: set[int] | None = None
        for arg, opts in a.options.items():
            if arg in a.optional:
                continue
            schema = fn.properties.get(arg) if fn is not None else None
            for path, keys in _answer_keys(arg, opts, schema):
                found = {i for k in keys for i in self.by_key.get((a.name, path, k), ())}
                best = found if best is None else best & found  # every one must hold
        return sorted(best) if best is not None else self.by_name.get(a.name, [])

    def hits(self, a: PossibleAnswer, i: int, call: Call) -> int:
        """How many of ``a``'s arguments ``call`` gives an accepted key of (to pick the
        closest call to explain a failure)."""
        n = 0
        for arg, opts in a.options.items():
            if arg in call.arguments:
                k = _scalar_key(call.arguments[arg])
                n += k is not _NO_KEY and any(_value_key(o) == k for o in opts)
        return n


def matching(calls: Sequence[Call], answers: Sequence[PossibleAnswer],
             fmap: dict[str, Function] | None) -> dict[int, int]:
    """A maximum matching, answer index -> call index, of calls that match answers: scipy's
    Hopcroft-Karp over the pairs that match (each answer against its index candidates)."""
    index = _Index(calls, range(len(calls)))
    edges = [(j, i) for j, a in enumerate(answers) for i in index.candidates(a, fmap)
             if not match_call(calls[i], a, fmap)]
    if not edges:
        return {}
    # An answer with one matching call that no other answer can take needs no search;
    # the usual case (every call right) is settled here without scipy.
    by_answer: dict[int, list[int]] = {}
    by_call: dict[int, list[int]] = {}
    for j, i in edges:
        by_answer.setdefault(j, []).append(i)
        by_call.setdefault(i, []).append(j)
    if all(len(v) == 1 for v in by_answer.values()) and all(
            len(v) == 1 for v in by_call.values()):
        return {j: v[0] for j, v in by_answer.items()}
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    rows, cols = zip(*edges)
    graph = csr_matrix((np.ones(len(edges)), (rows, cols)), shape=(len(answers), len(calls)))
    found = maximum_bipartite_matching(graph, perm_type="column")
    return {j: int(i) for j, i in enumerate(found) if i >= 0}


def explain_unmatched(calls: Sequence[Call], answers: Sequence[PossibleAnswer],
                      pairs: dict[int, int], fmap: dict[str, Function] | None,
                      index: Sequence[int] | None = None, extra_ok: bool = False,
                      missing_ok: bool = False) -> list[Failure]:
    """The failures of what a matching left over: each expected call not matched, with the
    argument failures of the closest unmatched call of its name (most accepted argument
    values), else ``missing_call``; then each call made and not matched (``extra_call``,
    or ``not_a_function``), unless ``extra_ok``. ``index`` maps a call's position here to
    the one reported."""
    at = list(index) if index is not None else list(range(len(calls)))
    used = set(pairs.values())
    free = [i for i in range(len(calls)) if i not in used]
    look = _Index(calls, free)
    taken: set[int] = set()
    out: list[Failure] = []
    for j, a in enumerate(answers):
        if j in pairs or missing_ok:
            continue
        same = [i for i in look.by_name.get(a.name, []) if i not in taken]
        if not same:
            out.append(Failure(None, a.name, None, f"expected call {a.name!r} not made",
                               "missing_call"))
            continue
        best = max(same, key=lambda i: (look.hits(a, i, calls[i]), -i))
        taken.add(best)
        out.extend(match_call(calls[best], a, fmap, at[best]))
    if not extra_ok:
        for i in free:
            if i in taken:
                continue
            c = calls[i]
            kind = "not_a_function" if fmap is not None and c.name not in fmap else "extra_call"
            out.append(Failure(at[i], c.name, None, f"call {c.name!r} was not expected", kind))
    return out
