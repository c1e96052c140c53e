"""The in-process judge: a GGUF model run by llama.cpp (llama-cpp-python).

``LlamaJudge`` uses ``llama_cpp.Llama`` for what it does well (loading,
tokenising, batched prompt evaluation, keeping the KV cache of the last
prompt) and runs its own small token loop on top, for three reasons:

* Speed under a grammar. llama-cpp-python's sampler chain runs the grammar
  over every vocabulary entry at every step (152K entries for Qwen), which
  costs about a quarter of generation speed on a 0.5B model. Upstream
  llama.cpp (``common_sampler_sample``) first picks a token without the
  grammar and asks the grammar about that one token; only when it is
  rejected is the vocabulary filtered and the pick repeated. That is exact
  (greedy: the best allowed token either is the best token or is found by
  the filtered pick; sampling: accept-or-resample from the renormalised
  distribution is the constrained distribution) and is what is done here,
  with the filtering itself narrowed to tokens whose first byte the grammar
  can take (see ``_constrain_by_first_byte``).
* Strictness the grammar engine lacks: no control tokens, no NUL bytes and
  only valid UTF-8 (no overlong forms, no surrogates) in what is emitted.
* Verdict probabilities need the logits at chosen positions without
  ``logits_all`` (which costs n_ctx x vocab floats).
* Exact accounting of prompt tokens reused from the KV cache.

Everything the model produces is decoded strictly as UTF-8, parsed with
``json.loads`` and validated by the step's pydantic model.
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from pydantic import BaseModel, ValidationError

from localeval.cache import default_cache_path
from localeval.errors import JudgeCallError, ModelError
from localeval.judge.base import JudgeReply, JudgeRequest, Message, Usage
from localeval.judge.gguf import file_sha256, read_gguf_metadata
from localeval.judge.grammar import (
    TOKENS_PER_CHAR,
    allowed_values,
    max_tokens_for,
    schema_to_gbnf,
)

__all__ = ["LlamaJudge", "Generation", "DEFAULT_MAX_CTX", "truncation_error"]

#: Context used when the model allows more: the KV cache grows with n_ctx and
#: judge prompts rarely need more than a few thousand tokens.
DEFAULT_MAX_CTX = 8192
#: Bumped when a change here can change outputs for the same model and request.
GENERATION_VERSION = "1"


def truncation_error(n_tokens: int, extra: str = "") -> JudgeCallError:
    """The per-sample error for output cut at the token budget.

    Marked ``cacheable``: it is a deterministic outcome of the request, so a
    resumed run should not pay for it again.
    """
    err = JudgeCallError(f"judge output truncated at {n_tokens} tokens{extra}")
    err.cacheable = True  # type: ignore[attr-defined]
    return err


def _invalid_output(msg: str) -> JudgeCallError:
    err = JudgeCallError(msg)
    err.cacheable = True  # type: ignore[attr-defined]
    return err


@dataclass
class Generation:
    """One generation: the text, its tokens and where the time went."""

    text: str  # ``raw`` decoded (with replacement characters, for display only)
    raw: bytes
    tokens: list[int]
    pieces: list[bytes]
    stop: str  # "eos" | "length"
    prompt_tokens: int
    reused_tokens: int
    seconds: float = 0.0
    #: Picks that needed the filtered (slow) path: the first choice was not allowed.
    grammar_rejections: int = 0


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _has_amx() -> bool:
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    return "AMX_INT8 = 1" in info


_load_lock = threading.Lock()


def _new_llama(extra_buffers: bool, **kwargs: Any):
    """``llama_cpp.Llama(**kwargs)``, optionally without CPU extra buffer types.

    Workaround, not a preference: on CPUs with AMX, llama.cpp (as vendored by
    llama-cpp-python 0.3.36) puts quantised weights in its AMX buffer type
    and ``ggml_backend_amx_mul_mat`` segfaults on the first decode (seen on
    this project's build machines with Q8_0). ``llama_model_params`` has a
    ``use_extra_bufts`` switch that ``Llama`` does not expose, so the default
    params are adjusted for the duration of this one constructor call.
    """
    import llama_cpp
    import llama_cpp.llama_cpp as lc

    if extra_buffers:
        return llama_cpp.Llama(**kwargs)
    with _load_lock:
        original = lc.llama_model_default_params

        def without_extra_buffers():
            params = original()
            params.use_extra_bufts = False
            return params

        lc.llama_model_default_params = without_extra_buffers
        try:
            return llama_cpp.Llama(**kwargs)
        finally:
            lc.llama_model_default_params = original


def _named_formatter(name: str):
    """The prompt formatter behind one of llama-cpp-python's named chat formats."""
    from llama_cpp import llama_chat_format as lcf

    registry = lcf.LlamaChatCompletionHandlerRegistry()._chat_handlers
    handler = registry.get(name)
    fmt = None
    if handler is not None:
        try:
            fmt = inspect.getclosurevars(handler).nonlocals.get("chat_formatter")
        except TypeError:
            fmt = None
    if fmt is None:
        names = sorted(n for n, h in registry.items()
                       if "chat_formatter" in getattr(h, "__code__", (lambda: 0).__code__
                                                      ).co_freevars)
        raise ModelError(f"unknown chat format {name!r}; known: {', '.join(names)}")
    return fmt


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
    AMX machines (see ``_new_llama``). ``logit_bias`` is added to the logits
    before each pick, never to verdict probabilities.
    """

    def __init__(self, model_path: str | os.PathLike[str], n_ctx: int | None = None,
                 n_gpu_layers: int = -1, n_threads: int | None = None,
                 chat_format: str | None = None, seed: int = 0, temperature: float = 0.0,
                 verbose: bool = False, *, max_ctx: int = DEFAULT_MAX_CTX, n_batch: int = 512,
                 max_tokens: int | None = None, tokens_per_char: int = TOKENS_PER_CHAR,
                 grammar_mode: str = "check-first", n_threads_batch: int | None = None,
                 extra_buffers: bool | None = None,
                 logit_bias: dict[int, float] | None = None) -> None:
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
        self._lock = threading.RLock()
        # Added to the logits before each pick (not to verdict probabilities).
        self.logit_bias = {int(k): float(v) for k, v in (logit_bias or {}).items()}
        self._bias_ids = np.array(list(self.logit_bias), dtype=np.int64)
        self._bias_vals = np.array(list(self.logit_bias.values()), dtype=np.float32)

        trained = int(self.meta.get("context_length") or 0) or max_ctx
        self.n_ctx = int(n_ctx) if n_ctx else min(trained, max_ctx)
        threads = int(n_threads) if n_threads else _cores()
        threads_batch = int(n_threads_batch) if n_threads_batch else threads

        import llama_cpp

        self._lc = llama_cpp
        if n_gpu_layers != 0 and not llama_cpp.llama_supports_gpu_offload():
            n_gpu_layers = 0
        self.n_gpu_layers = n_gpu_layers
        self.n_threads = threads
        self.n_threads_batch = threads_batch
        if extra_buffers is None:
            extra_buffers = not _has_amx()
        self.extra_buffers = extra_buffers
        try:
            self._llm = _new_llama(
                extra_buffers,
                model_path=str(self.path), n_ctx=self.n_ctx, n_batch=min(n_batch, self.n_ctx),
                n_gpu_layers=n_gpu_layers, n_threads=threads, n_threads_batch=threads_batch,
                seed=self.seed, logits_all=False, verbose=verbose,
            )
        except (ValueError, RuntimeError, OSError) as e:
            raise ModelError(f"{self.path}: llama.cpp could not load the model ({e})") from None

        self._vocab = llama_cpp.llama_model_get_vocab(self._llm.model)
        self.n_vocab = self._llm.n_vocab()
        self._pieces: dict[int, bytes] = {}
        self._eog = np.array([bool(llama_cpp.llama_vocab_is_eog(self._vocab, i))
                              for i in range(self.n_vocab)])
        # One reusable candidate array for the full grammar pass: llama_token_data is
        # {int32 id; float logit; float p}, packed to 12 bytes.
        self._cand = np.zeros(self.n_vocab, dtype=np.dtype(
            [("id", np.int32), ("logit", np.float32), ("p", np.float32)]))
        self._all_ids = np.arange(self.n_vocab, dtype=np.int32)
        self._cand["id"] = self._all_ids
        self._cand_arr = llama_cpp.llama_token_data_array(
            data=self._cand.ctypes.data_as(llama_cpp.llama_token_data_p),
            size=self.n_vocab, selected=-1, sorted=False)
        self._one = llama_cpp.llama_token_data()
        self._one_arr = llama_cpp.llama_token_data_array(
            data=ctypes.pointer(self._one), size=1, selected=-1, sorted=False)
        self._utf8_masks: dict[tuple[int, int, int], np.ndarray] = {}
        self._grammars: dict[str, Any] = {}  # gbnf -> parsed grammar sampler (cloned per call)

        self._setup_chat(chat_format)
        self.model_sha256 = file_sha256(self.path, default_cache_path().parent /
                                        "model-hashes.json")
        self.fingerprint = self._fingerprint()

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

    # -- chat template ---------------------------------------------------------------
    def _setup_chat(self, chat_format: str | None) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llm = self._llm
        eos_id, bos_id = llm.token_eos(), llm.token_bos()
        eos = llm._model.token_get_text(eos_id) if eos_id != -1 else ""
        bos = llm._model.token_get_text(bos_id) if bos_id != -1 else ""
        self.chat_format = chat_format
        if chat_format is None:
            template = self.meta.get("chat_template")
            if not template:
                raise ModelError(f"{self.path}: the model has no chat template; pass a chat "
                                 "format such as 'chatml' or 'llama-3'")
            self._template_text = template
            self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos,
                                                  bos_token=bos, add_generation_prompt=True)
        else:
            self._template_text = chat_format
            self._formatter = _named_formatter(chat_format)
        self._fold_system = False
        probe = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
        try:
            self._render(probe)
        except Exception:
            # Some templates refuse a system turn (Gemma: "System role not supported",
            # older Mistral: roles must alternate); the usual remedy is to put the system
            # text at the top of the first user turn.
            self._fold_system = True
            try:
                self._render(probe)
            except Exception as e:  # jinja errors, raise_exception() in the template
                raise ModelError(f"{self.path}: the chat template cannot render a "
                                 f"system+user conversation ({type(e).__name__}: {e})"
                                 ) from None

    def _render(self, messages: Sequence[Message]) -> str:
        msgs = [dict(m) for m in messages]
        roles = [m.get("role") for m in msgs[:2]]
        if self._fold_system and roles == ["system", "user"]:
            merged = msgs[0]["content"] + "\n\n" + msgs[1]["content"]
            msgs = [{"role": "user", "content": merged}] + msgs[2:]
        # enable_thinking=False: templates with a thinking mode (Qwen3) then open an
        # empty think block, which is the right prompt for grammar-forced JSON.
        resp = self._formatter(messages=msgs, enable_thinking=False)
        return resp.prompt

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        """Token ids of the chat prompt for ``messages`` (generation prompt included)."""
        text = self._render(messages)
        toks = self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        bos = self._llm.token_bos()
        if len(toks) >= 2 and toks[0] == bos and toks[1] == bos:  # template wrote BOS too
            toks = toks[1:]
        return toks

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` as plain content (no special tokens, no BOS)."""
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    # -- low level ------------------------------------------------------------------------
    def _piece(self, tok: int) -> bytes:
        p = self._pieces.get(tok)
        if p is None:
            buf = ctypes.create_string_buffer(64)
            n = self._lc.llama_token_to_piece(self._vocab, tok, buf, 64, 0, False)
            if n < 0:
                buf = ctypes.create_string_buffer(-n)
                n = self._lc.llama_token_to_piece(self._vocab, tok, buf, -n, 0, False)
            p = buf.raw[:max(n, 0)]
            self._pieces[tok] = p
        return p

    def _logits(self) -> np.ndarray:
        ptr = self._lc.llama_get_logits_ith(self._llm.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))

    def _eval_to(self, tokens: Sequence[int]) -> int:
        """Make the KV cache hold ``tokens`` with logits for the last; return reused count.

        The longest common prefix with what is cached is kept (at most all but
        the last token, whose logits are needed); the rest is evaluated.
        """
        llm = self._llm
        n = llm.n_tokens
        m = min(n, len(tokens) - 1)
        lcp = 0
        if m > 0:
            diff = np.flatnonzero(llm.input_ids[:m] != np.asarray(tokens[:m], dtype=np.intc))
            lcp = int(diff[0]) if diff.size else m
        if lcp < n and not llm._ctx.kv_cache_seq_rm(-1, lcp, -1):
            llm.reset()  # recurrent models cannot drop a suffix
            lcp = 0
        llm.n_tokens = lcp
        try:
            llm.eval(list(tokens[lcp:]))
        except RuntimeError as e:
            llm.reset()
            raise JudgeCallError(f"llama.cpp failed to evaluate the prompt ({e})") from None
        return lcp

    def _grammar(self, gbnf: str):
        base = self._grammars.get(gbnf)
        if base is None:
            base = self._lc.llama_sampler_init_grammar(self._vocab, gbnf.encode("utf-8"),
                                                       b"root")
            if not base:
                raise ValueError("llama.cpp rejected the grammar:\n" + gbnf[:2000])
            self._grammars[gbnf] = base
        # Cloning a parsed grammar skips re-parsing the GBNF on every call.
        return self._lc.llama_sampler_clone(base)

    def _accepts(self, grammar, tok: int, logit: float) -> bool:
        self._one.id = tok
        self._one.logit = logit
        self._one.p = 0.0
        self._one_arr.size = 1
        self._one_arr.selected = -1
        self._lc.llama_sampler_apply(grammar, ctypes.byref(self._one_arr))
        return self._one.logit != float("-inf")

    def _constrain(self, grammar, logits: np.ndarray) -> np.ndarray:
        """Logits with every token the grammar rejects set to -inf (a full pass)."""
        self._cand["logit"] = logits
        return self._apply(grammar, self.n_vocab)

    def _apply(self, grammar, n: int) -> np.ndarray:
        self._cand_arr.size = n
        self._cand_arr.selected = -1
        self._cand_arr.sorted = False
        self._lc.llama_sampler_apply(grammar, ctypes.byref(self._cand_arr))
        return self._cand["logit"][:n]

    def _constrain_by_first_byte(self, grammar, logits: np.ndarray) -> np.ndarray:
        """Same result as ``_constrain``, usually far cheaper.

        The grammar reads a token byte by byte, so a token can only be
        allowed if its first byte, as a one-byte token, is (a UTF-8 lead byte
        is accepted as a partial character when some completion could
        match). Asking about the 256 one-byte tokens first leaves, at a
        structural position such as the inside of a key, a few hundred
        candidates instead of the whole vocabulary. A first byte shared by
        very many tokens (the space that starts half of a BPE vocabulary) is
        split the same way on the second byte, on a copy of the grammar that
        has taken the first.
        """
        index = self._byte_index
        parts = [index.eog_ids, index.no_byte_token]
        for b in index.byte_values[self._allowed_bytes(grammar)]:
            b = int(b)
            split = index.by_second.get(b)
            if split is None:
                parts.append(index.groups[b])
                continue
            after = self._lc.llama_sampler_clone(grammar)
            try:
                self._lc.llama_sampler_accept(after, int(index.byte_token[b]))
                seconds = index.byte_values[self._allowed_bytes(after)]
            finally:
                self._lc.llama_sampler_free(after)
            parts.append(index.short[b])
            parts += [split[int(b2)] for b2 in seconds if int(b2) in split]
            parts.append(index.second_orphans[b])
        ids = np.concatenate(parts)
        n = ids.size
        self._cand["id"][:n] = ids
        self._cand["logit"][:n] = logits[ids]
        kept = self._apply(grammar, n)
        masked = np.full(self.n_vocab, -np.inf, dtype=np.float32)
        masked[ids] = kept
        self._cand["id"] = self._all_ids  # restore the identity layout for full passes
        return masked

    def _allowed_bytes(self, grammar) -> np.ndarray:
        """Mask over ``_byte_index.byte_values``: which one-byte tokens the grammar takes now."""
        index = self._byte_index
        k = len(index.byte_tokens)
        self._cand["id"][:k] = index.byte_tokens
        self._cand["logit"][:k] = 0.0
        ok = np.isfinite(self._apply(grammar, k))
        return ok

    @functools.cached_property
    def _byte_index(self) -> "_ByteIndex":
        return _ByteIndex.build([self._piece(i) for i in range(self.n_vocab)], self._eog)

    def _pick(self, logits: np.ndarray, grammar, temp: float, rng, utf8: "_Utf8"
              ) -> tuple[int, bool]:
        """Next token, and whether its first choice was refused (the slow path).

        Besides the grammar, the token's bytes must keep the output valid
        UTF-8 (llama.cpp's grammar decoder accepts overlong sequences and
        encoded surrogates, which strict decoding rejects) and hold no NUL
        (the grammar stops reading a token at a NUL, so the rest of such a
        token would bypass it).

        In "check-first" mode a refused first choice is followed, before any
        filtering of the vocabulary, by the next best few (greedy: the
        best valid token among the top 64 is the best valid token overall)
        or by fresh draws from the same distribution (sampling: drawing until
        a valid token comes up is exact rejection sampling).
        """
        cum = None
        if temp <= 0:
            tok = int(np.argmax(logits))
        else:
            z = logits.astype(np.float64) / temp
            p = np.exp(z - z.max())
            cum = np.cumsum(p)
            tok = self._draw(cum, rng)
        check_first = grammar is None or self.grammar_mode == "check-first"
        if check_first and self._valid(grammar, tok, logits, utf8):
            return tok, False
        if check_first:
            if temp <= 0:
                found = self._best_of_top(grammar, logits, utf8)
            else:
                found = next((t for t in (self._draw(cum, rng) for _ in range(16))
                              if self._valid(grammar, t, logits, utf8)), None)
            if found is not None:
                return found, True
        if grammar is None:
            masked = logits.copy()
        elif self.grammar_mode == "check-first":
            masked = self._constrain_by_first_byte(grammar, logits)
        else:
            masked = self._constrain(grammar, logits)
        if temp > 0:
            p = np.where(np.isneginf(masked), 0.0, p)
        for attempt in range(17):
            if attempt == 16:
                # Many admitted tokens break UTF-8 here: filter the whole vocabulary once.
                bad = ~(self._utf8_mask(utf8.state) | self._eog)
                masked[bad] = float("-inf")
                if temp > 0:
                    p[bad] = 0.0
            if temp <= 0:
                tok = int(np.argmax(masked))
                if masked[tok] == float("-inf"):
                    break
            else:
                total = p.sum()
                if total <= 0:
                    break
                tok = min(int(np.searchsorted(np.cumsum(p), rng.random() * total,
                                              side="right")), self.n_vocab - 1)
            if self._eog[tok] or utf8.ok(self._piece(tok)):
                return tok, True
            masked[tok] = float("-inf")
            if temp > 0:
                p[tok] = 0.0
        raise _invalid_output("the grammar admits no next token")

    def _draw(self, cum: np.ndarray, rng) -> int:
        tok = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
        return min(tok, self.n_vocab - 1)

    def _valid(self, grammar, tok: int, logits: np.ndarray, utf8: "_Utf8") -> bool:
        if grammar is not None and not self._accepts(grammar, tok, float(logits[tok])):
            return False
        return bool(self._eog[tok]) or utf8.ok(self._piece(tok))

    def _best_of_top(self, grammar, logits: np.ndarray, utf8: "_Utf8", k: int = 64
                     ) -> int | None:
        """The best valid token if one is among the ``k`` highest logits, else None."""
        k = min(k, self.n_vocab)
        top = np.argpartition(logits, -k)[-k:]
        top = top[np.argsort(-logits[top], kind="stable")]
        if grammar is not None:
            self._cand["id"][:k] = top
            self._cand["logit"][:k] = logits[top]
            kept = self._apply(grammar, k).copy()
            self._cand["id"][:k] = self._all_ids[:k]
        else:
            kept = logits[top]
        for tok, logit in zip(top.tolist(), kept.tolist()):
            if logit != float("-inf") and (self._eog[tok] or utf8.ok(self._piece(tok))):
                return tok
        return None

    def _utf8_mask(self, state: tuple[int, int, int]) -> np.ndarray:
        """Tokens whose bytes keep the output a valid UTF-8 prefix (memoised per state)."""
        mask = self._utf8_masks.get(state)
        if mask is None:
            mask = np.array([(pc := self._piece(i)) != b"" and b"\x00" not in pc
                             and _utf8_step(state, pc) is not None
                             for i in range(self.n_vocab)])
            self._utf8_masks[state] = mask
        return mask

    def generate(self, prompt: Sequence[int], gbnf: str | None, max_tokens: int, *,
                 temperature: float = 0.0, seed: int = 0) -> Generation:
        """Generate after ``prompt`` under grammar ``gbnf`` (None: unconstrained)."""
        with self._lock:
            t0 = time.perf_counter()
            reused = self._eval_to(prompt)
            grammar = self._grammar(gbnf) if gbnf is not None else None
            rng = np.random.default_rng(seed) if temperature > 0 else None
            out: list[int] = []
            pieces: list[bytes] = []
            stop = "length"
            rejections = 0
            utf8 = _Utf8()
            try:
                for i in range(max_tokens):
                    logits = self._logits()
                    if self._bias_ids.size:
                        logits = logits.copy()
                        logits[self._bias_ids] += self._bias_vals
                    tok, rejected = self._pick(logits, grammar, temperature, rng, utf8)
                    rejections += rejected
                    if self._eog[tok]:
                        stop = "eos"
                        break
                    if grammar is not None:
                        self._lc.llama_sampler_accept(grammar, tok)
                    out.append(tok)
                    pieces.append(self._piece(tok))
                    utf8.push(pieces[-1])
                    if i + 1 < max_tokens:
                        try:
                            self._llm.eval([tok])
                        except RuntimeError as e:
                            self._llm.reset()
                            raise JudgeCallError(f"llama.cpp failed during generation ({e})"
                                                 ) from None
            finally:
                if grammar is not None:
                    self._lc.llama_sampler_free(grammar)
            raw = b"".join(pieces)
            text = raw.decode("utf-8", errors="replace")
            return Generation(text=text, raw=raw, tokens=out, pieces=pieces, stop=stop,
                              prompt_tokens=len(prompt), reused_tokens=reused,
                              seconds=time.perf_counter() - t0, grammar_rejections=rejections)

    # -- the Judge protocol ------------------------------------------------------------
    def _sampling(self, request: JudgeRequest) -> tuple[float, int]:
        temp = request.temperature if request.temperature > 0 else self.temperature
        seed = (self.seed * 1_000_003 + int(request.seed)) & 0xFFFFFFFF
        return temp, seed

    def ask(self, request: JudgeRequest) -> JudgeReply:
        with self._lock:
            return self._ask(request)

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
            if gen.stop == "eos" or _complete_json(gen.raw):
                break
            if attempt == 0 and budget < room:
                budget = min(2 * budget, room)
                continue
            extra = (f" (the context of {self.n_ctx} tokens is full)" if budget >= room else "")
            raise truncation_error(len(gen.tokens), extra)
        assert gen is not None
        output = _parse(gen.raw, schema)
        probs = None
        if request.prob_field:
            probs, p_usage = self._verdict_probs(prompt, gen, request.prob_field, values or [])
            usage.prompt_tokens += p_usage.prompt_tokens
            usage.reused_tokens += p_usage.reused_tokens
        usage.seconds = time.perf_counter() - t0
        return JudgeReply(output=output, raw=gen.text, usage=usage, probs=probs)

    # -- verdict probabilities ----------------------------------------------------------------
    def _verdict_probs(self, prompt: list[int], gen: Generation, field_name: str,
                       values: list[Any]) -> tuple[list[dict[str, float]], Usage]:
        """P(value) for each occurrence of ``"field":`` in the output.

        For each occurrence the model is placed right where the value starts
        (prompt + output up to there; the KV cache already holds it, so this
        is a one-token evaluation) and the last-position logits are
        softmaxed over the first token of each allowed value. The order of
        the result is the order in the output.
        """
        texts = [json.dumps(v, ensure_ascii=False) for v in values]
        common = os.path.commonprefix(texts)
        firsts = []
        for t in texts:
            ids = self._llm.tokenize(t[len(common):].encode("utf-8"), add_bos=False,
                                     special=False)
            firsts.append(ids[0])
        if len(set(firsts)) != len(firsts):
            raise ValueError(f"allowed values of {field_name!r} share a first token; "
                             "verdict probabilities need distinct first tokens")
        raw: bytes = gen.raw
        text = raw.decode("utf-8")
        ends = np.cumsum([0] + [len(p) for p in gen.pieces])  # byte offset of token k
        usage = Usage()
        out: list[dict[str, float]] = []
        # Last occurrence first: each step only trims the KV cache back and
        # re-runs one token, instead of re-evaluating the output in between.
        matches = list(re.finditer(r'"' + re.escape(field_name) + r'"\s*:\s*', text))
        for m in reversed(matches):
            start = m.end()
            if not text.startswith(common, start):
                continue
            off = len(text[: start + len(common)].encode("utf-8"))
            k = int(np.searchsorted(ends, off, side="right") - 1)  # token holding byte `off`
            prefix = list(prompt) + gen.tokens[:k]
            rest = raw[ends[k]:off]
            if rest:
                prefix += self._llm.tokenize(rest, add_bos=False, special=False)
            reused = self._eval_to(prefix)
            usage.prompt_tokens += len(prefix)
            usage.reused_tokens += reused
            logits = self._logits()[firsts].astype(np.float64)
            e = np.exp(logits - logits.max())
            p = e / e.sum()
            out.append({str(v): float(x) for v, x in zip(values, p)})
        out.reverse()
        return out, usage

    def close(self) -> None:
        with self._lock:
            for g in self._grammars.values():
                self._lc.llama_sampler_free(g)
            self._grammars.clear()
            self._llm.close()

    def __repr__(self) -> str:
        return f"LlamaJudge({str(self.path)!r}, n_ctx={self.n_ctx})"


