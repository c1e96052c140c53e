"""Batched judging: many sequences decoded together, one ``llama_decode`` per step.

A judge call is mostly weight reads: on a GPU one decode of one token costs
nearly what a decode of sixteen costs (on a 2-core CPU sixteen cost about
six times one; docs/performance.md). So with ``LlamaJudge(parallel=N)`` the
metrics keep calling ``generate`` from N sample threads, and the calls queue
up here; one decode thread owns the llama.cpp context. Each step it
evaluates the prompt suffix of every call that has just arrived, then
advances every live sequence by a token in one decode. Each sequence has its
own KV sequence id, grammar state and sampler (``sampler.Decoding``, the one
step shared with the sequential decoder, so the same logits give the same token).
``BatchEngine`` serves the ``decoder.Decoder`` protocol; it is given the model
handle and the sampler, and reaches llama.cpp only through ``compat``.

Prefix reuse: a slot keeps the tokens its sequence left in the KV cache; a
new call goes to the free slot sharing the longest prefix with its prompt,
or, when another slot shares a much longer one, the cache of that slot is
copied (``llama_memory_seq_cp``) and cut back to the shared prefix.

Against sequential decoding: each sequence has its own KV stream
(``kv_unified=False``) laid out from position 0 as the sequential loop lays
out its one sequence, a thread keeps its slot (its calls find the cache as a
judge serving only that thread would leave it), and prompt suffixes are
decoded alone in the sequential loop's chunks. Every sequence has two rows
or more in every micro-batch of a generation decode, all with logits
(``decode_plan.floor_rows``, ``drafting.padded``), and may carry prompt-lookup
guesses (``drafting``; refused ones are rolled back). Written by hand because
llama-cpp-python's high-level API decodes one sequence at a time and its
server is a separate process.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import Future
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from localeval.errors import JudgeCallError
from localeval.judge.llama import compat
from localeval.judge.llama.decode_plan import EngineStats, floor_rows, padded_rows, prompt_chunks
from localeval.judge.llama.drafting import SequenceDraft
from localeval.judge.llama.governor import DraftGovernor
from localeval.judge.llama.model import ModelHandle
from localeval.judge.llama.sampler import Generation, Sampler
from localeval.judge.llama.slots import Job, Slot, SlotTable, common_prefix

__all__ = ["BatchEngine", "common_prefix"]

T = TypeVar("T")

#: What a call cut short by ``BatchEngine.interrupt`` raises (never cached: not a verdict).
CANCELLED = "judge call cancelled: the run was interrupted"


class BatchEngine:
    """The decode thread and its slots for one model: ``n_seq`` sequences decoded together.

    The model's context must have been made with ``n_seq_max >= n_seq``. Only
    the decode thread touches the context and the sampler's scratch buffers.
    """

    def __init__(self, model: ModelHandle, sampler: Sampler, n_seq: int, n_batch: int,
                 governor: DraftGovernor | None = None) -> None:
        self.model = model
        self.sampler = sampler
        #: whether generation drafts (``governor.DraftGovernor``; default: never)
        self.governor = governor or DraftGovernor("none")
        self._mem = compat.Memory(model.llm)
        self.n_batch = n_batch
        self._rows: compat.Batch | None = compat.Batch(self._mem, n_batch)
        # Dummy rows are removed from the cache after their decode: not possible in a
        # recurrent state, which cannot drop its last token.
        self._can_pad = not compat.is_recurrent(model.llm)
        #: where the decode thread's time goes, for the benchmark (``scripts/bench_parallel.py``)
        self.stats = EngineStats()
        self._table = SlotTable(self._mem, n_seq, self.stats)
        self._slots = self._table.slots
        self._queue: deque[Job] = deque()
        self._exclusive: deque[tuple[Callable[[], Any], Future]] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._interrupted = False  # calls refused and cut short until ``resume``
        self._thread = threading.Thread(target=self._run, name="localeval-decode", daemon=True)
        self._thread.start()

    @property
    def decode_thread(self) -> threading.Thread:
        """The thread that owns the llama.cpp context (``exclusive`` runs there)."""
        return self._thread

    def counters(self) -> dict[str, Any]:
        """``stats`` as a dict (``LlamaJudge.batch_stats``)."""
        return self.stats.to_dict()

    # -- the callers' side ------------------------------------------------------------
    def generate(self, prompt: Sequence[int], gbnf: str | None, max_tokens: int, *,
                 temperature: float = 0.0, seed: int = 0) -> Generation:
        """What ``SequentialDecoder.generate`` returns, decoded alongside the other calls."""
        return self._submit(Job(list(prompt), gbnf, max_tokens, temperature, seed, False))

    def logits_after(self, prompt: Sequence[int]) -> tuple[np.ndarray, int]:
        """Logits after ``prompt`` (a copy) and the prompt tokens served from the cache."""
        return self._submit(Job(list(prompt), None, 0, 0.0, 0, True))

    def exclusive(self, fn: Callable[[], T]) -> T:
        """``fn()`` run on the decode thread once no call is in flight; new calls wait.

        For code that needs the llama.cpp context to itself (the benchmark's
        own ``llama_decode`` loops): run from another thread, llama.cpp's
        OpenMP would start a second team of worker threads beside the decode
        thread's, and while both teams exist a one-row decode costs 25-80 %
        more (measured in docs/performance.md, "Where the decodes run"). ``fn`` may
        use any sequence of the context, so every slot's cache is emptied after it.
        """
        fut: Future = Future()
        with self._cond:
            if self._closed:
                raise JudgeCallError("the judge is closed")
            self._exclusive.append((fn, fut))
            self._cond.notify()
        return fut.result()

    def _run_exclusive(self, fn: Callable[[], Any], fut: Future) -> None:
        try:
            fut.set_result(fn())
        except BaseException as e:  # noqa: BLE001 - the caller re-raises it
            fut.set_exception(e)
        finally:
            for s in self._slots:
                self._empty(s)

    def interrupt(self) -> None:
        """Fail every queued and running call with ``CANCELLED``, and new ones until ``resume``.

        For Ctrl-C / SIGTERM: the run stops within one decode step instead of
        finishing every sample in flight. The decode thread fails the running
        calls (it owns their slots); the queued ones are failed here.
        """
        err = JudgeCallError(CANCELLED)
        with self._cond:
            self._interrupted = True
            while self._queue:
                self._queue.popleft().future.set_exception(err)
            self._cond.notify()

    def resume(self) -> None:
        """Accept calls again after ``interrupt``."""
        with self._cond:
            self._interrupted = False

    def _submit(self, job: Job) -> Any:
        if not job.prompt:
            raise JudgeCallError("empty prompt")
        with self._cond:
            if self._closed:
                raise JudgeCallError("the judge is closed")
            if self._interrupted:
                raise JudgeCallError(CANCELLED)
            self._queue.append(job)
            self._cond.notify()
        return job.future.result()

    def close(self) -> None:
        """Stop the decode thread (after the calls in flight) and free the batch."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()
        if self._rows is not None:
            self._rows.free()
            self._rows = None

    # -- the decode thread --------------------------------------------------------------
    def _live(self) -> list[Slot]:
        return [s for s in self._slots if s.job is not None]

    def _run(self) -> None:
        while True:
            with self._cond:
                while (not self._queue and not self._live() and not self._exclusive
                       and not self._closed):
                    self._cond.wait()
                task = self._exclusive.popleft() if self._exclusive and not self._live() else None
                if task is None and self._closed and not self._queue and not self._live():
                    return
                cancel = self._interrupted
                # A pending ``exclusive`` call waits for the calls in flight, not for new ones.
                admitted = ([] if self._exclusive or task or cancel
                            else self._table.admit(self._queue))
            if cancel and task is None:
                for s in self._live():
                    self._fail(s, JudgeCallError(CANCELLED))
                continue
            if task is not None:
                self._run_exclusive(*task)
                continue
            for job in admitted:
                self._start(job)
            try:
                self._step()
            except Exception as e:  # noqa: BLE001 - every caller must hear of it
                err = e if isinstance(e, JudgeCallError) else JudgeCallError(
                    f"llama.cpp failed during batched generation ({e})")
                for s in self._live():
                    self._fail(s, err)

    def _start(self, job: Job) -> None:
        if not job.logits_only:
            try:
                job.seq = self.sampler.start(job.gbnf, job.max_tokens, job.temperature, job.seed)
                job.draft = SequenceDraft(job.prompt, self.governor)
            except Exception as e:  # noqa: BLE001 - a grammar llama.cpp rejects
                slot = next(s for s in self._slots if s.job is job)
                self._fail(slot, e)

    def _step(self) -> None:
        """A prompt chunk of every slot still evaluating its prompt, then one decode of
        every generating sequence's next token.

        Prompts first: a decode of a few generated tokens costs nearly what one
        of sixteen costs (on a CPU, two rows cost more than one), so every
        sequence that can join the next generation step should have its
        prompt in the cache by then; evaluating one prompt per step instead left
        most generation decodes with a few rows.

        Prompt suffixes are decoded alone, in the chunks the sequential loop
        uses (``n_batch`` tokens from the first one not in the cache): llama.cpp
        splits a batch that mixes sequences into equal per-sequence micro-batches,
        and a prompt cut into other pieces can come out different in the last bits.
        """
        for slot in sorted(self._live(), key=lambda s: s.last_used):
            # Checked here, not when listing: an earlier decode may have failed this slot.
            if slot.job is not None and not slot.job.generating:
                todo = slot.job.todo
                self._decode([(slot, todo[: prompt_chunks(len(todo), self.n_batch)[0]])])
        gen = [s for s in self._live() if s.job is not None and s.job.generating]
        if gen:
            self._generate(gen)

    def _generate(self, gen: list[Slot]) -> None:
        """One decode of every generating sequence's head and guesses, all rows with logits,
        at least two (a lone head gets a pad row: ``drafting.padded``), plus idle slots'
        dummy rows where measured cheaper (``padded_rows``); then each sequence's walk."""
        b = self._rows
        assert b is not None
        t = time.perf_counter()
        limit = self.governor.step_limit()
        # Guesses that fit beside every head and pad (``floor_rows`` adds <= 2 per sequence).
        room = self.n_batch - 3 * len(self._slots)
        parts: list[tuple[Slot, int, list[int]]] = []
        for slot in gen:
            job = slot.job
            assert job is not None and job.seq is not None and job.draft is not None
            guesses = job.draft.guesses(job.seq, room if limit is None else min(room, limit))
            room -= len(guesses)
            parts.append((slot, b.n, guesses))
            for k, tok in enumerate([job.todo[0], *guesses]):
                b.add(tok, len(slot.tokens) + k, slot.seq_id, True)
        live = b.n
        idle = [s for s in self._slots if s.job is None and len(s.tokens) < self.model.n_ctx
                ] if self._can_pad else []
        spare = min(len(idle), (self.n_batch - b.n - 2 * len(gen)) // 3)
        dummies = idle[:(padded_rows(self.stats, b.n, 2 * spare) - b.n) // 2]
        counts = [1 + len(g) for _, _, g in parts]
        want = floor_rows(counts + [2] * len(dummies)) if self._can_pad else counts
        for slot, k in zip(dummies, want[len(parts):]):  # rows with logits: ``floor_rows``
            for pos in range(len(slot.tokens), len(slot.tokens) + k):
                b.add(0, pos, slot.seq_id, True)
        for (slot, _, g), have, target in zip(parts, counts, want):
            assert slot.job is not None
            for pos in range(len(slot.tokens) + have, len(slot.tokens) + target):
                b.add(g[-1] if g else slot.job.todo[0], pos, slot.seq_id, True)
        n = b.n
        t0 = time.perf_counter()
        ret = b.decode()
        self.stats.count_generation(live, n - live, time.perf_counter() - t0)
        for slot in dummies:
            self._mem.seq_rm(slot.seq_id, len(slot.tokens))
        for (slot, _, _), have, target in zip(parts, counts, want):
            if target > have:
                self._mem.seq_rm(slot.seq_id, len(slot.tokens) + have)
        if ret != 0:
            raise JudgeCallError(f"llama.cpp failed during batched generation (llama_decode "
                                 f"returned {ret})")
        t1 = time.perf_counter()
        made = 0
        for slot, first, guesses in parts:
            made += self._verify(slot, first, guesses)
        self.stats.step_seconds += time.perf_counter() - t1
        self.governor.record(limit is None, made, time.perf_counter() - t)

    def _verify(self, slot: Slot, first: int, guesses: list[int]) -> int:
        """Walk ``slot``'s rows (from ``first``); keep the accepted guesses; tokens kept."""
        job = slot.job
        assert job is not None and job.seq is not None and job.draft is not None
        base = len(slot.tokens)
        slot.tokens += [job.todo.pop(0), *guesses]
        rows = self._rows
        assert rows is not None
        try:
            kept, nxt = job.draft.verify(
                job.seq, lambda r: rows.logits(first + r, self.model.n_vocab), guesses)
        except Exception as e:  # noqa: BLE001 - this call's failure, not the batch's
            self._fail(slot, e)
            return 0
        if kept < len(guesses):
            self._table.rollback(slot, base + 1 + kept)
        if nxt is None:
            job.seq.free()
            self._finish(slot, job.seq.result(len(job.prompt), job.reused, job.t0, job.draft.stats))
        else:
            job.todo.append(nxt)
        return 1 + kept

    def _decode(self, parts: list[tuple[Slot, list[int]]]) -> None:
        """One ``llama_decode`` of prompt chunks ``parts`` (slot, its next tokens); a prompt
        whose last chunk this is gets its first pick."""
        b = self._rows
        assert b is not None
        rows: list[tuple[Slot, int, list[int]]] = []
        for slot, take in parts:
            job = slot.job
            assert job is not None
            pos = len(slot.tokens)
            last = -1
            for k, tok in enumerate(take):
                last = b.add(tok, pos + k, slot.seq_id, False)
            if take and len(take) == len(job.todo):
                b.want_logits(last)
                rows.append((slot, last, take))
            else:
                rows.append((slot, -1, take))
        n = b.n
        if n == 0:
            return
        t0 = time.perf_counter()
        ret = b.decode()
        st = self.stats
        st.prompt_decodes, st.prompt_tokens = st.prompt_decodes + 1, st.prompt_tokens + n
        st.prompt_seconds += time.perf_counter() - t0
        if ret != 0:
            raise JudgeCallError(f"llama.cpp failed during batched generation (llama_decode "
                                 f"returned {ret})")
        t1 = time.perf_counter()
        try:
            self._after_decode(rows)
        finally:
            st.step_seconds += time.perf_counter() - t1

    def _after_decode(self, rows: list[tuple[Slot, int, list[int]]]) -> None:
        """Advance each decoded sequence: record its tokens, pick its next token or finish."""
        assert self._rows is not None
        for slot, row, took in rows:
            job = slot.job
            assert job is not None
            slot.tokens += took
            del job.todo[: len(took)]
            if row < 0:
                continue
            job.generating = True
            logits = self._rows.logits(row, self.model.n_vocab)
            if job.logits_only:
                self._finish(slot, (logits.copy(), job.reused))
                continue
            assert job.seq is not None and job.draft is not None
            try:
                tok = job.seq.step(logits)
            except Exception as e:  # noqa: BLE001 - this call's failure, not the batch's
                self._fail(slot, e)
                continue
            if tok is None:
                job.seq.free()
                self._finish(slot, job.seq.result(len(job.prompt), job.reused, job.t0,
                                                  job.draft.stats))
            else:
                job.todo.append(tok)

    def _finish(self, slot: Slot, value: Any) -> None:
        job = slot.job
        slot.job = None
        assert job is not None
        job.future.set_result(value)

    def _fail(self, slot: Slot, err: BaseException) -> None:
        job = slot.job
        slot.job = None
        if job is None:
            return
        if job.seq is not None:
            job.seq.free()
        self._empty(slot)  # what the failed call left in the cache is not trusted again
        job.future.set_exception(err)

    def _empty(self, slot: Slot) -> None:
        """Drop everything ``slot`` holds in the KV cache."""
        self._table.empty(slot)
