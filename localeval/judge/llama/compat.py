"""The fence around llama-cpp-python: every private or low-level use of it is here.

The judge runs its own token loop, batch engine and grammar filter on top of
``llama_cpp.Llama``, which needs what llama-cpp-python does not promise to
keep: the C functions of ``llama_cpp.llama_cpp`` (``llama_decode``,
``llama_batch_init``, ``llama_memory_seq_*``, the grammar sampler, ...),
ctypes token arrays, ``Llama._ctx`` / ``Llama._model``, its default-params
functions and its chat-format registry. These change between releases
without notice, and a mismatch shows as a segfault or wrong logits, not as an
error. So they are used only here, and ``check_version`` refuses a
llama-cpp-python outside the range this module was written and tested for
(``supported``; as pip reads the range: a pre-release is outside it), with one
``ModelError`` saying what to install (exit 3 through the CLI).
``LOCALEVAL_ALLOW_LLAMA_CPP_VERSION=1`` turns the refusal into a warning, for
trying a new release. Everything else in ``judge/llama`` calls the functions
and classes below, and so do ``judge/grammar.py`` (the JSON-schema converter)
and ``testing/tiny_gguf.py`` (the quantiser): tests/unit/test_architecture.py
checks that no other module of the package imports ``llama_cpp``, and that no
other module of ``judge/llama`` calls its ``llama_*`` functions.
"""

from __future__ import annotations

import ctypes
import inspect
import threading
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from localeval.config import env_flag
from localeval.errors import LocalevalWarning, ModelError
from localeval.judge.llama.supported import ALLOW_ENV, SUPPORTED, supported_text, version_supported

__all__ = ["SUPPORTED", "ALLOW_ENV", "Batch", "Candidates", "Grammar", "Memory", "Vocab",
           "check_version", "compile_template", "decode_rows", "gpu_offload_supported",
           "has_amx", "json_schema_converter", "kv_truncate", "last_logits", "load_llama",
           "named_formatter", "quantize_q8_0", "row_logits", "supported_text", "token_text",
           "is_recurrent", "version_supported"]

_checked: set[str] = set()


def check_version(version: str | None = None) -> None:
    """ModelError unless llama-cpp-python ``version`` (default: the installed one) is supported."""
    if version is None:
        import llama_cpp

        version = str(getattr(llama_cpp, "__version__", "unknown"))
    if version in _checked:
        return
    if version_supported(version):
        _checked.add(version)
        return
    msg = (f"llama-cpp-python {version} is installed; the in-process judge was written for "
           f"llama-cpp-python{supported_text()} and uses parts of it that change between "
           f"releases. Install a supported one (pip install 'llama-cpp-python{supported_text()}'), "
           f"or set {ALLOW_ENV}=1 to try this one anyway")
    if env_flag(ALLOW_ENV, False):
        warnings.warn(msg, LocalevalWarning, stacklevel=2)
        _checked.add(version)
        return
    raise ModelError(msg)


# -- for judge/grammar.py and testing/tiny_gguf.py ----------------------------------------
def json_schema_converter() -> tuple[Any, Any, str]:
    """(``SchemaConverter``, ``BuiltinRule``, the stock string-character rule): llama-cpp-python's
    pure-Python JSON-schema-to-GBNF converter, which the HTTP judge uses too (no version check)."""
    from llama_cpp.llama_grammar import PRIMITIVE_RULES, BuiltinRule, SchemaConverter

    return SchemaConverter, BuiltinRule, PRIMITIVE_RULES["char"].content


def quantize_q8_0(src: Path, dst: Path, threads: int) -> None:
    """Quantise GGUF ``src`` to Q8_0 at ``dst`` with llama.cpp, quietly; RuntimeError on failure."""
    import llama_cpp
    from llama_cpp._logger import set_verbose

    set_verbose(False)  # llama.cpp logs every tensor it converts otherwise
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype, params.nthread = llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0, threads
    if llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params)):
        raise RuntimeError("llama_model_quantize failed")