#: A first-byte group larger than this is split again on the second byte.
_SPLIT_GROUP = 2048


@dataclass
class _ByteIndex:
    """The vocabulary grouped by first byte (and, for big groups, second byte)."""

    byte_tokens: np.ndarray  # token ids whose piece is exactly one byte
    byte_values: np.ndarray  # ... and that byte
    byte_token: dict[int, int]  # byte -> its one-byte token
    groups: dict[int, np.ndarray]  # byte -> ids of tokens whose piece starts with it
    no_byte_token: np.ndarray  # ids starting with a byte that has no one-byte token
    eog_ids: np.ndarray
    by_second: dict[int, dict[int, np.ndarray]]  # big groups: second byte -> ids
    short: dict[int, np.ndarray]  # big groups: members one byte long
    second_orphans: dict[int, np.ndarray]  # big groups: second byte has no one-byte token

    @classmethod
    def build(cls, pieces: list[bytes], eog: np.ndarray) -> "_ByteIndex":
        first = np.array([p[0] if p else 256 for p in pieces], dtype=np.int32)
        second = np.array([p[1] if len(p) > 1 else 256 for p in pieces], dtype=np.int32)
        single: dict[int, int] = {}
        for i, p in enumerate(pieces):
            if len(p) == 1 and not eog[i]:
                single.setdefault(p[0], i)
        known = np.array(sorted(single), dtype=np.int32)
        groups = {b: np.flatnonzero((first == b) & ~eog).astype(np.int32) for b in single}
        by_second, short, orphans2 = {}, {}, {}
        for b, ids in groups.items():
            if ids.size <= _SPLIT_GROUP:
                continue
            sec = second[ids]
            by_second[b] = {int(b2): ids[sec == b2] for b2 in np.unique(sec) if b2 in single}
            short[b] = ids[sec == 256]
            orphans2[b] = ids[(sec != 256) & ~np.isin(sec, known)]
        orphans = np.flatnonzero(~np.isin(first, np.append(known, 256)) & ~eog)
        return cls(byte_tokens=np.array(list(single.values()), dtype=np.int32),
                   byte_values=np.array(list(single), dtype=np.int32), byte_token=single,
                   groups=groups, no_byte_token=orphans.astype(np.int32),
                   eog_ids=np.flatnonzero(eog).astype(np.int32), by_second=by_second,
                   short=short, second_orphans=orphans2)


