"""One C++ runtime for a CUDA llama.cpp and torch in the same process.

Found on an H200 (docs/performance.md, "On a GPU"): llama-cpp-python built with
``-DGGML_CUDA=on`` ships a ``libggml-cuda.so`` that exports its own instances of
libstdc++ templates (the ``std::ostream`` inserters), and llama-cpp-python loads
its libraries into the global symbol scope. With torch in the same process,
whichever comes second binds to the other's copies: ``import torch`` after
``llama_cpp`` segfaults, and loading a model after ``import torch`` segfaults
in ``llama_model::print_info``. A run with an embedding metric, a checker or
``--device cuda`` has both. Loading libstdc++ itself into the global scope
first makes every later library bind to the one runtime: both orders then run
(checked there, in both orders). CPU builds never had the clash and are left
alone; the check reads the installed package's files without importing it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
from pathlib import Path

__all__ = ["cuda_build", "preload_cxx_runtime"]


def cuda_build() -> bool:
    """Whether the installed llama-cpp-python carries the CUDA backend (no import)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return False
    return any(any((Path(d) / "lib").glob("libggml-cuda*"))
               for d in spec.submodule_search_locations)


def preload_cxx_runtime() -> bool:
    """Load libstdc++ globally before a CUDA llama.cpp is loaded; True if it was."""
    if not cuda_build():
        return False
    name = ctypes.util.find_library("stdc++")
    if name is None:
        return False
    try:
        ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return False
    return True