# -- loading -------------------------------------------------------------------------
def gpu_offload_supported() -> bool:
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload())


def has_amx() -> bool:
    """Whether llama.cpp reports AMX (INT8), which decides ``load_llama``'s workaround."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    return "AMX_INT8 = 1" in info


#: Held while the default model params are patched, so concurrent loads see the real ones.
_load_lock = threading.Lock()


def load_llama(extra_buffers: bool, context: dict[str, Any] | None = None, **kwargs: Any):
    """``llama_cpp.Llama(**kwargs)``, optionally without CPU extra buffer types.

    Workaround, not a preference: on CPUs with AMX, llama.cpp (as vendored by
    llama-cpp-python 0.3.36) puts quantised weights in its AMX buffer type
    and ``ggml_backend_amx_mul_mat`` segfaults on the first decode (seen on
    this project's build machines with Q8_0). ``llama_model_params`` has a
    ``use_extra_bufts`` switch that ``Llama`` does not expose, so the default
    params are adjusted for the duration of this one constructor call.
    ``context`` sets ``llama_context_params`` fields ``Llama`` does not expose
    either (``n_seq_max``, ``kv_unified`` for the batched judge), the same way.
    """
    check_version()
    import llama_cpp
    import llama_cpp.llama_cpp as lc

    if extra_buffers and not context:
        return llama_cpp.Llama(**kwargs)
    with _load_lock:
        original = lc.llama_model_default_params
        original_ctx = lc.llama_context_default_params

        def without_extra_buffers():
            params = original()
            params.use_extra_bufts = bool(extra_buffers)
            return params

        def with_context():
            params = original_ctx()
            for k, v in (context or {}).items():
                setattr(params, k, v)
            return params

        lc.llama_model_default_params = without_extra_buffers
        lc.llama_context_default_params = with_context
        try:
            return llama_cpp.Llama(**kwargs)
        finally:
            lc.llama_model_default_params = original
            lc.llama_context_default_params = original_ctx


# -- chat formats ----------------------------------------------------------------------
def named_formatter(name: str):
    """The prompt formatter behind one of llama-cpp-python's named chat formats.

    The registry keeps its handlers private and closes each over its formatter.
    """
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


def compile_template(path: Path, template: str, **kw: Any):
    """llama-cpp-python's formatter for ``template`` (compiling it), or one ModelError.

    A template that does not compile (jinja2's TemplateSyntaxError,
    TemplateAssertionError) is treated like one that fails to render: exit 3.
    """
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    try:
        return Jinja2ChatFormatter(template=template, **kw)
    except Exception as e:  # any jinja2 error; the template is the file's, not ours
        raise ModelError(f"{path}: the GGUF's chat template cannot be compiled "
                         f"({type(e).__name__}: {e}); llama-cpp-python compiles it when "
                         "loading, so the template in the file must be fixed") from None


def token_text(llm: Any, tok: int) -> str:
    """The text of special token ``tok`` (BOS/EOS for the template), "" for -1."""
    return llm._model.token_get_text(tok) if tok != -1 else ""


# -- the vocabulary ----------------------------------------------------------------------
class Vocab:
    """Token pieces and end-of-generation flags, read through the C vocabulary."""

    def __init__(self, llm: Any) -> None:
        import llama_cpp as lc

        self._lc = lc
        self._vocab = lc.llama_model_get_vocab(llm.model)
        self.n_vocab = int(llm.n_vocab())

    def is_eog(self, tok: int) -> bool:
        return bool(self._lc.llama_vocab_is_eog(self._vocab, tok))

    def piece(self, tok: int) -> bytes:
        """The bytes token ``tok`` prints (special tokens print nothing)."""
        buf = ctypes.create_string_buffer(64)
        n = self._lc.llama_token_to_piece(self._vocab, tok, buf, 64, 0, False)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = self._lc.llama_token_to_piece(self._vocab, tok, buf, -n, 0, False)
        return buf.raw[:max(n, 0)]


# -- the grammar sampler -------------------------------------------------------------------
class Grammar:
    """llama.cpp's grammar sampler: parse, clone, advance, free. Handles are C pointers."""

    def __init__(self, vocab: Vocab) -> None:
        self._lc = vocab._lc
        self._vocab = vocab._vocab

    def parse(self, gbnf: str) -> Any:
        """A parsed grammar sampler, or ValueError when llama.cpp rejects the GBNF."""
        g = self._lc.llama_sampler_init_grammar(self._vocab, gbnf.encode("utf-8"), b"root")
        if not g:
            raise ValueError("llama.cpp rejected the grammar:\n" + gbnf[:2000])
        return g

    def clone(self, g: Any) -> Any:
        return self._lc.llama_sampler_clone(g)

    def accept(self, g: Any, tok: int) -> None:
        """Advance grammar ``g`` past token ``tok`` (which it must allow)."""
        self._lc.llama_sampler_accept(g, tok)

    def free(self, g: Any) -> None:
        self._lc.llama_sampler_free(g)


class Candidates:
    """One reusable ``llama_token_data_array`` over the vocabulary, and one of one token.

    ``rows`` is a numpy view of the C array (``id``, ``logit``, ``p``), so no
    grammar pass allocates a vocabulary-sized ctypes array.
    """

    def __init__(self, vocab: Vocab) -> None:
        lc = self._lc = vocab._lc
        # llama_token_data is {int32 id; float logit; float p}, packed to 12 bytes.
        self.rows = np.zeros(vocab.n_vocab, dtype=np.dtype(
            [("id", np.int32), ("logit", np.float32), ("p", np.float32)]))
        self._arr = lc.llama_token_data_array(
            data=self.rows.ctypes.data_as(lc.llama_token_data_p),
            size=vocab.n_vocab, selected=-1, sorted=False)
        self._one = lc.llama_token_data()
        self._one_arr = lc.llama_token_data_array(
            data=ctypes.pointer(self._one), size=1, selected=-1, sorted=False)

    def apply(self, g: Any, n: int) -> np.ndarray:
        """Run grammar ``g`` over the first ``n`` rows; their logits, rejected at -inf."""
        self._arr.size = n
        self._arr.selected = -1
        self._arr.sorted = False
        self._lc.llama_sampler_apply(g, ctypes.byref(self._arr))
        return self.rows["logit"][:n]

    def accepts(self, g: Any, tok: int, logit: float) -> bool:
        """Whether grammar ``g`` allows ``tok`` now (nothing is committed)."""
        self._one.id = tok
        self._one.logit = logit
        self._one.p = 0.0
        self._one_arr.size = 1
        self._one_arr.selected = -1
        self._lc.llama_sampler_apply(g, ctypes.byref(self._one_arr))
        return self._one.logit != float("-inf")


# -- the sequential context (``Llama``'s own bookkeeping) ------------------------------------
def last_logits(llm: Any, n_vocab: int) -> np.ndarray:
    """A view of the logits of the last evaluated token (valid until the next decode)."""
    import llama_cpp as lc

    return np.ctypeslib.as_array(lc.llama_get_logits_ith(llm.ctx, -1), shape=(n_vocab,))


def kv_truncate(llm: Any, pos: int) -> bool:
    """Drop the KV cache of ``llm`` from position ``pos`` on; False when it cannot (recurrent)."""
    if pos < llm.n_tokens and not llm._ctx.kv_cache_seq_rm(-1, pos, -1):
        return False
    llm.n_tokens = min(pos, llm.n_tokens)
    return True


def decode_rows(llm: Any, tokens: Sequence[int], n_vocab: int) -> np.ndarray:
    """Evaluate ``tokens`` after ``llm``'s cache in ONE ``llama_decode``; logits of every row.

    ``Llama.eval`` keeps only the last row's logits (``logits_all=False``):
    checking k drafted tokens needs all k. Returns a (k, n_vocab) copy and
    records the tokens in ``Llama``'s own bookkeeping as ``eval`` does.
    """
    import llama_cpp as lc

    k, n_past = len(tokens), llm.n_tokens
    batch = lc.llama_batch_init(k, 0, 1)
    try:
        for i, tok in enumerate(tokens):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = tok, n_past + i, 1
            batch.seq_id[i][0], batch.logits[i] = 0, 1
        batch.n_tokens = k
        ret = lc.llama_decode(llm.ctx, batch)
        if ret != 0:
            raise RuntimeError(f"llama_decode returned {ret}")
        out = np.stack([row_logits(llm.ctx, i, n_vocab) for i in range(k)]).copy()
    finally:
        lc.llama_batch_free(batch)
    llm.input_ids[n_past:n_past + k] = tokens
    llm.n_tokens = n_past + k
    return out


def cached_tokens(llm: Any) -> np.ndarray:
    """The tokens ``Llama`` holds in its KV cache, in order."""
    return llm.input_ids[: llm.n_tokens]


# -- the batched context ------------------------------------------------------------------
def row_logits(ctx: Any, row: int, n_vocab: int) -> np.ndarray:
    """A view of the logits of batch row ``row`` of the last decode of ``ctx``."""
    import llama_cpp as lc

    return np.ctypeslib.as_array(lc.llama_get_logits_ith(ctx, row), shape=(n_vocab,))


def is_recurrent(llm: Any) -> bool:
    """Whether the model keeps a recurrent state, which cannot drop its last tokens."""
    import llama_cpp as lc

    return bool(lc.llama_model_is_recurrent(llm.model) or lc.llama_model_is_hybrid(llm.model))


class Memory:
    """The KV memory of a context made with several sequences (``n_seq_max``)."""

    def __init__(self, llm: Any) -> None:
        import llama_cpp as lc

        self._lc = lc
        self.ctx = llm.ctx
        self._mem = lc.llama_get_memory(self.ctx)

    def seq_rm(self, seq_id: int, p0: int = -1, p1: int = -1) -> bool:
        """Remove positions [p0, p1) of ``seq_id`` (-1: open end); False when it cannot."""
        return bool(self._lc.llama_memory_seq_rm(self._mem, seq_id, p0, p1))

    def seq_cp(self, src: int, dst: int) -> None:
        """Copy the whole KV stream of ``src`` to ``dst``."""
        self._lc.llama_memory_seq_cp(self._mem, src, dst, -1, -1)


class Batch:
    """A ``llama_batch`` of up to ``n`` rows, one sequence id per row, filled row by row."""

    def __init__(self, memory: Memory, n: int) -> None:
        self._lc = memory._lc
        self._ctx = memory.ctx
        self._b = self._lc.llama_batch_init(n, 0, 1)
        self.n = 0

    def add(self, tok: int, pos: int, seq_id: int, logits: bool) -> int:
        """Append one row; its index (for ``logits``)."""
        b, i = self._b, self.n
        b.token[i], b.pos[i], b.n_seq_id[i] = tok, pos, 1
        b.seq_id[i][0], b.logits[i] = seq_id, int(logits)
        self.n += 1
        return i

    def want_logits(self, row: int) -> None:
        self._b.logits[row] = 1

    def decode(self) -> int:
        """``llama_decode`` of the rows added since the last one; its return code."""
        self._b.n_tokens = self.n
        self.n = 0
        return int(self._lc.llama_decode(self._ctx, self._b))

    def logits(self, row: int, n_vocab: int) -> np.ndarray:
        return row_logits(self._ctx, row, n_vocab)

    def free(self) -> None:
        if self._b is not None:
            self._lc.llama_batch_free(self._b)
            self._b = None