def _utf8_step(state: tuple[int, int, int], data: bytes) -> tuple[int, int, int] | None:
    """Advance a strict UTF-8 prefix check over ``data``; None when invalid.

    ``state`` is (continuation bytes still due, low and high bound of the next
    one). Written out because Python's incremental decoder accepts a prefix
    such as ``ED B0`` (a surrogate) and only fails once the character is
    complete, which is too late to steer generation.
    """
    need, lo, hi = state
    for b in data:
        if need:
            if not lo <= b <= hi:
                return None
            need, lo, hi = need - 1, 0x80, 0xBF
        elif b < 0x80:
            continue
        elif 0xC2 <= b <= 0xDF:
            need, lo, hi = 1, 0x80, 0xBF
        elif b == 0xE0:
            need, lo, hi = 2, 0xA0, 0xBF
        elif b == 0xED:
            need, lo, hi = 2, 0x80, 0x9F
        elif 0xE1 <= b <= 0xEF:
            need, lo, hi = 2, 0x80, 0xBF
        elif b == 0xF0:
            need, lo, hi = 3, 0x90, 0xBF
        elif b == 0xF4:
            need, lo, hi = 3, 0x80, 0x8F
        elif 0xF1 <= b <= 0xF3:
            need, lo, hi = 3, 0x80, 0xBF
        else:
            return None
    return need, lo, hi


