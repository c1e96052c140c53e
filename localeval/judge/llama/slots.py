"""The batched engine's units of work: a call (``Job``), a KV sequence (``Slot``),
and the table of slots that admits calls (``SlotTable``).

Kept apart from the decode loop (``batch``) so that the loop reads as the
policy it is; ``common_prefix`` is the one comparison of token lists that
admission and prefix copying use. Only the decode thread uses a ``SlotTable``.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from localeval.judge.llama.compat import Memory
from localeval.judge.llama.decode_plan import EngineStats, reusable
from localeval.judge.llama.drafting import SequenceDraft
from localeval.judge.llama.sampler import Decoding

__all__ = ["FORK_MIN", "Job", "Slot", "SlotTable", "common_prefix", "should_wait"]

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
    draft: SequenceDraft | None = None  # its prompt-lookup drafter (generation only)
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
    limit = reusable(len(job.prompt), len(job.prompt))
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


class SlotTable:
    """The slots of one context's KV memory, and the admission of calls into them."""

    def __init__(self, mem: Memory, n_seq: int, stats: EngineStats) -> None:
        self.mem = mem
        self.stats = stats
        self.slots = [Slot(i) for i in range(n_seq)]
        self.clock = 0
        for s in self.slots:
            self.empty(s)

    def admit(self, queue: deque[Job]) -> list[Job]:
        """Take calls off ``queue`` into free slots, their KV prefix reused or copied.

        Calls that should wait for a prefix being evaluated go back to the
        front of the queue, in their order; the admitted ones are returned.
        """
        admitted: list[Job] = []
        later: list[Job] = []
        while queue:
            free = [s for s in self.slots if s.job is None]
            if not free:
                break
            job = queue.popleft()
            if should_wait(job, self.slots, admitted):
                self.stats.waits += 1
                later.append(job)
                continue
            self.clock += 1
            limit = reusable(len(job.prompt), len(job.prompt))  # the rest is evaluated
            # A thread keeps its slot: its calls then find the KV cache just as a
            # sequential judge serving only that thread would have left it.
            mine = [s for s in free if s.owner == job.owner] or [
                s for s in free if s.owner is None] or free
            slot = max(mine, key=lambda s: (min(common_prefix(s.tokens, job.prompt), limit),
                                            -s.last_used))
            slot.owner = job.owner
            keep = min(common_prefix(slot.tokens, job.prompt), limit)
            # A slot admitted in this round may still wait for its own copy: not a source.
            sources = [s for s in self.slots if s.job is None or s.job not in admitted]
            src = max(sources, key=lambda s: common_prefix(s.tokens, job.prompt))
            shared = min(common_prefix(src.tokens, job.prompt), limit)
            mem = self.mem
            if src is not slot and shared >= keep + FORK_MIN:
                # Separate KV streams: the whole stream is copied, then cut back.
                t0 = time.perf_counter()
                mem.seq_rm(slot.seq_id)
                mem.seq_cp(src.seq_id, slot.seq_id)
                self.stats.copies += 1
                self.stats.copy_seconds += time.perf_counter() - t0
                slot.tokens = list(src.tokens)
                keep = shared
            if not mem.seq_rm(slot.seq_id, keep):
                mem.seq_rm(slot.seq_id)  # cannot cut: start over
                keep = 0
            del slot.tokens[keep:]
            job.reused = keep
            job.todo = job.prompt[keep:]
            slot.job = job
            slot.last_used = self.clock
            admitted.append(job)
        queue.extendleft(reversed(later))  # still first in line, in their order
        return admitted

    def empty(self, slot: Slot) -> None:
        """Drop everything ``slot`` holds in the KV cache."""
        self.mem.seq_rm(slot.seq_id)
        slot.tokens = []

    def rollback(self, slot: Slot, pos: int) -> None:
        """Cut ``slot``'s cache back to its first ``pos`` tokens (all of it when it cannot)."""
        if not self.mem.seq_rm(slot.seq_id, pos):
            self.empty(slot)
            return
        del slot.tokens[pos:]
