"""Chat templates: turning a step's messages into the judge's prompt tokens.

The GGUF's embedded Jinja template is used unless a named llama-cpp-python
format ("chatml", "llama-3", ...) is asked for. Templates differ in what they
accept (some refuse a system turn), so the set-up probes the template once
and adapts, and a template that cannot render a judge conversation fails the
load rather than the first sample.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any, Sequence

from localeval.errors import ModelError
from localeval.judge.base import Message

__all__ = ["ChatTemplate", "compile_template", "named_formatter"]


def named_formatter(name: str):
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


class ChatTemplate:
    """Mixin for ``LlamaJudge``: the chat template and prompt tokenisation.

    The host sets ``path``, ``meta`` (GGUF metadata) and ``_llm`` (the loaded
    ``llama_cpp.Llama``) before calling ``_setup_chat``.
    """

    path: Path
    meta: dict[str, Any]
    _llm: Any
    chat_format: str | None
    _template_text: str

    def _setup_chat(self, chat_format: str | None) -> None:
        llm = self._llm
        eos_id, bos_id = llm.token_eos(), llm.token_bos()
        eos = llm._model.token_get_text(eos_id) if eos_id != -1 else ""
        bos = llm._model.token_get_text(bos_id) if bos_id != -1 else ""
        self.chat_format = chat_format
        if chat_format is None:
            template = self.meta.get("chat_template")
            if not template or not isinstance(template, str):
                raise ModelError(f"{self.path}: the model has no chat template; pass a chat "
                                 "format such as 'chatml' or 'llama-3'")
            self._template_text = template
            self._formatter = compile_template(self.path, template, eos_token=eos,
                                               bos_token=bos, add_generation_prompt=True)
        else:
            self._template_text = chat_format
            self._formatter = named_formatter(chat_format)
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

    def _header_overrides(self, n_ctx: int) -> dict[str, Any] | None:
        """Check what llama-cpp-python takes from the GGUF header at load; its ``kv_overrides``.

        Called while building ``llama_cpp.Llama``'s arguments, i.e. before it
        reads the file. ``Llama()`` compiles the embedded chat template itself,
        so a template that does not compile is a ModelError here (a
        ``--chat-format`` cannot route around it). A context length that
        ``read_gguf_metadata`` found broken (``context_note``: 2^31 wraps to a
        negative int32, 2^28 costs 1 GiB per tokenize call in llama-cpp-python)
        is overridden with the context the judge runs with, and the user is told.
        """
        template = self.meta.get("chat_template")
        if isinstance(template, str) and template:
            compile_template(self.path, template, eos_token="", bos_token="")
        note = self.meta.get("context_note")
        arch = self.meta.get("architecture")
        if not note or not isinstance(arch, str):
            return None
        print(f"localeval: warning: {note}; using a context of {n_ctx} tokens",
              file=sys.stderr)
        return {f"{arch}.context_length": int(n_ctx)}

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
