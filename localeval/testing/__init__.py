"""Test helpers shipped with the package, for localeval's tests and yours.

- ``ScriptedJudge``: answers judge steps from a script, to pin metric arithmetic.
- ``HashEmbedder``: a deterministic embedder with no model, for unit tests.
- ``assert_scores``: metric thresholds as a pytest assertion (a CI gate).
- ``build_tiny_gguf``: writes a real random-weight GGUF with a real BPE
  tokenizer, so tests run the real llama.cpp path without downloading anything.

Imports are lazy so that importing ``localeval.testing`` loads no model library.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["ScriptedJudge", "HashEmbedder", "build_tiny_gguf", "TinyModelSpec", "assert_scores"]

_WHERE = {
    "ScriptedJudge": "localeval.testing.scripted",
    "HashEmbedder": "localeval.testing.fake_embed",
    "build_tiny_gguf": "localeval.testing.tiny_gguf",
    "TinyModelSpec": "localeval.testing.tiny_gguf",
    "assert_scores": "localeval.testing.gates",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(name)
