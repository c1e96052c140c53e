"""Chat templates: turning a step's messages into the judge's prompt tokens.

The GGUF's embedded Jinja template is used unless a named llama-cpp-python
format ("chatml", "llama-3", ...) is asked for. Templates differ in what they
accept (some refuse a system turn), so the set-up probes the template once
and adapts, and a template that cannot render a judge conversation fails the
load rather than the first sample.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Sequence

from localeval.errors import LocalevalWarning, ModelError
from localeval.judge.base import Message
from localeval.judge.llama.compat import compile_template, named_formatter
from localeval.judge.llama.model import ModelHandle

__all__ = ["ChatTemplate", "header_overrides"]


def header_overrides(path: Path, meta: dict[str, Any], n_ctx: int) -> dict[str, Any] | None:
    """Check what llama-cpp-python takes from the GGUF header at load; its ``kv_overrides``.

    Called while building ``llama_cpp.Llama``'s arguments, i.e. before it
    reads the file. ``Llama()`` compiles the embedded chat template itself,
    so a template that does not compile is a ModelError here (a
    ``--chat-format`` cannot route around it). A context length that
    ``read_gguf_metadata`` found broken (``context_note``: 2^31 wraps to a
    negative int32, 2^28 costs 1 GiB per tokenize call in llama-cpp-python)
    is overridden with the context the judge runs with, and the user is told.
    """
    template = meta.get("chat_template")
    if isinstance(template, str) and template:
        compile_template(path, template, eos_token="", bos_token="")
    note = meta.get("context_note")
    arch = meta.get("architecture")
    if not note or not isinstance(arch, str):
        return None
    # a warning, not a print: the command line shows it as every LocalevalWarning, escaped
    # (the note quotes the GGUF's file name); a library caller can filter or record it
    warnings.warn(f"{note}; using a context of {n_ctx} tokens", LocalevalWarning, stacklevel=2)
    return {f"{arch}.context_length": int(n_ctx)}


class ChatTemplate:
    """The chat template of one model (``chat_format`` overrides the GGUF's), and tokenisation.

    Built once the model is loaded; a template that cannot render a
    system+user conversation fails here with a ModelError.
    """

    def __init__(self, path: Path, meta: dict[str, Any], model: ModelHandle,
                 chat_format: str | None) -> None:
        self.path = path
        self.model = model
        eos_id, bos_id = model.token_eos(), model.token_bos()
        eos, bos = model.token_text(eos_id), model.token_text(bos_id)
        self.chat_format = chat_format
        if chat_format is None:
            template = meta.get("chat_template")
            if not template or not isinstance(template, str):
                raise ModelError(f"{path}: the model has no chat template; pass a chat "
                                 "format such as 'chatml' or 'llama-3'")
            #: what the fingerprint hashes: the template, or the named format
            self.template_text = template
            self._formatter = compile_template(path, template, eos_token=eos,
                                               bos_token=bos, add_generation_prompt=True)
        else:
            self.template_text = chat_format
            self._formatter = named_formatter(chat_format)
        self._fold_system = False
        probe = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
        try:
            self.render(probe)
        except Exception:
            # Some templates refuse a system turn (Gemma: "System role not supported",
            # older Mistral: roles must alternate); the usual remedy is to put the system
            # text at the top of the first user turn.
            self._fold_system = True
            try:
                self.render(probe)
            except Exception as e:  # jinja errors, raise_exception() in the template
                raise ModelError(f"{path}: the chat template cannot render a "
                                 f"system+user conversation ({type(e).__name__}: {e})"
                                 ) from None

    def render(self, messages: Sequence[Message]) -> str:
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
        text = self.render(messages)
        toks = self.model.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        bos = self.model.token_bos()
        if len(toks) >= 2 and toks[0] == bos and toks[1] == bos:  # template wrote BOS too
            toks = toks[1:]
        return toks

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` as plain content (no special tokens, no BOS)."""
        return len(self.model.tokenize(text.encode("utf-8")))
