"""Detect a judge output that copies the prompt's few-shot example instead of doing the task.

Small judges (SmolLM2-135M measured: 97% of English and 100% of Japanese
judge-written strings) answer every sample with the example's statements,
reasons and entities; the output parses, so nothing else would notice. A
string of the output counts as copied when it reproduces a string of the
step's example (exactly or nearly, after Unicode and case folding) and does
not occur in the step's real inputs (the sample, the statements...): a
sample that happens to be about the example's subject is not flagged.

Besides exact and near-exact copies, a string that borrows the example's
*distinctive* words (names, numbers, kanji/katakana pairs: "Paris", "France",
"1921", "首都") that the real inputs do not contain is a copy too: SmolLM2
writes "The context states that Paris is the capital of France." for samples
about annual leave, close to but not the example's "The context states that
Paris is the capital.".

The example strings are found by rendering the step with and without its
examples (every template wraps its example in ``{% if examples %}``), so
they never go stale when a template changes.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from typing import Any, Iterator, Mapping, Sequence

from pydantic import BaseModel

from localeval.lang import copy_tokens, normalise
from localeval.prompts.renderer import render
from localeval.types import Sample

__all__ = ["example_lines", "example_strings", "copied_strings", "borrowed_tokens", "copies_in", "find_copies",
           "NEAR_COPY_RATIO"]

#: Strings at least this similar (difflib ratio) to an example string are copies.
NEAR_COPY_RATIO = 0.9
#: Shorter normalised strings are never judged (too little to tell).
MIN_CHARS = 3
#: Near-copy matching only from this length on (short strings must match exactly).
NEAR_MIN_CHARS = 12

#: Borrowed distinctive tokens that make a copy: at least this many, and this share.
BORROWED_MIN = 2
BORROWED_SHARE = 0.5
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


def borrowed_tokens(text: str, example_tokens: set[str], input_tokens: set[str]) -> set[str]:
    """The distinctive tokens of ``text`` that come from the example and not from the inputs."""
    return (copy_tokens(text, distinctive=True) & example_tokens) - input_tokens


def example_lines(with_examples: str, without_examples: str) -> list[str]:
    """The lines only the with-examples rendering has: the example itself."""
    extra = Counter(with_examples.splitlines())
    extra.subtract(without_examples.splitlines())
    return [line for line, n in extra.items() if n > 0]


def example_strings(with_examples: str, without_examples: str) -> frozenset[str]:
    """Normalised strings of the lines that only the with-examples rendering has."""
    out: set[str] = set()
    for line in example_lines(with_examples, without_examples):
        if line.strip() and line.strip() != "Example":
            out.update(s for s in map(normalise, _line_strings(line)) if len(s) >= MIN_CHARS)
    return frozenset(out)


def copied_strings(output: Any, examples: frozenset[str], inputs_text: str,
                   example_text: str = "") -> list[str]:
    """The strings of ``output`` that reproduce the example and not the inputs.

    ``inputs_text`` is the prompt as rendered without its examples (what the
    judge was given to work on); ``example_text`` the example's own lines (for
    the borrowed-words rule; without it only exact and near copies count).
    """
    if not examples:
        return []
    given = normalise(inputs_text)
    input_tokens = copy_tokens(inputs_text, distinctive=False)
    example_tokens = copy_tokens(example_text, distinctive=True) if example_text else set()
    copied = []
    for s in _strings(output):
        n = normalise(s)
        # Text found in the inputs, or made only of the inputs' words, is the
        # judge's own work however much it resembles the example.
        if len(n) < MIN_CHARS or n in given or copy_tokens(s, distinctive=False) <= input_tokens:
            continue
        if n in examples or (len(n) >= NEAR_MIN_CHARS and any(
                len(e) >= NEAR_MIN_CHARS and abs(len(e) - len(n)) <= len(n) // 5
                and difflib.SequenceMatcher(None, n, e, autojunk=False).ratio() >= NEAR_COPY_RATIO
                for e in examples)):
            copied.append(s)
            continue
        borrowed = borrowed_tokens(s, example_tokens, input_tokens)
        own = copy_tokens(s, distinctive=True)
        if len(borrowed) >= BORROWED_MIN and len(borrowed) >= BORROWED_SHARE * len(own):
            copied.append(s)
    return copied


def find_copies(output: Any, step: str, sample: Sample, *, lang: str, **inputs: Any) -> list[str]:
    """The strings of a judge's ``output`` for ``step`` that copy the step's example.

    Renders the step both ways; a caller that has rendered them already (the
    judge door, which sends those very prompts) uses ``copies_in``.
    """
    with_ex = render(step, sample, lang=lang, examples=True, **inputs)[0]
    without = render(step, sample, lang=lang, examples=False, **inputs)[0]
    return copies_in(output, with_ex, without)


def copies_in(output: Any, with_examples: Sequence[Mapping[str, str]],
              without_examples: Sequence[Mapping[str, str]]) -> list[str]:
    """``find_copies`` from the step's messages as rendered with and without the example."""
    with_ex, without = with_examples[-1]["content"], without_examples[-1]["content"]
    example_text = "\n".join(example_lines(with_ex, without))
    return copied_strings(output, example_strings(with_ex, without), without, example_text)
