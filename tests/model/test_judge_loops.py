"""The loop guard: an output that repeats itself is made to step out of the loop.

The pure rule (``loop_continuation``) on token lists, then the real path: the tiny
random-weight GGUF through llama.cpp, pushed by a logit bias to write one letter over
and over inside a JSON string, closes the string once the loop is plain, where
without the guard it would run to the string's maxLength.
"""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from localeval.judge import JudgeRequest, LlamaJudge
from localeval.judge.llama.loops import MIN_SPAN, loop_continuation


@pytest.mark.parametrize("tokens, expected", [
    ([], None),
    ([7] * (MIN_SPAN - 1), None),                 # too short to call a loop
    ([7] * MIN_SPAN, 7),                          # one token 32 times
    ([1, 2, 3] * 11, 1),                          # 33 tokens, period 3: "1" goes round next
    ([5, 6] * 16, 5),                             # the shortest period wins
    (list(range(40)) * 3, 0),                     # a long period, three times
    (list(range(40)) * 2, None),                  # twice is not yet a loop
    (list(range(100)), None),                     # no repetition at all
    ([9] * 40 + [1, 2, 3], None),                 # the loop was left
])
def test_loop_continuation(tokens, expected):
    assert loop_continuation(tokens) == expected


class Text(BaseModel):
    text: str = Field(max_length=300)


def test_a_looping_string_is_closed_by_the_guard(tiny_gguf):
    probe = LlamaJudge(tiny_gguf, n_threads=1)
    letter = next(i for i in range(probe.n_vocab) if probe.model.piece(i) == b"a")
    probe.close()
    judge = LlamaJudge(tiny_gguf, n_threads=1, logit_bias={letter: 30.0})
    try:
        req = JudgeRequest(step="loop", schema=Text, seed=0, temperature=0.0, messages=(
            {"role": "user", "content": "Write a text."},))
        reply = judge.ask(req)
    finally:
        judge.close()
    text = json.loads(reply.raw)["text"]
    # the bias alone would write "aaaa..." to the string's bound of 300 characters; the
    # guard closes the string once the run is a loop (a stray first character aside)
    run = len(text) - len(text.rstrip("a"))
    assert MIN_SPAN <= run < MIN_SPAN + 8 and len(text) - run <= 4, text
