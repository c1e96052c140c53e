"""A checker model as a judge: faithfulness scored by a small classifier, no generation.

``--checker NAME|PATH`` (the judge spec ``checker:NAME|PATH``) makes a checker
(``localeval.checker``: MiniCheck, HHEM, LettuceDetect...) the run's judge. It
answers, from structure (``JudgeRequest.sample`` and ``.inputs``, never the
prompt text), the two steps faithfulness is made of:

- ``statements`` of the answer: its sentences, cut by the project's splitter
  (``lang.split_sentences``, en/ja/zh, the language detected from the answer);
- ``faithfulness_verdicts``: per statement, P(supported) = the highest over the
  windows of the sample's contexts (joined, then cut to the checker's window by
  ``checker.windows``), as MiniCheck reads a long document; verdict 1 at
  ``THRESHOLD`` or above; the probabilities themselves when the run asks for soft
  verdicts. A span checker (LettuceDetect) reads the whole answer against the
  contexts once: a sentence's P(supported) is 1 minus the highest probability of
  the unsupported spans inside it, and its reason names those spans, so the
  report shows them under the answer.

Every other step is refused (a decided ``JudgeCallError`` naming the step): a
checker writes no questions, ratings or reasons. Because it is a judge, the
checker gets everything a judge has with no new code: the call cache (keyed
on its fingerprint), the signature (``judge:checker:NAME@HASH``, so ``diff``
and ``history`` say when a checker and a judge scored two runs), the judge
check on faithfulness's known-answer probes, judge health, ``validate``,
``compare`` and ``estimate`` over its scores (docs/checkers.md).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import typing
from typing import Any, Sequence

from pydantic import BaseModel, ValidationError

from localeval.errors import JudgeCallError, ModelError
from localeval.judge.base import JudgeBackend, JudgeReply, JudgeRequest
from localeval.types import Usage

__all__ = ["CheckerJudge", "CHECKER_PREFIX", "CHECKER_STEPS", "CHECKER_METRICS", "THRESHOLD",
           "checker_spec", "is_checker_spec", "build_checker_judge", "span_reason",
           "read_span_reason"]

#: The judge spec of a checker: ``checker:`` then a folder, a name in models/ or the manifest.
CHECKER_PREFIX = "checker:"
#: The steps a checker answers; every other step is refused.
CHECKER_STEPS = ("statements", "faithfulness_verdicts")
#: The metrics made of those steps alone: what a run with a checker and no judge scores.
CHECKER_METRICS = ("faithfulness",)
#: P(supported) at or above which a hard verdict is 1 (MiniCheck's and HHEM's 0.5).
THRESHOLD = 0.5
#: Bumped when how verdicts are read from a checker changes: the fingerprint (so the
#: call cache and the run's signature) changes with it.
RULES = "checker-judge-1"


def checker_spec(spec: str | os.PathLike[str]) -> str:
    """The judge spec of a checker spec (``--checker X`` is ``--judge checker:X``)."""
    text = os.fspath(spec)
    return text if is_checker_spec(text) else CHECKER_PREFIX + text


def is_checker_spec(spec: Any) -> bool:
    """Whether a judge spec names a checker."""
    return isinstance(spec, str) and spec.startswith(CHECKER_PREFIX)


class CheckerJudge(JudgeBackend):
    """A ``Checker`` answering faithfulness's two steps (module docstring)."""

    def __init__(self, checker: Any) -> None:
        self.checker = checker
        self.name = f"{CHECKER_PREFIX}{checker.name}"
        self.fingerprint = hashlib.sha256(
            f"{RULES}|{THRESHOLD}|{checker.fingerprint}".encode()).hexdigest()

    def signature(self) -> dict[str, Any]:
        return {"judge": self.name, "fingerprint": self.fingerprint,
                "family": self.checker.family}

    def ask(self, request: JudgeRequest) -> JudgeReply:
        start = time.perf_counter()
        cost = Usage(calls=1)
        if request.step not in CHECKER_STEPS or request.sample is None:
            raise JudgeCallError(
                f"the checker {self.checker.name} scores only faithfulness; it cannot answer "
                f"the '{request.step}' step: score the other judged metrics with a "
                "generative --judge", usage=cost, decided=True)
        if request.step == "statements":
            output, probs = self._sentences(request, cost), None
        else:
            output, probs = self._verdicts(request, cost)
        cost.seconds = time.perf_counter() - start
        return JudgeReply(output=output, raw=output.model_dump_json(), usage=cost, probs=probs)

    # -- statements: the answer's sentences -----------------------------------------------
    def _sentences(self, request: JudgeRequest, cost: Usage) -> BaseModel:
        if request.inputs.get("target", "answer") != "answer":
            raise JudgeCallError(f"the checker {self.checker.name} checks the answer's "
                                 "sentences only, not the reference's", usage=cost,
                                 decided=True)
        found = answer_sentences(request.sample.answer or "")
        try:
            return request.schema.model_validate({"statements": found})
        except ValidationError:
            raise JudgeCallError(f"the answer has {len(found)} sentences, more than "
                                 "faithfulness checks in one sample", usage=cost,
                                 decided=True) from None

    # -- verdicts: P(supported) per statement ----------------------------------------------
    def _verdicts(self, request: JudgeRequest, cost: Usage
                  ) -> tuple[BaseModel, list[dict[str, float]] | None]:
        sample = request.sample
        stmts = [str(s) for s in request.inputs.get("statements") or []]
        contexts = [c for c in (sample.contexts or []) if c and c.strip()]
        if self.checker.marks_spans:
            probs, reasons = span_support(self.checker, contexts, sample.question or "",
                                          sample.answer or "", stmts)
        else:
            probs, reasons = pair_support(self.checker, contexts, stmts)
        limit = reason_limit(request.schema)
        rows = []
        for p, why in zip(probs, reasons):
            row: dict[str, Any] = {"verdict": int(p >= THRESHOLD)}
            if limit is not None:
                row["reason"] = why[:limit]
            rows.append(row)
        try:
            output = request.schema.model_validate({"verdicts": rows})
        except ValidationError as e:  # a schema this backend does not know
            raise JudgeCallError(f"the checker's verdicts do not fit the step's schema: {e}",
                                 usage=cost, decided=True) from None
        soft = [{"1": p, "0": 1.0 - p} for p in probs] if request.prob_field else None
        return output, soft


