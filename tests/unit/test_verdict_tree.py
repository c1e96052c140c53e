"""Score probabilities when values share first tokens ("1" and "10"): the token trie of
``judge/llama/verdict.py`` on a model whose next-token distribution the test writes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from localeval.judge.llama.sampler import Generation
from localeval.judge.llama.verdict import VerdictReader

VOCAB = ["0", "1", "2", "}", ",", " ", "a", '"', ":", "{", "s", "c", "o", "r", "e", "10", "[", "]"]


class FakeModel:
    """One token per character (digits split, as SmolLM2 and Llama tokenise)."""

    def tokenize(self, data: bytes, *, add_bos: bool = False, special: bool = False
                 ) -> list[int]:
        return [VOCAB.index(c) for c in data.decode()]

    def detokenize(self, toks: list[int]) -> bytes:
        return "".join(VOCAB[t] for t in toks).encode()

    @property
    def first_bytes(self) -> np.ndarray:
        return np.array([ord(t[0]) for t in VOCAB], dtype=np.int16)


class FakeDecoder:
    """Next-token probabilities chosen per context: after the value start, and after "1"."""

    def __init__(self, at_start: dict[str, float], after_one: dict[str, float]) -> None:
        self.tables = {"start": at_start, "1": after_one}
        self.evals = 0

    def logits_after(self, tokens):
        self.evals += 1
        after_colon = VOCAB[tokens[-2]] in (":", " ")
        where = "1" if VOCAB[tokens[-1]] == "1" and after_colon else "start"
        p = np.full(len(VOCAB), 1e-12)
        for tok, prob in self.tables[where].items():
            p[VOCAB.index(tok)] = max(prob, 1e-12)
        return np.log(p), len(tokens) - 1


class FakeJudge:
    """The verdict reader over the fake model and decoder (the judge wires them the same way)."""

    def __init__(self, at_start: dict[str, float], after_one: dict[str, float]) -> None:
        self.model = FakeModel()
        self.decoder = FakeDecoder(at_start, after_one)
        self.reader = VerdictReader(self.model, self.decoder)

    @property
    def evals(self) -> int:
        return self.decoder.evals

    def probs(self, *args):
        return self.reader.probabilities(*args)


def generation(text: str) -> Generation:
    toks = [VOCAB.index(c) for c in text]
    return Generation(text=text, raw=text.encode(), tokens=toks,
                      pieces=[c.encode() for c in text], stop="eos", prompt_tokens=0,
                      reused_tokens=0)


def test_one_and_ten_share_a_first_token():
    # P("1") = 0.5, P("2") = 0.5 at the start; after "1": "0" 0.4, "}" 0.6 (the end)
    judge = FakeJudge({"1": 0.5, "2": 0.5}, {"0": 0.4, "}": 0.6})
    gen = generation('{"score":10}')
    probs, usage = judge.probs(judge.model.tokenize(b"{"), gen, "score", [1, 2, 10])
    assert probs[0]["1"] == pytest.approx(0.5 * 0.6, abs=1e-6)
    assert probs[0]["10"] == pytest.approx(0.5 * 0.4, abs=1e-6)
    assert probs[0]["2"] == pytest.approx(0.5, abs=1e-6)
    assert math.fsum(probs[0].values()) == pytest.approx(1.0)
    assert judge.evals == 2  # the start, then after "1": one evaluation per branching node


def test_distinct_first_tokens_need_one_evaluation_and_renormalise():
    judge = FakeJudge({"1": 0.2, "2": 0.2, "a": 0.6}, {})
    gen = generation('{"score":2}')
    probs, _ = judge.probs([], gen, "score", [1, 2])
    assert probs == [{"1": pytest.approx(0.5), "2": pytest.approx(0.5)}]
    assert judge.evals == 1


def test_every_occurrence_in_output_order():
    judge = FakeJudge({"1": 0.25, "2": 0.75}, {"0": 0.0, "}": 1.0})
    text = json.dumps({"s": [{"score": 1}, {"score": 2}]}, separators=(",", ":"))
    probs, _ = judge.probs([], generation(text), "score", [1, 2, 10])
    assert len(probs) == 2 and all(math.fsum(p.values()) == pytest.approx(1.0) for p in probs)
    assert probs[0]["10"] == pytest.approx(0.0, abs=1e-9)


def test_ending_counts_only_what_the_grammar_writes_after_the_value():
    # after "1": "0" 0.2, "}" 0.2 and junk "a" 0.6 the grammar forbids; the output
    # closes the object after the value, so ending is "}" only: P(10 | 1) = 0.5
    judge = FakeJudge({"1": 1.0}, {"0": 0.2, "}": 0.2, "a": 0.6})
    probs, _ = judge.probs([], generation('{"score":10}'), "score", [1, 2, 10])
    assert probs[0]["10"] == pytest.approx(0.5, abs=1e-6)
    assert probs[0]["1"] == pytest.approx(0.5, abs=1e-6)
