"""``LlamaJudge``: the Judge protocol over a local GGUF model run in-process.

This module wires the pieces together and answers steps: it loads the model
(``cpu``), builds the prompt (``chat``), generates under the step's grammar
(``sampler``), retries once with a larger budget when the output was cut
off, parses the reply (``localeval.judge.parse``) and, when asked, reads the
verdict probabilities (``verdict``). Its fingerprint is what the cache and
the run summary key on.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from localeval.catalog import file_sha256, hash_memo_path, read_gguf_metadata
from localeval.errors import JudgeCallError, ModelError
from localeval.judge.base import JudgeReply, JudgeRequest, Usage
from localeval.judge.grammar import TOKENS_PER_CHAR, allowed_values, max_tokens_for, schema_to_gbnf
from localeval.judge.llama.chat import ChatTemplate
from localeval.judge.llama.cpu import available_cores, has_amx, new_llama
from localeval.judge.llama.batch import BatchEngine
from localeval.judge.llama.lookup import DRAFT_MODES
from localeval.judge.llama.sampler import Generation, TokenSampler
from localeval.judge.llama.verdict import VerdictProbabilities
from localeval.judge.parse import is_json, parse_reply, truncation_error

T = TypeVar("T")

__all__ = ["LlamaJudge", "DEFAULT_MAX_CTX", "GENERATION_VERSION"]

#: Context used when the model allows more: the KV cache grows with n_ctx and
#: judge prompts rarely need more than a few thousand tokens.
DEFAULT_MAX_CTX = 8192
#: Bumped when a change here can change outputs for the same model and request.
GENERATION_VERSION = "2"


class LlamaJudge(ChatTemplate, VerdictProbabilities, TokenSampler):
    """A Judge backed by a local GGUF file.

    Parameters mirror ``llama_cpp.Llama`` where they exist. ``n_ctx=None``
    takes the model's trained context, capped at ``max_ctx``. ``n_gpu_layers``
    of -1 offloads every layer when the llama.cpp build supports a GPU.
    ``n_threads`` (generation) and ``n_threads_batch`` (prompts) default to
    the cores this process may use. ``chat_format`` overrides the GGUF's
    embedded template with one of llama-cpp-python's named formats
    ("chatml", "llama-3", ...). ``temperature``/``seed`` are the judge's
    sampling settings; a request's own non-zero temperature wins, and its
    seed is mixed with the judge's, so a run's ``--seed`` changes sampling.

    ``max_tokens`` fixes the output budget (default: derived from the
    schema's bounds, ``tokens_per_char`` per string character).
    ``grammar_mode="full"`` filters the whole vocabulary at every step, as
    llama-cpp-python does (for comparison; same output, slower).
    ``extra_buffers=None`` turns llama.cpp's CPU extra buffer types off on
    AMX machines (see ``cpu.new_llama``). ``logit_bias`` is added to the logits
    before each pick, never to verdict probabilities.

    ``parallel=N`` (N > 1) decodes up to N calls at once, one ``llama_decode``
    per step over all of them (``batch.BatchEngine``): call ``ask`` from N
    threads (the run does, one sample per thread: ``capacity``). Each call
    gets its own KV stream of ``n_ctx`` tokens, so the KV cache is N times
    larger; outputs are those of sequential decoding (same fingerprint).

    ``draft`` chooses prompt-lookup drafting in the sequential loop
    (``lookup``): "lookup" guesses tokens ahead from the prompt and verifies
    them in one decode, "none" (default) decodes one token per step, "auto"
    drafts while it is measured to pay. Outputs were identical in the tests, not
    in every call of a full benchmark run (docs/performance.md), hence opt-in;
    same fingerprint; the batched engine decodes one token per call and step.
    """

    def __init__(self, model_path: str | os.PathLike[str], n_ctx: int | None = None,
                 n_gpu_layers: int = -1, n_threads: int | None = None,
                 chat_format: str | None = None, seed: int = 0, temperature: float = 0.0,
                 verbose: bool = False, *, max_ctx: int = DEFAULT_MAX_CTX, n_batch: int = 512,
                 max_tokens: int | None = None, tokens_per_char: int = TOKENS_PER_CHAR,
                 grammar_mode: str = "check-first", n_threads_batch: int | None = None,
                 extra_buffers: bool | None = None,
                 logit_bias: dict[int, float] | None = None, parallel: int = 1,
                 draft: str = "none") -> None:
        self.path = Path(model_path)
        self.meta = read_gguf_metadata(self.path)  # ModelError before llama.cpp sees it
        self.name = self.path.name
        self.seed = int(seed)
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.tokens_per_char = tokens_per_char
        if grammar_mode not in ("check-first", "full"):
            raise ValueError("grammar_mode must be 'check-first' or 'full'")
        self.grammar_mode = grammar_mode
        if int(parallel) < 1:
            raise ValueError("parallel must be at least 1")
        self.parallel = int(parallel)
        if draft not in DRAFT_MODES:
            raise ValueError(f"draft must be one of {', '.join(DRAFT_MODES)}")
        self.draft = draft
        self._engine: BatchEngine | None = None
        self._tls = threading.local()
        self._lock = threading.RLock()
        # Added to the logits before each pick (not to verdict probabilities).
        self.logit_bias = {int(k): float(v) for k, v in (logit_bias or {}).items()}
        self._bias_ids = np.array(list(self.logit_bias), dtype=np.int64)
        self._bias_vals = np.array(list(self.logit_bias.values()), dtype=np.float32)

        trained = int(self.meta.get("context_length") or 0) or max_ctx
        self.n_ctx = int(n_ctx) if n_ctx else min(trained, max_ctx)
        threads = int(n_threads) if n_threads else available_cores()
        threads_batch = int(n_threads_batch) if n_threads_batch else threads

        import llama_cpp

        self._lc = llama_cpp
        if n_gpu_layers != 0 and not llama_cpp.llama_supports_gpu_offload():
            n_gpu_layers = 0
        self.n_gpu_layers = n_gpu_layers
        self.n_threads = threads
        self.n_threads_batch = threads_batch
        if extra_buffers is None:
            extra_buffers = not has_amx()
        self.extra_buffers = extra_buffers
        # Batched: one KV stream per sequence (see batch.py for why not a unified cache).
        context = ({"n_seq_max": self.parallel, "kv_unified": False}
                   if self.parallel > 1 else None)
        n_batch = min(n_batch, self.n_ctx)
        try:
            self._llm = new_llama(
                extra_buffers, context,
                model_path=str(self.path), n_ctx=self.n_ctx * self.parallel, n_batch=n_batch,
                n_gpu_layers=n_gpu_layers, n_threads=threads, n_threads_batch=threads_batch,
                seed=self.seed, logits_all=False, verbose=verbose,
                # Flash attention computes each row alone, so a token's logits are the
                # same decoded alone or with drafted tokens (lookup) or other sequences
                # (batch); llama.cpp's other CPU attention differs between 1 and 2+ rows.
                flash_attn=True,
                kv_overrides=self._header_overrides(self.n_ctx),  # checks the header first
            )
        except (ValueError, RuntimeError, OSError) as e:
            raise ModelError(f"{self.path}: llama.cpp could not load the model ({e})") from None

        self._init_sampler()
        self._setup_chat(chat_format)
        self.model_sha256 = file_sha256(self.path, hash_memo_path())
        self.fingerprint = self._fingerprint()
        if self.parallel > 1:
            self._engine = BatchEngine(self, self.parallel, n_batch)

    @property
    def capacity(self) -> int:
        """Calls this judge serves at once (the run scores that many samples in threads)."""
        return self.parallel

    @property
    def batch_stats(self) -> dict[str, float] | None:
        """The batched engine's counters (decodes, rows, copies, seconds by kind), or None
        when calls are decoded one at a time: where a batched run's time went."""
        return None if self._engine is None else self._engine.stats.to_dict()

    def exclusive(self, fn: Callable[[], T]) -> T:
        """``fn()`` with the llama.cpp context to itself, on the thread that decodes.

        A batched judge runs it on its decode thread once the calls in flight
        are done (``BatchEngine.exclusive``: llama.cpp calls from a second
        thread slow every decode while both threads' OpenMP teams exist), then
        empties its slots' caches; a sequential judge runs it here under its
        lock and forgets its cached prefix. For benchmarks that time
        llama.cpp's own loops on the judge's context.
        """
        if self._engine is not None:
            return self._engine.exclusive(fn)
        with self._lock:
            try:
                return fn()
            finally:
                self._llm.reset()

    # -- identity -----------------------------------------------------------------
    def _fingerprint(self) -> str:
        import hashlib

        ident = {
            "model_sha256": self.model_sha256,
            "chat": self.chat_format or "gguf",
            "template_sha256": hashlib.sha256(self._template_text.encode()).hexdigest(),
            "temperature": self.temperature,
            "seed": self.seed,
            "generation": GENERATION_VERSION,
            "logit_bias": sorted(self.logit_bias.items()),
        }
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()

    def signature(self) -> dict[str, Any]:
        """What the run summary records about this judge."""
        return {
            "judge": self.name, "sha256": self.model_sha256, "fingerprint": self.fingerprint,
            "architecture": self.meta.get("architecture"), "file_type": self.meta.get("file_type"),
            "parameters": self.meta.get("parameters"), "n_ctx": self.n_ctx,
            "chat_format": self.chat_format or "gguf", "temperature": self.temperature,
            "seed": self.seed,
        }

    # -- the Judge protocol ------------------------------------------------------------
    def _sampling(self, request: JudgeRequest) -> tuple[float, int]:
        temp = request.temperature if request.temperature > 0 else self.temperature
        seed = (self.seed * 1_000_003 + int(request.seed)) & 0xFFFFFFFF
        return temp, seed

    def ask(self, request: JudgeRequest) -> JudgeReply:
        if self._engine is not None:  # the engine serialises access to llama.cpp
            return self._ask(request)
        with self._lock:
            return self._ask(request)

    # -- batched: route the sampler's model access through the engine ------------------
    def generate(self, prompt: Sequence[int], gbnf: str | None, max_tokens: int, *,
                 temperature: float = 0.0, seed: int = 0) -> Generation:
        if self._engine is None:
            return super().generate(prompt, gbnf, max_tokens, temperature=temperature,
                                    seed=seed)
        return self._engine.generate(prompt, gbnf, max_tokens, temperature=temperature,
                                     seed=seed)

    def _eval_to(self, tokens: Sequence[int]) -> int:
        if self._engine is None:
            return super()._eval_to(tokens)
        # Verdict probabilities: the logits are kept for this thread's next _logits().
        self._tls.logits, reused = self._engine.logits_after(tokens)
        return reused

    def _logits(self) -> np.ndarray:
        if self._engine is None:
            return super()._logits()
        return self._tls.logits

    def _ask(self, request: JudgeRequest) -> JudgeReply:
        t0 = time.perf_counter()
        schema = request.schema
        gbnf = schema_to_gbnf(schema)
        values = allowed_values(schema, request.prob_field) if request.prob_field else None
        prompt = self.prompt_tokens(request.messages)
        P = len(prompt)
        room = self.n_ctx - P
        if room < 1:
            raise JudgeCallError(f"prompt is {P} tokens, longer than the judge context of "
                                 f"{self.n_ctx} tokens")
        budget = min(self.max_tokens or max_tokens_for(schema, self.tokens_per_char), room)
        temp, seed = self._sampling(request)
        usage = Usage()
        gen = None
        for attempt in range(2):
            gen = self.generate(prompt, gbnf, budget, temperature=temp, seed=seed)
            usage.calls += 1
            usage.prompt_tokens += gen.prompt_tokens
            usage.reused_tokens += gen.reused_tokens
            usage.generated_tokens += len(gen.tokens)
            usage.drafted_tokens += gen.drafted_tokens
            usage.accepted_tokens += gen.accepted_tokens
            usage.decode_steps += gen.decode_steps
            if gen.stop == "eos" or is_json(gen.raw):
                break
            if attempt == 0 and budget < room:
                budget = min(2 * budget, room)
                continue
            extra = (f" (the context of {self.n_ctx} tokens is full)" if budget >= room else "")
            raise truncation_error(len(gen.tokens), extra)
        assert gen is not None
        output = parse_reply(gen.raw, schema)
        probs = None
        if request.prob_field:
            probs, p_usage = self._verdict_probs(prompt, gen, request.prob_field, values or [])
            usage.prompt_tokens += p_usage.prompt_tokens
            usage.reused_tokens += p_usage.reused_tokens
        usage.seconds = time.perf_counter() - t0
        return JudgeReply(output=output, raw=gen.text, usage=usage, probs=probs)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
        with self._lock:
            self._free_grammars()
            self._llm.close()

    def __repr__(self) -> str:
        return f"LlamaJudge({str(self.path)!r}, n_ctx={self.n_ctx})"

