"""Detect a judge output that copies the prompt's few-shot example instead of doing the task.

Small judges (SmolLM2-135M measured: 97% of English and 100% of Japanese
judge-written strings) answer every sample with the example's statements,
reasons and entities; the output parses, so nothing else would notice. A
string of the output counts as copied when it reproduces a string of the
step's example (exactly or nearly, after Unicode and case folding) and does
not occur in the step's real inputs (the sample, the statements...): a
sample that happens to be about the example's subject is not flagged.

The example strings are found by rendering the step with and without its
examples (every template wraps its example in ``{% if examples %}``), so
they never go stale when a template changes.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from typing import Any, Iterator

from pydantic import BaseModel

from localeval.lang import normalise
from localeval.prompts.renderer import render
from localeval.types import Sample

__all__ = ["example_strings", "copied_strings", "find_copies", "NEAR_COPY_RATIO"]

#: Strings at least this similar (difflib ratio) to an example string are copies.
NEAR_COPY_RATIO = 0.9
#: Shorter normalised strings are never judged (too little to tell).
MIN_CHARS = 3
#: Near-copy matching only from this length on (short strings must match exactly).
NEAR_MIN_CHARS = 12

_LABEL = re.compile(r"^[^:：\s][^:：]{0,30}[:：]\s*")
_NUMBER = re.compile(r"^\d+\.\s*")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _line_strings(line: str) -> Iterator[str]:
    line = line.strip()
    if line.startswith("{"):
        try:
            yield from _strings(json.loads(line))
            return
        except json.JSONDecodeError:
            pass
    yield _NUMBER.sub("", _LABEL.sub("", line))


def example_strings(with_examples: str, without_examples: str) -> frozenset[str]:
    """Normalised strings of the lines that only the with-examples rendering has."""
    extra = Counter(with_examples.splitlines())
    extra.subtract(without_examples.splitlines())
    out = set()
    for line, n in extra.items():
        if n > 0 and line.strip() and line.strip() != "Example":
            out.update(s for s in map(normalise, _line_strings(line)) if len(s) >= MIN_CHARS)
    return frozenset(out)


def copied_strings(output: Any, examples: frozenset[str], inputs_text: str) -> list[str]:
    """The strings of ``output`` that reproduce an example string and are not in the inputs.

    ``inputs_text`` is the prompt as rendered without its examples: what the
    judge was given to work on.
    """
    if not examples:
        return []
    given = normalise(inputs_text)
    copied = []
    for s in _strings(output):
        n = normalise(s)
        if len(n) < MIN_CHARS or n in given:
            continue
        if n in examples or (len(n) >= NEAR_MIN_CHARS and any(
                len(e) >= NEAR_MIN_CHARS and abs(len(e) - len(n)) <= len(n) // 5
                and difflib.SequenceMatcher(None, n, e, autojunk=False).ratio() >= NEAR_COPY_RATIO
                for e in examples)):
            copied.append(s)
    return copied


def find_copies(output: Any, step: str, sample: Sample, *, lang: str, **inputs: Any) -> list[str]:
    """The strings of a judge's ``output`` for ``step`` that copy the step's example."""
    with_ex = render(step, sample, lang=lang, examples=True, **inputs)[0][-1]["content"]
    without = render(step, sample, lang=lang, examples=False, **inputs)[0][-1]["content"]
    return copied_strings(output, example_strings(with_ex, without), without)
