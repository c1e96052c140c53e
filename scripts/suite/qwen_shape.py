"""The Qwen2-0.5B-shaped random-weight judge the cost benches share.

``bench_suite.py``, ``bench_lookup.py`` and ``bench_reasons.py`` measure judge
cost on a model of a real judge's shape (Qwen2-0.5B: 24 layers, 896 wide,
Q8_0) without downloading one: ``localeval.testing.build_tiny_gguf`` writes it
with random weights, once, into a cache folder. Random weights write junk, so
it measures cost (tokens, decodes, seconds), never judgement. Its quote bias
(``localeval.testing.quote_bias``) closes JSON strings early; without it every
string runs to its bound.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

__all__ = ["DEFAULT_MODEL_NAME", "qwen_shape_path", "qwen_shape_bias"]

DEFAULT_MODEL_NAME = "qwen2-05b-shape-q8_0.gguf"


def qwen_shape_path(model: str | None = None, cache_dir: str | None = None) -> Path:
    """``model`` when given, else the Qwen2-0.5B shape in ``cache_dir``, built on first use.

    The default folder is ``$TMPDIR/localeval-bench``; the build is
    deterministic, so every bench measures the same file.
    """
    if model:
        return Path(model)
    d = Path(cache_dir or Path(tempfile.gettempdir()) / "localeval-bench")
    path = d / DEFAULT_MODEL_NAME
    if not path.exists():
        from localeval.testing import TinyModelSpec, build_tiny_gguf

        t0 = time.perf_counter()
        build_tiny_gguf(path, TinyModelSpec.qwen2_05b())
        print(f"built {path}: {path.stat().st_size / 2**20:.0f} MiB in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
    return path


def qwen_shape_bias(path: Path, threads: int | None = None,
                    n_gpu_layers: int = 0) -> dict[int, float]:
    """The quote bias of the model at ``path`` (its vocabulary read by a probe judge)."""
    from localeval.judge import LlamaJudge
    from localeval.testing import quote_bias

    probe = LlamaJudge(path, n_threads=threads, n_gpu_layers=n_gpu_layers)
    try:
        return quote_bias(probe)
    finally:
        probe.close()