def answer_sentences(answer: str) -> list[str]:
    """The answer's sentences, in the language detected from it (en/ja/zh)."""
    from localeval.lang import detect_lang, split_sentences

    return split_sentences(answer, detect_lang(answer))


def pair_support(checker: Any, contexts: Sequence[str], stmts: Sequence[str]
                 ) -> tuple[list[float], list[str]]:
    """P(supported) per statement, the best over the windows of the joined contexts, in one
    batch; and a reason per statement naming the window that supported it best."""
    from localeval.checker import windows

    document = "\n\n".join(contexts)
    pairs: list[tuple[str, str]] = []
    owner: list[tuple[int, int]] = []  # (statement, window number)
    counts = []
    for i, s in enumerate(stmts):
        cut = windows(document, s, checker) if document else []
        counts.append(len(cut))
        pairs += [(w, s) for w in cut]
        owner += [(i, j) for j in range(len(cut))]
    scores = checker.support(pairs) if pairs else []
    best = [0.0] * len(stmts)
    where = [-1] * len(stmts)
    for (i, j), p in zip(owner, scores):
        if where[i] < 0 or p > best[i]:
            best[i], where[i] = float(p), j
    reasons = [f"P(supported) {p:.2f}" + (f", window {w + 1} of {n} of the contexts"
                                           if n > 1 else "") if n else "no context to check"
               for p, w, n in zip(best, where, counts)]
    return best, reasons


