"""Lazy package faces: a package's public names, imported on first use.

Every subpackage's ``__init__`` is its face: ``__all__`` lists what other
packages may import, and each name is looked up in its module only when it
is first used (PEP 562 ``__getattr__``). This keeps ``localeval --help`` from
importing numpy, torch or llama_cpp, and it keeps faces free of import cycles:
a face imports nothing until asked. Written here once so that every face
behaves the same (the pattern Inspect AI uses for its provider registry).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def lazy_face(package: str, where: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for a face mapping public names to modules.

    ``where`` maps each public name to the module (relative to ``package``,
    e.g. ``".loading"``) that defines it.
    """

    def __getattr__(name: str) -> Any:
        try:
            module = where[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        return getattr(importlib.import_module(module, package), name)

    def __dir__() -> list[str]:
        return sorted(set(where) | set(vars(sys.modules[package])))

    return __getattr__, __dir__
