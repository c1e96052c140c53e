"""How many cores to use, and how many sequences to decode together by default.

Kept apart from the judge because these depend on the machine, not on judging.
(The llama.cpp build's own workarounds are in ``compat``.)
"""

from __future__ import annotations

import os

__all__ = ["available_cores", "default_parallel"]


def available_cores() -> int:
    """Cores this process may run on (its affinity mask, not the machine's count).

    In a container or under ``taskset`` the machine's count overstates what
    llama.cpp can use, and oversubscribed threads slow generation sharply.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


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
    from localeval.judge.llama.compat import gpu_offload_supported

    if n_gpu_layers != 0 and gpu_offload_supported():
        return 8
    return 8 if available_cores() >= 8 else 1
