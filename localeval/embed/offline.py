"""Guards that keep model loading off the network and quiet.

sentence-transformers and transformers reach for the Hugging Face Hub by
default; ``hub_offline`` switches the Hub and transformers to offline mode
for the duration of a load and restores the caller's settings after, even
after a failure. ``quiet_transformers`` hides transformers' own progress
bar, since the runner draws its own.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["hub_offline", "quiet_transformers"]

_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """Hub and transformers offline while loading; the caller's settings restored after.

    huggingface_hub reads HF_HUB_OFFLINE once, at import, into a constant that
    transformers consults too: when it is already imported the constant is
    switched for the block, and when the block imports it, the constant is
    set back to what the restored environment says.
    """
    saved = {k: os.environ.get(k) for k in _OFFLINE_VARS}
    # Any: the module is switched by attribute, and mypy's view of it has no such constant
    before: Any = sys.modules.get("huggingface_hub.constants")
    saved_const = getattr(before, "HF_HUB_OFFLINE", None)
    for k in _OFFLINE_VARS:
        os.environ[k] = "1"
    if before is not None:
        before.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        after: Any = sys.modules.get("huggingface_hub.constants")
        if before is not None:
            before.HF_HUB_OFFLINE = saved_const
        elif after is not None:
            flag = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
            after.HF_HUB_OFFLINE = (flag or "").upper() in {"1", "ON", "YES", "TRUE"}


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    # transformers draws a "Loading weights" progress bar on stderr; the
    # runner has its own progress display.
    try:
        from transformers.utils import logging as tlog
    except ImportError:  # pragma: no cover
        yield
        return
    was_enabled = tlog.is_progress_bar_enabled()
    tlog.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            tlog.enable_progress_bar()