def span_support(checker: Any, contexts: Sequence[str], question: str, answer: str,
                 stmts: Sequence[str]) -> tuple[list[float], list[str]]:
    """P(supported) per statement from a span checker's unsupported spans of the answer.

    The answer is read once per window of the contexts (once when they fit); a
    statement found in the answer takes the spans that overlap it, one that is not
    (a judge's statement) is read as an answer of its own. Its P(supported) is the
    best window's 1 - (highest span probability inside it), 1.0 with no span.
    """
    from localeval.checker import windows

    document = "\n\n".join(contexts)
    cut = windows(document, f"{question}\n{answer}", checker) if document else [""]
    cut = cut or [""]
    read = [checker.spans(w if len(cut) > 1 else list(contexts), question, answer)
            for w in cut]
    probs, reasons = [], []
    cursor = 0
    for s in stmts:
        at = answer.find(s, cursor)
        at = answer.find(s) if at < 0 else at
        if at >= 0:
            cursor = at + len(s)
            per_window = [[x for x in spans if x.start < at + len(s) and x.end > at]
                          for spans in read]
        else:
            per_window = [checker.spans(w if len(cut) > 1 else list(contexts), question, s)
                          for w in cut]
        scored = [(1.0 - max((x.probability for x in spans), default=0.0), spans)
                  for spans in per_window]
        p, spans = max(scored, key=lambda t: t[0])
        probs.append(float(p))
        reasons.append(span_reason(spans))
    return probs, reasons


#: How a span checker's reason names the unsupported spans: ``unsupported: "TEXT" (P); ...``
_SPAN = re.compile(r'"(.+?)" \((0\.\d\d|1\.00)\)(?=; "|$)', re.S)
_SPAN_LEAD = "unsupported: "


def span_reason(spans: Sequence[Any]) -> str:
    """A sentence's reason from its unsupported spans (``read_span_reason`` reads it back)."""
    if not spans:
        return "no unsupported span"
    return _SPAN_LEAD + "; ".join(f'"{x.text}" ({x.probability:.2f})' for x in spans)


def read_span_reason(reason: Any) -> list[tuple[str, float]]:
    """The (text, P(unsupported)) spans a span checker's reason names; [] for any other
    reason (or one cut at the schema's length before its first span ended)."""
    if not isinstance(reason, str) or not reason.startswith(_SPAN_LEAD):
        return []
    return [(m.group(1), float(m.group(2))) for m in _SPAN.finditer(reason, len(_SPAN_LEAD))]


def reason_limit(schema: type[BaseModel]) -> int | None:
    """The longest reason a verdicts schema's items take; None when they have no reason."""
    field = schema.model_fields.get("verdicts")
    args = typing.get_args(field.annotation) if field is not None else ()
    item = args[0] if args else None
    reason = getattr(item, "model_fields", {}).get("reason")
    if reason is None:
        return None
    bounds = [getattr(m, "max_length", None) for m in reason.metadata]
    return min((b for b in bounds if isinstance(b, int)), default=10_000)


def build_checker_judge(spec: str, *, models_dir: Any = None, judge_model: str | None = None,
                        trust_remote_code: bool = False, checker_device: str = "auto",
                        checker_batch_size: int = 16, **_judge_options: Any) -> CheckerJudge:
    """The registry's factory for ``checker:NAME|PATH`` (``judge.load_judge``). The llama.cpp
    judge's options (n_ctx, threads...) mean nothing to a checker and are ignored."""
    from localeval.catalog import locate_model

    name = spec[len(CHECKER_PREFIX):].strip()
    if not name:
        raise ModelError("--checker needs a checker folder or a checker model's name")
    folder = locate_model(name, "checker", models_dir)
    from localeval.checker import load_checker  # torch and transformers: once a folder is found

    # a checker named from models/ or the manifest keeps that name; a folder, its own
    shown = None if os.path.isdir(os.path.expanduser(name)) else name
    return CheckerJudge(load_checker(folder, device=checker_device,
                                     batch_size=checker_batch_size,
                                     trust_remote_code=trust_remote_code, name=shown))
