"""CPU compatibility: how many cores to use and how to build ``llama_cpp.Llama`` safely.

Kept apart from the judge because these are workarounds for the machine and
the llama.cpp build, not judging logic; each says which problem it avoids.
"""

from __future__ import annotations

import os
import threading
from typing import Any

__all__ = ["available_cores", "default_parallel", "has_amx", "new_llama"]


def available_cores() -> int:
    """Cores this process may run on (its affinity mask, not the machine's count).

    In a container or under ``taskset`` the machine's count overstates what
    llama.cpp can use, and oversubscribed threads slow generation sharply.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def has_amx() -> bool:
    """Whether llama.cpp reports AMX (INT8), which decides ``new_llama``'s workaround."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    return "AMX_INT8 = 1" in info


#: Held while the default model params are patched, so concurrent loads see the real ones.
_load_lock = threading.Lock()


def new_llama(extra_buffers: bool, context: dict[str, Any] | None = None, **kwargs: Any):
    """``llama_cpp.Llama(**kwargs)``, optionally without CPU extra buffer types.

    Workaround, not a preference: on CPUs with AMX, llama.cpp (as vendored by
    llama-cpp-python 0.3.36) puts quantised weights in its AMX buffer type
    and ``ggml_backend_amx_mul_mat`` segfaults on the first decode (seen on
    this project's build machines with Q8_0). ``llama_model_params`` has a
    ``use_extra_bufts`` switch that ``Llama`` does not expose, so the default
    params are adjusted for the duration of this one constructor call.
    ``context`` sets ``llama_context_params`` fields ``Llama`` does not expose
    either (``n_seq_max``, ``kv_unified`` for the batched judge), the same way.
    """
    import llama_cpp
    import llama_cpp.llama_cpp as lc

    if extra_buffers and not context:
        return llama_cpp.Llama(**kwargs)
    with _load_lock:
        original = lc.llama_model_default_params
        original_ctx = lc.llama_context_default_params

        def without_extra_buffers():
            params = original()
            params.use_extra_bufts = bool(extra_buffers)
            return params

        def with_context():
            params = original_ctx()
            for k, v in (context or {}).items():
                setattr(params, k, v)
            return params

        lc.llama_model_default_params = without_extra_buffers
        lc.llama_context_default_params = with_context
        try:
            return llama_cpp.Llama(**kwargs)
        finally:
            lc.llama_model_default_params = original
            lc.llama_context_default_params = original_ctx


def default_parallel(n_gpu_layers: int = -1) -> int:
    """Sequences ``localeval run`` decodes together when ``--parallel`` is not given.

    On a GPU, decoding 8 sequences costs little more than one (the weights
    are read once per step), so 8. On a CPU a decode of two or more tokens
    takes llama.cpp's matrix-matrix path, which on 2 cores costs more than
    decoding them one by one below about 8 rows; with the full suite, batching
    gained 1.1x (SmolLM2) to 1.2-1.4x (a 0.5B shape) at 8-16 sequences, and
    2-4 sequences were slower than one (docs/performance.md). Every sequence
    also adds a KV stream of ``n_ctx`` tokens (8 x 8192 tokens: 0.8 GB for a
    0.5B model, several GB for 7B). So small machines keep one sequence unless
    asked, and machines with 8+ cores get 8.
    """
    import llama_cpp

    if n_gpu_layers != 0 and llama_cpp.llama_supports_gpu_offload():
        return 8
    return 8 if available_cores() >= 8 else 1
