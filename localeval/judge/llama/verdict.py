"""Verdict probabilities: how sure the judge was of each verdict or score it wrote.

A grammar-forced verdict hides how close the call was. The probability of
each allowed value is read from the logits at the position where the value
starts, which needs no ``logits_all`` (n_ctx x vocab floats): the KV cache
already holds the output, so each position costs one token's evaluation.

Values whose first tokens differ (0/1 verdicts, 1-5 ratings with one token
per digit) need that one position. Integer scales past 9 do not: with
digit-by-digit tokenisers "1" and "10" share their first token. Their
values then form a token trie, and P(value) is the product of the choices
along its path; at a node where one value may end ("1") and others go on
("10"), ending has the probability of the tokens that start with what the
grammar writes after the value (the ``}`` or ``,`` that follows it in the
output), so the distribution agrees with the grammar-constrained choice.
Each branching node costs one more one-token evaluation (two for a 1-10
scale).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Protocol, Sequence

import numpy as np

from localeval.judge.base import Usage
from localeval.judge.llama.sampler import Generation

__all__ = ["LogitsSource", "Tokens", "VerdictReader"]


class Tokens(Protocol):
    """What the reader needs of the model (``model.ModelHandle`` serves it)."""

    @property
    def first_bytes(self) -> np.ndarray: ...

    def tokenize(self, data: bytes, *, add_bos: bool = False, special: bool = False
                 ) -> list[int]: ...

    def detokenize(self, tokens: list[int]) -> bytes: ...


class LogitsSource(Protocol):
    """What the reader needs of a decoder (``decoder.Decoder`` serves it)."""

    def logits_after(self, prompt: Sequence[int]) -> tuple[np.ndarray, int]: ...


class VerdictReader:
    """P(value) at each verdict in a generation, read through ``decoder``."""

    def __init__(self, model: Tokens, decoder: LogitsSource) -> None:
        self.model = model
        self.decoder = decoder

    def probabilities(self, prompt: list[int], gen: Generation, field_name: str,
                      values: list[Any]) -> tuple[list[dict[str, float]], Usage]:
        """P(value) for each occurrence of ``"field":`` in the output.

        For each occurrence the model is placed right where the value starts
        (prompt + output up to there; the KV cache already holds it, so this
        is a one-token evaluation) and the last-position logits give the
        distribution over the allowed values (see the module docstring for
        values sharing a first token). The order of the result is the order
        in the output.
        """
        texts = [json.dumps(v, ensure_ascii=False) for v in values]
        common = os.path.commonprefix(texts)
        while common and any(len(t) == len(common) for t in texts):
            common = common[:-1]  # 1, 10, 100: the shared "1" is a value of its own
        seqs = [self.model.tokenize(t[len(common):].encode("utf-8")) for t in texts]
        if any(not s for s in seqs) or len({tuple(s) for s in seqs}) != len(seqs):
            raise ValueError(f"allowed values of {field_name!r} do not tokenise to distinct "
                             "non-empty sequences; verdict probabilities need them")
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
                prefix += self.model.tokenize(rest)
            follow = _follow_byte(raw, off, texts, common)
            probs = self._value_tree(prefix, seqs, list(range(len(values))), 0, usage, follow)
            out.append({str(values[i]): float(probs.get(i, 0.0)) for i in range(len(values))})
        out.reverse()
        return out, usage

    def _value_tree(self, prefix: list[int], seqs: list[list[int]], idxs: list[int],
                    depth: int, usage: Usage, follow: int | None = None) -> dict[int, float]:
        """P(value i | prefix) for the values ``idxs`` whose first ``depth`` tokens are placed."""
        ended = [i for i in idxs if len(seqs[i]) == depth]
        going = [i for i in idxs if len(seqs[i]) > depth]
        if not going:
            return {ended[0]: 1.0}
        groups: dict[int, list[int]] = {}
        for i in going:
            groups.setdefault(seqs[i][depth], []).append(i)
        if len(groups) == 1 and not ended:  # no choice here: nothing to evaluate
            (tok, members), = groups.items()
            return self._value_tree(prefix + [tok], seqs, members, depth + 1, usage, follow)
        view, reused = self.decoder.logits_after(prefix)
        usage.prompt_tokens += len(prefix)
        usage.reused_tokens += reused
        logits = np.array(view, dtype=np.float64)
        toks = list(groups)
        if ended:
            # Full softmax: the end mass is what the continuing tokens leave.
            p = np.exp(logits - logits.max())
            p /= p.sum()
            if follow is not None:  # the grammar's one way to end the value here
                table = self.model.first_bytes
                end = float(p[: len(table)][table == follow].sum())
            else:
                end = 1.0 - self._continuing_mass(p, [seqs[i][depth:] for i in going])
            masses = np.append(p[toks], max(end, 0.0))
        else:
            sub = logits[toks]
            masses = np.exp(sub - sub.max())
        total = masses.sum()
        masses = masses / total if total > 0 else np.full(len(masses), 1.0 / len(masses))
        out: dict[int, float] = {}
        for tok, w in zip(toks, masses):
            for i, q in self._value_tree(prefix + [tok], seqs, groups[tok], depth + 1,
                                         usage, follow).items():
                out[i] = out.get(i, 0.0) + float(w) * q
        if ended:
            out[ended[0]] = out.get(ended[0], 0.0) + float(masses[-1])
        return out

    def _continuing_mass(self, p: np.ndarray, rests: list[list[int]]) -> float:
        """Probability of the tokens whose first byte could start one of the ``rests``."""
        firsts = {self.model.detokenize([r[0]])[:1] for r in rests if r}
        table = self.model.first_bytes
        mask = np.zeros(len(table), dtype=bool)
        for b in firsts:
            if b:
                mask |= table == b[0]
        return float(p[: len(mask)][mask].sum())


def _follow_byte(raw: bytes, off: int, texts: list[str], common: str) -> int | None:
    """The byte the output writes right after the value that starts at byte ``off``.

    The grammar fixes what follows an enum value (``}`` or ``,``), whichever
    value was chosen, so the tokens starting with this byte are the ways to
    end a value that could go on ("1" before "10"). None at the end of output.
    """
    rest = raw[off - len(common.encode("utf-8")):]
    chosen = max((t.encode("utf-8") for t in texts if rest.startswith(t.encode("utf-8"))),
                 key=len, default=None)
    if chosen is None or len(rest) <= len(chosen):
        return None
    return rest[len(chosen)]
