"""The batched engine's units of work: a call (``Job``) and a KV sequence (``Slot``).

Kept apart from the decode loop (``batch``) so that the loop reads as the
policy it is; ``common_prefix`` is the one comparison of token lists that
admission and prefix copying use.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from localeval.judge.llama.sampler import Decoding

__all__ = ["FORK_MIN", "Job", "Slot", "common_prefix", "should_wait"]

#: Copy another slot's cache only when it saves at least this many prompt tokens.
FORK_MIN = 64


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the common prefix of two token lists."""
    m = min(len(a), len(b))
    if m == 0:
        return 0
    diff = np.flatnonzero(np.asarray(a[:m], dtype=np.int64) != np.asarray(b[:m], dtype=np.int64))
    return int(diff[0]) if diff.size else m


@dataclass
class Job:
    """One call: evaluate ``prompt`` in a slot, then generate (or only return logits)."""

    prompt: list[int]
    gbnf: str | None
    max_tokens: int
    temperature: float
    seed: int
    logits_only: bool
    future: Future = field(default_factory=Future)
    t0: float = field(default_factory=time.perf_counter)
    reused: int = 0
    todo: list[int] = field(default_factory=list)  # tokens still to evaluate
    seq: Decoding | None = None
    owner: int = field(default_factory=threading.get_ident)
    generating: bool = False  # the prompt is in the cache; ``todo`` is the next token


@dataclass
class Slot:
    """A KV sequence id and the tokens it holds (positions 0..len-1)."""

    seq_id: int
    tokens: list[int] = field(default_factory=list)
    job: Job | None = None
    last_used: int = 0
    owner: int | None = None  # the thread whose calls this slot serves


def should_wait(job: Job, slots: Sequence[Slot], admitted: list[Job]) -> bool:
    """Whether ``job`` should wait for a prompt now being evaluated in another slot.

    A sample's calls arrive together and share its long prefix (system
    text, the sample, often the step's instruction and example). Started
    at once, each would evaluate that prefix itself; waiting until the
    first one has it in its slot lets the others copy it instead
    (``FORK_MIN`` tokens or more saved). On a CPU prompt evaluation is
    compute-bound, so the wait costs nothing that evaluating it again would
    not cost more. Never waits on a prefix that is already cached.
    """
    limit = len(job.prompt) - 1
    cached = max((min(common_prefix(s.tokens, job.prompt), limit) for s in slots
                  if s.job is None or s.job not in admitted), default=0)
    for s in slots:
        other = s.job
        if other is None or other.generating:
            continue
        coming = min(common_prefix(other.prompt, job.prompt), limit)
        if coming >= cached + FORK_MIN:
            return True
    return False
