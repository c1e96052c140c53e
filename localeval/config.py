"""Process-wide defaults for the judge and embedder.

RAGAS scripts never name a model at the call site (they rely on an API key
in the environment), so the compatibility layer needs somewhere else to find
one: ``localeval.configure(judge=..., embedder=...)``, or the environment
variables ``LOCALEVAL_JUDGE`` / ``LOCALEVAL_EMBEDDER``. Explicit arguments
to ``evaluate`` always win.

``judge_check`` (``configure(judge_check=False)`` or ``LOCALEVAL_JUDGE_CHECK=0``)
switches off the judge self-test that runs before a run's first judge call,
for a process that runs many small evaluations with a judge already checked
(a test suite, a notebook loop).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

__all__ = ["configure", "get_config", "Config"]


@dataclass
class Config:
    judge: Any = None
    embedder: Any = None
    judge_options: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    #: Run the judge self-test before a run's first judge call (None: not set).
    judge_check: bool | None = None


_CONFIG = Config()


def configure(*, judge: Any = None, embedder: Any = None, judge_check: bool | None = None,
              **options: Any) -> Config:
    """Set the default judge (path, URL, name or Judge) and embedder for this process.

    ``judge_check=False`` skips the judge self-test before runs. Other keyword
    arguments: judge options (n_ctx, n_gpu_layers, n_threads, chat_format,
    judge_model) and run options passed to ``evaluate`` (lang, seed, verdicts,
    cache, device).
    """
    judge_keys = {"n_ctx", "n_gpu_layers", "n_threads", "chat_format", "judge_model",
                  "logit_bias", "max_tokens"}
    if judge is not None:
        _CONFIG.judge = judge
    if embedder is not None:
        _CONFIG.embedder = embedder
    if judge_check is not None:
        _CONFIG.judge_check = bool(judge_check)
    for k, v in options.items():
        (_CONFIG.judge_options if k in judge_keys else _CONFIG.extra)[k] = v
    return _CONFIG


def get_config() -> Config:
    """The configured defaults, with the environment filling what was not set."""
    return Config(
        judge=_CONFIG.judge if _CONFIG.judge is not None else os.environ.get("LOCALEVAL_JUDGE"),
        embedder=(_CONFIG.embedder if _CONFIG.embedder is not None
                  else os.environ.get("LOCALEVAL_EMBEDDER")),
        judge_options=dict(_CONFIG.judge_options),
        extra=dict(_CONFIG.extra),
        judge_check=(_CONFIG.judge_check if _CONFIG.judge_check is not None
                     else _env_flag("LOCALEVAL_JUDGE_CHECK", True)),
    )


def _env_flag(name: str, default: bool) -> bool:
    """A yes/no environment variable: 0, false, no and off (any case) mean no."""
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    return value not in ("0", "false", "no", "off")


def reset() -> None:
    """Forget everything ``configure`` set (for tests)."""
    global _CONFIG
    _CONFIG = Config()
