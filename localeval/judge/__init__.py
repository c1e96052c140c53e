"""Judges: the protocol, the in-process llama.cpp judge and the HTTP judge.

The implementations are imported lazily so that importing the protocol (as
every metric does) loads neither numpy-heavy judge code nor llama_cpp.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

# llama.cpp's CPU backend runs on OpenMP (libgomp), whose idle threads spin by
# default. When the machine is busy (an embedder, a second job, CI), spinning
# threads steal the cores the working thread needs: measured here, decoding with
# 2 threads fell from ~1,000 to 16 tokens/s. Passive waiting costs microseconds
# per graph. libgomp reads this when it is loaded, i.e. at `import llama_cpp`,
# which localeval does only when a judge is built; a user's setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from localeval.judge.base import Judge, JudgeReply, JudgeRequest, Message, Usage

__all__ = [
    "Judge", "JudgeReply", "JudgeRequest", "Message", "Usage",
    "LlamaJudge", "HttpJudge", "CachedJudge", "load_judge",
    "check_gguf", "read_gguf_metadata", "schema_to_gbnf", "max_tokens_for",
]

_WHERE = {
    "LlamaJudge": "localeval.judge.llama",
    "HttpJudge": "localeval.judge.http",
    "CachedJudge": "localeval.judge.cached",
    "load_judge": "localeval.judge.load",
    "check_gguf": "localeval.judge.gguf",
    "read_gguf_metadata": "localeval.judge.gguf",
    "schema_to_gbnf": "localeval.judge.grammar",
    "max_tokens_for": "localeval.judge.grammar",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(name)
