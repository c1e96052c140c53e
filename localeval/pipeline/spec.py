"""The user's pipeline function, from ``module:function`` or ``path/to/file.py:function``.

``module:function`` is imported as Python imports any module: from the current
directory (put first on ``sys.path`` when it is not there: the ``localeval``
command's own ``sys.path`` starts at its script's folder) or from ``PYTHONPATH``.
A file path imports that file, with its folder on ``sys.path`` so that it can
import its neighbours. ``function`` may be a dotted path (``rag:PIPELINE.answer``).
Every way a spec can be wrong is one ``UsageError`` (exit 2) saying which part.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from localeval.errors import UsageError

__all__ = ["Pipeline", "load_pipeline"]

_EXAMPLE = "expected MODULE:FUNCTION or path/to/file.py:FUNCTION, e.g. my_rag:answer"


@dataclass(frozen=True)
class Pipeline:
    """A callable the answers come from, and how to call it.

    ``label``: how messages name it (the spec, or the callable's qualified name);
    ``takes_row``: it accepts ``row=`` (a parameter of that name or ``**kwargs``),
    so each call also passes the row as a dict.
    """

    function: Callable[..., Any]
    label: str
    takes_row: bool

    def __call__(self, question: str, row: dict[str, Any]) -> Any:
        if self.takes_row:
            return self.function(question, row=row)
        return self.function(question)


def load_pipeline(spec: str | Callable[..., Any] | Pipeline) -> Pipeline:
    """The ``Pipeline`` a spec names, or a callable given directly (the Python API)."""
    if isinstance(spec, Pipeline):
        return spec
    if callable(spec):
        label = getattr(spec, "__qualname__", None) or type(spec).__name__
        return _checked(spec, f"{getattr(spec, '__module__', '?')}:{label}")
    if not isinstance(spec, str):
        raise UsageError(f"pipeline: expected a function or a 'module:function' string, got "
                         f"{type(spec).__name__}")
    where, sep, name = spec.rpartition(":")
    if not sep or not where.strip() or not name.strip():
        raise UsageError(f"pipeline {spec!r}: {_EXAMPLE}")
    where, name = where.strip(), name.strip()
    module = _import_file(spec, where) if _is_file(where) else _import_module(spec, where)
    target: Any = module
    for i, part in enumerate(name.split(".")):
        if not hasattr(target, part):
            owner = where if i == 0 else ".".join(name.split(".")[:i])
            raise UsageError(f"pipeline {spec!r}: {owner} has no attribute {part!r}"
                             + (_functions_of(module) if i == 0 else ""))
        target = getattr(target, part)
    if not callable(target):
        raise UsageError(f"pipeline {spec!r}: {name} is a {type(target).__name__}, not a "
                         "function (it is called with each question)")
    return _checked(target, spec)


def _checked(function: Callable[..., Any], label: str) -> Pipeline:
    """The Pipeline for ``function``, refused at once if it cannot be called with a question."""
    try:
        sig = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin without a signature: call it as f(question)
        return Pipeline(function, label, takes_row=False)
    params = sig.parameters.values()
    takes_row = any(p.kind is p.VAR_KEYWORD for p in params) or (
        "row" in sig.parameters
        and sig.parameters["row"].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                           inspect.Parameter.KEYWORD_ONLY))
    try:
        if takes_row:
            sig.bind("question", row={})
        else:
            sig.bind("question")
    except TypeError as e:
        raise UsageError(f"pipeline {label!r}: cannot be called as {_call_shape(takes_row)} "
                         f"({e}); its signature is {sig}") from None
    return Pipeline(function, label, takes_row)


def _call_shape(takes_row: bool) -> str:
    return "function(question, row=row)" if takes_row else "function(question)"


def _is_file(where: str) -> bool:
    return where.endswith(".py") or "/" in where or os.sep in where


def _import_module(spec: str, name: str) -> ModuleType:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name and (name == e.name or name.startswith(e.name + ".")):
            raise UsageError(f"pipeline {spec!r}: no module {name!r} in the current directory "
                             f"({cwd}) or on PYTHONPATH") from None
        raise UsageError(f"pipeline {spec!r}: importing {name} failed: {e}") from None
    except Exception as e:  # the user's module raised while it was imported
        raise UsageError(f"pipeline {spec!r}: importing {name} raised "
                         f"{type(e).__name__}: {e}") from None


def _import_file(spec: str, where: str) -> ModuleType:
    path = Path(where).expanduser()
    if not path.is_file():
        raise UsageError(f"pipeline {spec!r}: no file {where}")
    path = path.resolve()
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = path.stem if path.stem.isidentifier() else "localeval_pipeline_module"
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    if loaded is not None:  # another module of that name: load this file under its own name
        name = f"localeval_pipeline_{abs(hash(str(path)))}"
    found = importlib.util.spec_from_file_location(name, path)
    if found is None or found.loader is None:
        raise UsageError(f"pipeline {spec!r}: {where} cannot be imported as a Python file")
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module  # before running it: dataclasses and pickling look it up
    try:
        found.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise UsageError(f"pipeline {spec!r}: importing {where} raised "
                         f"{type(e).__name__}: {e}") from None
    return module


def _functions_of(module: ModuleType) -> str:
    names = sorted(n for n, v in vars(module).items()
                   if not n.startswith("_") and inspect.isfunction(v)
                   and getattr(v, "__module__", None) == module.__name__)
    return f"; its functions: {', '.join(names)}" if names else ""
