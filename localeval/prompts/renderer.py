"""Render judge prompts from the template files in ``localeval/prompts/``.

Layout (chosen for llama.cpp's KV-prefix reuse; docs/judge.md, "Prefix reuse",
shows what it saves):

1. system message: fixed text, identical for every step and every sample;
2. user message: the *sample block* (question, numbered contexts, answer,
   reference), identical for every step of one sample, followed by the
   step's own instruction, few-shot example and per-call inputs (statements,
   "context [3]", ...).

The sample block is rendered on its own and concatenated in code, so the
prefix identity does not depend on how each template is written. Per-context
steps refer to a context by its number in the block instead of repeating it.

One step is *standalone*: answer_relevancy generates questions from the
answer alone. Showing it the sample block would show it the original question,
which it would copy, inflating the score; so its user message is the step part
only (it still shares the system message). The runner should issue it first
or last among a sample's calls so it does not split the shared-prefix run.

Prompts are data: a template's content hash (plus the shared templates and
``LAYOUT_VERSION``) is the prompt version recorded in every signature. A shared
template named ``_part_*`` (the conversation of the conversation steps) counts
only in the versions of the steps that include it, so adding one leaves every
other step's version as it was.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache, lru_cache
from typing import Any

import jinja2

from localeval.lang import resolve_lang
from localeval.types import MultiTurnSample, Sample

__all__ = [
    "render",
    "example_reasons",
    "sample_language",
    "sample_block",
    "system_text",
    "prompt_version",
    "steps",
    "LANGUAGE_NAMES",
    "STANDALONE_STEPS",
    "LAYOUT_VERSION",
]

#: Bump when the Python-side assembly of messages changes.
LAYOUT_VERSION = "1"

LANGUAGE_NAMES = {"en": "English", "ja": "Japanese", "zh": "Chinese"}

#: Templates named so are included by some steps only (not shared by all, as other ``_`` ones).
PART_PREFIX = "_part_"

#: Steps whose user message carries no sample block (see module docstring).
STANDALONE_STEPS = frozenset({"answer_relevancy"})


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("localeval", "prompts"),
        autoescape=False,  # plain text for a model, not HTML
        undefined=jinja2.StrictUndefined,  # a missing step input is a bug, not ""
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["example_reasons"] = example_reasons
    return env


def example_reasons(text: str, reasons: str) -> str:
    """A few-shot example as the reason mode asks: unchanged unless ``reasons`` is "none",
    then every JSON line without its ``reason`` keys (a Jinja filter).

    Written once here rather than as a second copy of every example, so the
    examples of the two modes cannot drift apart; the JSON is written back as
    the templates write it (``", "`` and ``": "``, characters unescaped).
    """
    if reasons != "none":
        return text
    lines = []
    for line in text.split("\n"):
        if line.startswith("{"):
            line = json.dumps(_without_reasons(json.loads(line)), ensure_ascii=False)
        lines.append(line)
    return "\n".join(lines)


def _without_reasons(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_reasons(v) for k, v in value.items() if k != "reason"}
    if isinstance(value, list):
        return [_without_reasons(v) for v in value]
    return value


def steps() -> list[str]:
    """Names of all judge steps that have a template."""
    return sorted(n[:-3] for n in _env().list_templates(extensions=["j2"])
                  if not n.startswith("_"))


def _source(name: str) -> str:
    env = _env()
    assert env.loader is not None
    return env.loader.get_source(env, name)[0]


@cache
def prompt_version(step: str) -> str:
    """Short content hash of the step template, the shared templates and the layout."""
    h = hashlib.sha256(f"layout {LAYOUT_VERSION}\n".encode())
    shared = sorted(n for n in _env().list_templates(extensions=["j2"])
                    if n.startswith("_") and not n.startswith(PART_PREFIX))
    for name in [*shared, *_parts(step), f"{step}.j2"]:
        h.update(name.encode() + b"\0" + _source(name).encode() + b"\0")
    return h.hexdigest()[:12]


def _parts(step: str) -> list[str]:
    """The ``_part_*`` templates ``step`` includes: hashed into its version only, so that a
    part some steps share (the conversation) leaves every other step's version as it was."""
    from jinja2 import meta

    found = meta.find_referenced_templates(_env().parse(_source(f"{step}.j2")))
    return sorted({n for n in found if n and n.startswith(PART_PREFIX)})


def system_text() -> str:
    """The fixed system message, the same for all steps and samples."""
    return _env().get_template("_system.j2").render().strip()


def sample_block(sample: Sample) -> str:
    """The shared block of the user message for ``sample`` (ends with a blank line)."""
    text = _env().get_template("_sample.j2").render(
        question=sample.question, contexts=sample.contexts, answer=sample.answer,
        reference=sample.reference)
    return text.strip() + "\n\n"


def sample_language(sample: Sample, configured: str) -> str:
    """``configured`` ("en"/"ja"/"zh") unless "auto": then detect from question + answer,
    or, for a conversation (which has neither), from its user turns."""
    if isinstance(sample, MultiTurnSample):
        return resolve_lang(configured, *(m.content for m in sample.messages if m.role == "user"))
    return resolve_lang(configured, sample.question, sample.answer)


def render(step: str, sample: Sample, *, lang: str, examples: bool = True,
           reasons: str = "full", **inputs: Any) -> tuple[list[dict], str]:
    """Chat messages for one judge step, and the step's prompt version.

    ``inputs`` are the per-call values the step template uses (``statements``,
    ``k``, ``target``...); the template also sees ``lang``, ``language`` (its
    English name, for "write in ..." instructions) and ``sample``.
    ``examples=False`` leaves out the few-shot example: the retry for a judge
    that copied it (the grammar still fixes the output format). ``reasons``
    (``config.REASON_MODES``) is what a verdict step asks before each verdict:
    a reason ("full"), one of a few words ("short") or none, with the
    example's reasons left out; steps without verdicts ignore it.
    """
    try:
        template = _env().get_template(f"{step}.j2")
    except jinja2.TemplateNotFound:
        raise ValueError(f"no prompt template for judge step {step!r}; "
                         f"known steps: {', '.join(steps())}") from None
    if lang not in LANGUAGE_NAMES:
        raise ValueError(f"unsupported prompt language {lang!r}")
    task = template.render(lang=lang, language=LANGUAGE_NAMES[lang], sample=sample,
                           examples=examples, reasons=reasons, **inputs).strip()
    user = task if step in STANDALONE_STEPS else sample_block(sample) + task
    messages = [{"role": "system", "content": system_text()},
                {"role": "user", "content": user}]
    return messages, prompt_version(step)
