"""``LlamaJudge``: the Judge protocol over a local GGUF model run in-process.

This module wires the pieces together and answers steps: it loads the model
(``compat``) into a ``ModelHandle`` (``model``), builds the prompt
(``chat.ChatTemplate``), generates under the step's grammar with the decoder
chosen at construction (``decoder.SequentialDecoder`` or
``batch.BatchEngine``, picking with ``sampler.Sampler``), retries once with a
larger budget when the output was cut off, parses the reply
(``localeval.judge.parse``) and, when asked, reads the verdict probabilities
(``verdict.VerdictReader``). Each piece is handed what it uses; none reaches
into the judge. Its fingerprint is what the cache and the run summary key on.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from localeval.catalog import file_sha256, hash_memo_path, read_gguf_metadata
from localeval.errors import JudgeCallError, ModelError, UsageError
from localeval.judge.base import JudgeReply, JudgeRequest, Message, Usage
from localeval.judge.grammar import TOKENS_PER_CHAR, allowed_values, max_tokens_for, schema_to_gbnf
from localeval.judge.llama import compat
from localeval.judge.llama.batch import BatchEngine
from localeval.judge.llama.chat import ChatTemplate, header_overrides
from localeval.judge.llama.cpu import available_cores
from localeval.judge.llama.decoder import Decoder, SequentialDecoder
from localeval.judge.llama.governor import DRAFT_MODES, DraftGovernor
from localeval.judge.llama.model import ModelHandle
from localeval.judge.llama.sampler import Generation, Sampler
from localeval.judge.llama.verdict import VerdictReader
from localeval.judge.parse import is_json, parse_reply, truncation_error

T = TypeVar("T")

__all__ = ["LlamaJudge", "DEFAULT_MAX_CTX", "GENERATION_VERSION"]

#: Context used when the model allows more: the KV cache grows with n_ctx and
#: judge prompts rarely need more than a few thousand tokens.
DEFAULT_MAX_CTX = 8192
#: Bumped when a change here can change outputs for the same model and request.
GENERATION_VERSION = "3"  # 2: generation decodes of two rows at least (drafting); 3: prompts too
#: Sequences one llama.cpp context decodes together (``LLAMA_MAX_SEQ`` in the bundled
#: llama.cpp's src/llama-cparams.h; above it the context cannot be created).
MAX_SEQUENCES = 256


class LlamaJudge:
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
    AMX machines (see ``compat.load_llama``). ``logit_bias`` is added to the logits
    before each pick, never to verdict probabilities.

    ``parallel=N`` (N > 1) decodes up to N calls at once, one ``llama_decode``
    per step over all of them (``batch.BatchEngine``): call ``ask`` from N
    threads (the run does, one sample per thread: ``capacity``). Each call
    gets its own KV stream of ``n_ctx`` tokens, so the KV cache is N times
    larger; outputs are those of sequential decoding (same fingerprint).

    ``draft`` is prompt-lookup drafting (``drafting``, ``ngram``, ``verify``): "lookup"
    guesses the next tokens from the prompt and the output so far and keeps
    those the model agrees to, "none" never guesses, "auto" (the default)
    guesses while the decode times measured on this judge say it pays
    (``governor.DraftGovernor``). Outputs are the same in every mode (every
    generation decode is at least two rows wide), so the fingerprint does not
    name it.

    Parts, each built here and handed what it uses: ``model`` (the loaded
    ``Llama`` and its vocabulary), ``sampler``, ``chat``, ``decoder`` (a
    ``SequentialDecoder`` or, for ``parallel`` > 1, a ``BatchEngine``) and
    ``verdicts``.
    """

    def __init__(self, model_path: str | os.PathLike[str], n_ctx: int | None = None,
                 n_gpu_layers: int = -1, n_threads: int | None = None,
                 chat_format: str | None = None, seed: int = 0, temperature: float = 0.0,
                 verbose: bool = False, *, max_ctx: int = DEFAULT_MAX_CTX, n_batch: int = 512,
                 max_tokens: int | None = None, tokens_per_char: int = TOKENS_PER_CHAR,
                 grammar_mode: str = "check-first", n_threads_batch: int | None = None,
                 extra_buffers: bool | None = None,
                 logit_bias: dict[int, float] | None = None, parallel: int = 1,
                 draft: str = "auto") -> None:
        self.path = Path(model_path)
        if draft not in DRAFT_MODES:
            raise UsageError(f"--draft must be one of {', '.join(DRAFT_MODES)}, not {draft!r}")
        #: whether generation drafts by prompt lookup; one per judge (it learns the speed)
        self.drafting = DraftGovernor(draft)
        self.meta = read_gguf_metadata(self.path)  # ModelError before llama.cpp sees it
        self.name = self.path.name
        self.seed = int(seed)
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.tokens_per_char = tokens_per_char
        if grammar_mode not in ("check-first", "full"):
            raise ValueError("grammar_mode must be 'check-first' or 'full'")
        self.parallel = int(parallel)
        self._lock = threading.RLock()
        # Added to the logits before each pick (not to verdict probabilities).
        self.logit_bias = {int(k): float(v) for k, v in (logit_bias or {}).items()}

        trained = int(self.meta.get("context_length") or 0) or max_ctx
        self.n_ctx = int(n_ctx) if n_ctx else min(trained, max_ctx)
        n_batch = min(n_batch, self.n_ctx)
        _check_parallel(self.parallel, self.n_ctx, n_batch)
        threads = int(n_threads) if n_threads else available_cores()
        threads_batch = int(n_threads_batch) if n_threads_batch else threads

        compat.check_version()  # before llama.cpp is asked for anything
        if n_gpu_layers != 0 and not compat.gpu_offload_supported():
            n_gpu_layers = 0
        self.n_gpu_layers = n_gpu_layers
        self.n_threads = threads
        self.n_threads_batch = threads_batch
        if extra_buffers is None:
            extra_buffers = not compat.has_amx()
        self.extra_buffers = extra_buffers
        # Batched: one KV stream per sequence (see batch.py for why not a unified cache).
        context = ({"n_seq_max": self.parallel, "kv_unified": False}
                   if self.parallel > 1 else None)
        try:
            llm = compat.load_llama(
                extra_buffers, context,
                model_path=str(self.path), n_ctx=self.n_ctx * self.parallel, n_batch=n_batch,
                n_gpu_layers=n_gpu_layers, n_threads=threads, n_threads_batch=threads_batch,
                seed=self.seed, logits_all=False, verbose=verbose,
                # checks the header first
                kv_overrides=header_overrides(self.path, self.meta, self.n_ctx),
            )
        except (ValueError, RuntimeError, OSError) as e:
            raise ModelError(f"{self.path}: llama.cpp could not load the model ({e})") from None

        self.model = ModelHandle(llm, self.n_ctx)
        self.sampler = Sampler(self.model, grammar_mode, self.logit_bias)
        self.chat = ChatTemplate(self.path, self.meta, self.model, chat_format)
        self.model_sha256 = file_sha256(self.path, hash_memo_path())
        self.fingerprint = self._fingerprint()
        self.decoder: Decoder = (
            BatchEngine(self.model, self.sampler, self.parallel, n_batch, self.drafting)
            if self.parallel > 1
            else SequentialDecoder(self.model, self.sampler, self._lock, self.drafting))
        self.verdicts = VerdictReader(self.model, self.decoder)

    # -- what tests, benchmarks and the run read -------------------------------------------
    @property
    def llm(self) -> Any:
        """The loaded ``llama_cpp.Llama`` (benchmarks reset or time its cache)."""
        return self.model.llm

    #: The same, under the name benchmarks and tests have always used.
    _llm = llm

    @property
    def n_vocab(self) -> int:
        return self.model.n_vocab

    @property
    def chat_format(self) -> str | None:
        return self.chat.chat_format

    @property
    def grammar_mode(self) -> str:
        """"check-first" or "full" (settable: benchmarks compare the two on one judge)."""
        return self.sampler.grammar_mode

    @grammar_mode.setter
    def grammar_mode(self, mode: str) -> None:
        if mode not in ("check-first", "full"):
            raise ValueError("grammar_mode must be 'check-first' or 'full'")
        self.sampler.grammar_mode = mode

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        """Token ids of the chat prompt for ``messages`` (generation prompt included)."""
        return self.chat.prompt_tokens(messages)

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` as plain content (no special tokens, no BOS)."""
        return self.chat.count_tokens(text)

    @property
    def capacity(self) -> int:
        """Calls this judge serves at once (the run scores that many samples in threads)."""
        return self.parallel

    @property
    def batches(self) -> bool:
        """Whether concurrent calls are decoded together here (``parallel`` > 1)."""
        return self.parallel > 1  # the decoder is then a BatchEngine

    @property
    def batch_stats(self) -> dict[str, float] | None:
        """The batched engine's counters (decodes, rows, copies, seconds by kind), or None
        when calls are decoded one at a time: where a batched run's time went."""
        return self.decoder.counters()

    def exclusive(self, fn: Callable[[], T]) -> T:
        """``fn()`` with the llama.cpp context to itself, on the thread that decodes.

        A batched judge runs it on its decode thread once the calls in flight
        are done (``BatchEngine.exclusive``: llama.cpp calls from a second
        thread slow every decode while both threads' OpenMP teams exist), then
        empties its slots' caches; a sequential judge runs it here under its
        lock and forgets its cached prefix. For benchmarks that time
        llama.cpp's own loops on the judge's context.
        """
        return self.decoder.exclusive(fn)

    def interrupt(self) -> None:
        """Cut the calls in flight short (``JudgeCallError``) and refuse new ones until ``resume``.

        Batched judges only (``parallel`` > 1): the run calls it on Ctrl-C /
        SIGTERM so that it ends within a decode step. A sequential judge's one
        call is in the interrupted thread itself, so there is nothing to cut.
        """
        self.decoder.interrupt()

    def resume(self) -> None:
        """Serve calls again after ``interrupt``."""
        self.decoder.resume()

    # -- identity -----------------------------------------------------------------
    def _fingerprint(self) -> str:
        ident = {
            "model_sha256": self.model_sha256,
            "chat": self.chat_format or "gguf",
            "template_sha256": hashlib.sha256(self.chat.template_text.encode()).hexdigest(),
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
        if self.batches:  # the engine serialises access to llama.cpp itself
            return self._ask(request)
        with self._lock:
            return self._ask(request)

    def generate(self, prompt: Sequence[int], gbnf: str | None, max_tokens: int, *,
                 temperature: float = 0.0, seed: int = 0) -> Generation:
        """Generate after ``prompt`` under grammar ``gbnf`` (None: unconstrained)."""
        return self.decoder.generate(prompt, gbnf, max_tokens, temperature=temperature,
                                     seed=seed)

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
            usage.drafted_tokens += gen.draft.drafted
            usage.accepted_tokens += gen.draft.accepted
            usage.decode_steps += gen.draft.decode_steps
            if gen.stop == "eos" or is_json(gen.raw):
                break
            if attempt == 0 and budget < room:
                budget = min(2 * budget, room)
                continue
            extra = (f" (the context of {self.n_ctx} tokens is full)" if budget >= room else "")
            usage.seconds = time.perf_counter() - t0
            raise truncation_error(len(gen.tokens), extra, usage)
        assert gen is not None
        usage.seconds = time.perf_counter() - t0  # the cost so far, should the reply not parse
        output = parse_reply(gen.raw, schema, usage)
        probs = None
        if request.prob_field:
            probs, p_usage = self.verdicts.probabilities(prompt, gen, request.prob_field,
                                                         values or [])
            usage.prompt_tokens += p_usage.prompt_tokens
            usage.reused_tokens += p_usage.reused_tokens
        usage.seconds = time.perf_counter() - t0
        return JudgeReply(output=output, raw=gen.text, usage=usage, probs=probs)

    def close(self) -> None:
        self.decoder.close()
        with self._lock:
            self.sampler.close()
            self.model.close()

    def __repr__(self) -> str:
        return f"LlamaJudge({str(self.path)!r}, n_ctx={self.n_ctx})"


def _check_parallel(parallel: int, n_ctx: int, n_batch: int) -> None:
    """UsageError unless llama.cpp can decode ``parallel`` sequences together.

    Checked before the model loads: above ``MAX_SEQUENCES`` llama.cpp cannot
    create the context, and with more sequences than a batch has rows
    (``n_batch``, at most the context) it aborts the process in a GGML_ASSERT
    while reserving its compute graph, leaving a backtrace and the output
    folder's lock behind.
    """
    limit = min(MAX_SEQUENCES, n_batch)
    if 1 <= parallel <= limit:
        return
    if parallel >= 1 and limit < MAX_SEQUENCES:
        raise UsageError(f"--parallel {parallel} is out of range: with a judge context of "
                         f"{n_ctx} tokens (--n-ctx) llama.cpp decodes at most {limit} sequences "
                         f"together; use --parallel 1 to {limit} or a larger --n-ctx")
    raise UsageError(f"--parallel {parallel} is out of range: llama.cpp decodes 1 to "
                     f"{MAX_SEQUENCES} sequences together; use --parallel 1 to {limit}")

