"""Span checkers: LettuceDetect, a ModernBERT token classifier over context + answer.

The input follows LettuceDetect's code (KRLabsOrg/LettuceDetect:
``detectors/transformer.py``, ``detectors/prompt_utils.py``, ``prompts/``,
``datasets/hallucination_dataset.py``): the passages written ``passage 1: ...``
one a line into its QA prompt (or its summary prompt when there is no
question), then ``tokenizer(prompt, answer, truncation="only_first",
max_length=4096)``; each answer token's softmax gives P(label 1 = hallucinated),
and neighbouring tokens over 0.5 make one span, its probability the highest of
its tokens. Character offsets come from the tokenizer's offsets within the answer.

Contexts longer than the model's input are grouped into several prompts, as
LettuceDetect does; where it keeps a token's largest hallucination probability
over the groups, here a token is supported if any group supports it (the
smallest), the rule every checker follows with windows (``windowing.py``): a
fact found in the second group is not a hallucination because the first lacks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from string import Template
from typing import Any

from localeval.checker.base import Family, Span
from localeval.checker.engine import TransformersChecker
from localeval.checker.windowing import cut_text
from localeval.errors import ModelError, printable

__all__ = ["LettuceSpan", "lettuce_prompt", "spans_of", "PROMPTS"]

#: (passage word, QA prompt, summary prompt) per LettuceDetect language code.
PROMPTS: dict[str, tuple[str, str, str]] = {
    "en": ("passage",
           "Briefly answer the following question:\n${question}\nBear in mind that your "
           "response should be strictly based on the following ${num_passages} passages:\n"
           "${context}\nIn case the passages do not contain the necessary information to "
           "answer the question, please reply with: \"Unable to answer based on given "
           "passages.\"\noutput:",
           "Summarize the following text:\n${text}\noutput:"),
    "cn": ("段落",
           "请简短回答以下问题：\n${question}\n请注意，您的回答应严格基于以下${num_passages}段落：\n"
           "${context}\n如果段落中不包含回答问题所需的信息，请回复：\"基于给定段落无法回答。\"\n输出：\n",
           "请总结以下文本：\n${text}\n输出：\n"),
}
_SPECIALS = 3  # [CLS] prompt [SEP] answer [SEP]


def lettuce_prompt(passages: Sequence[str], question: str | None, lang: str = "en") -> str:
    """LettuceDetect's ``PromptUtils.format_context``: the prompt before the answer."""
    word, qa, summary = PROMPTS[lang]
    block = "\n".join(f"{word} {i + 1}: {p}" for i, p in enumerate(passages))
    if question is None:
        return Template(summary).substitute(text=block)
    return Template(qa).substitute(question=question, num_passages=len(passages), context=block)


class LettuceSpan(TransformersChecker):
    """LettuceDetect (ModernBERT token classification): unsupported spans of an answer."""

    family: Family = "span"
    marks_spans: bool = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.layout.prompt_lang not in PROMPTS:
            raise ModelError(f"checker folder {printable(self.layout.folder)}: prompt_lang "
                             f"{self.layout.prompt_lang!r} is not one of {sorted(PROMPTS)}")

    # -- prompts ----------------------------------------------------------------------
    def prompts(self, passages: Sequence[str], question: str | None, answer: str) -> list[str]:
        """The prompt(s) for ``answer``: one, or one per group of passages that fits."""
        lang = self.layout.prompt_lang
        room = self.max_tokens - self.count_tokens(answer) - _SPECIALS
        whole = lettuce_prompt(passages, question, lang)
        if self.count_tokens(whole) <= room:
            return [whole]
        budget = max(16, room - self.count_tokens(lettuce_prompt([""], question, lang)) - 8)
        pieces = [w for p in passages for w in cut_text(p, budget, self)]
        groups: list[list[str]] = [[]]
        used = 0
        for piece in pieces:
            n = self.count_tokens(piece) + 8  # its "passage N: " and newline
            if groups[-1] and used + n > budget:
                groups.append([])
                used = 0
            groups[-1].append(piece)
            used += n
        return [lettuce_prompt(g, question, lang) for g in groups]

    # -- the model --------------------------------------------------------------------
    def score_prompts(self, items: list[tuple[str, str]]) -> list[tuple[list[float], list[tuple[int, int]]]]:
        """Per (prompt, answer): each answer token's P(hallucinated) and its characters."""
        import torch

        prompts = [p for p, _ in items]
        answers = [a for _, a in items]
        enc = self.tokenizer(prompts, answers, truncation="only_first",
                             max_length=self.max_tokens, padding=True,
                             return_offsets_mapping=True, return_tensors="pt")
        with torch.inference_mode():
            logits = self.model(**self.to_device(enc)).logits
        probs = torch.softmax(logits.float(), dim=-1)[..., self.layout.label].cpu()
        out = []
        for row in range(len(items)):
            seq = enc.sequence_ids(row)
            keep = [j for j, s in enumerate(seq) if s == 1
                    and int(enc["offset_mapping"][row][j][1]) > int(enc["offset_mapping"][row][j][0])]
            out.append(([float(probs[row, j]) for j in keep],
                        [(int(enc["offset_mapping"][row][j][0]),
                          int(enc["offset_mapping"][row][j][1])) for j in keep]))
        return out

    def token_probs(self, jobs: Sequence[tuple[Sequence[str], str | None, str]]
                     ) -> list[tuple[list[float], list[tuple[int, int]]]]:
        """Per (passages, question, answer): P(hallucinated) per answer token, the
        smallest over the prompts the passages needed."""
        items: list[tuple[str, str]] = []
        owner: list[int] = []
        for k, (passages, question, answer) in enumerate(jobs):
            for prompt in self.prompts(passages, question, answer):
                items.append((prompt, answer))
                owner.append(k)
        results = self.batched(items, lambda it: len(it[0]) + len(it[1]), self.score_prompts)
        merged: list[tuple[list[float], list[tuple[int, int]]] | None] = [None] * len(jobs)
        for k, (probs, offsets) in zip(owner, results):
            have = merged[k]
            if have is None:
                merged[k] = (probs, offsets)
            else:
                merged[k] = ([min(a, b) for a, b in zip(have[0], probs)], have[1])
        return [m if m is not None else ([], []) for m in merged]

    # -- the protocol -----------------------------------------------------------------
    def spans(self, context: str | Sequence[str], question: str, answer: str) -> list[Span]:
        passages = [context] if isinstance(context, str) else list(context)
        probs, offsets = self.token_probs([(passages, question, answer)])[0]
        return spans_of(answer, probs, offsets)

    def support(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """1 - the largest P(hallucinated) over the claim's tokens, the document as the
        one passage of LettuceDetect's summary prompt (no question)."""
        results = self.token_probs([([doc], None, claim) for doc, claim in pairs])
        return [1.0 - max(probs, default=0.0) for probs, _ in results]


def spans_of(answer: str, probs: Sequence[float], offsets: Sequence[tuple[int, int]]
             ) -> list[Span]:
    """Neighbouring tokens over 0.5 joined into spans of ``answer``."""
    out: list[Span] = []
    cur: list[int] | None = None  # the open span's start and end
    best = 0.0
    for p, (s, e) in zip(probs, offsets):
        if p > 0.5:
            if cur is None:
                cur, best = [s, e], p
            else:
                cur[1], best = e, max(best, p)
        elif cur is not None:
            out.append(Span(cur[0], cur[1], answer[cur[0]:cur[1]], best))
            cur = None
    if cur is not None:
        out.append(Span(cur[0], cur[1], answer[cur[0]:cur[1]], best))
    return out