_UTF8_START = (0, 0x80, 0xBF)


class _Utf8:
    """Strict UTF-8 prefix check of the output so far."""

    def __init__(self) -> None:
        self.state = _UTF8_START

    def ok(self, piece: bytes) -> bool:
        # Empty: a control token (<|im_start|>...), which the grammar would read as
        # its text while it prints nothing. NUL never belongs in JSON text, and the
        # grammar reads a piece as a C string: whatever follows a NUL escapes it.
        return (piece != b"" and b"\x00" not in piece
                and _utf8_step(self.state, piece) is not None)

    def push(self, piece: bytes) -> None:
        new = _utf8_step(self.state, piece)
        assert new is not None
        self.state = new


def _complete_json(raw: bytes) -> bool:
    try:
        json.loads(raw.decode("utf-8"))
        return True
    except (UnicodeDecodeError, ValueError):
        return False


def _parse(raw: bytes, schema: type[BaseModel]) -> BaseModel:
    """Strict decode, strict JSON, strict schema: any failure is the sample's error."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _invalid_output(f"judge output is not valid UTF-8 ({e.reason} at byte "
                              f"{e.start})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise _invalid_output(f"judge output is not valid JSON ({e.msg} at char {e.pos}): "
                              f"{text[:200]!r}") from None
    try:
        return schema.model_validate(obj)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first.get("loc", ()))
        raise _invalid_output(f"judge output does not match {schema.__name__}: {loc}: "
                              f"{first.get('msg')}") from None
