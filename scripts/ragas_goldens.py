"""Write tests/data/ragas_goldens.json: ragas's own scores for scripted judge outputs.

The golden tests (tests/golden/test_ragas_goldens.py) feed the same verdicts
to localeval's metrics through the scripted judge and compare, so "follows
ragas" is checked against ragas itself rather than against a re-reading of
its code.

ragas is installed apart, never into the project's install::

    pip install --target /tmp/ragas-target 'ragas>=0.4,<0.5'
    python scripts/ragas_goldens.py --ragas-dir /tmp/ragas-target

Each case runs one ``ragas.metrics.collections`` metric with a fake LLM that
returns the case's pre-set structured outputs in call order (validated by
ragas's own response models) and a fake embedder with the case's fixed
vectors; the fixture records the inputs, the outputs, the vectors and the
score ragas computed (``null`` for NaN, or the error ragas raised).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "ragas_goldens.json"

Q = "Who directed Oppenheimer and who played the lead?"
A = "Christopher Nolan directed Oppenheimer. Cillian Murphy played Oppenheimer."
CTX = ["Oppenheimer is a 2023 film directed by Christopher Nolan.",
       "Cillian Murphy stars as J. Robert Oppenheimer.",
       "Paris is the capital of France."]
REF = "Christopher Nolan directed Oppenheimer. Cillian Murphy played the title role."
ST = ["Nolan directed Oppenheimer.", "Murphy played Oppenheimer.", "It came out in 2022."]
G_ST = ["Nolan directed Oppenheimer.", "Murphy played the title role."]


def _nli(statements: list[str], verdicts: list[int]) -> dict[str, Any]:
    return {"statements": [{"statement": s, "reason": f"r{i}", "verdict": v}
                           for i, (s, v) in enumerate(zip(statements, verdicts))]}


def _faith(verdicts: list[int]) -> dict[str, Any]:
    st = ST[:len(verdicts)]
    return {"metric": "faithfulness", "ragas": "Faithfulness",
            "inputs": {"question": Q, "answer": A, "contexts": CTX[:2]},
            "outputs": [{"statements": st}, _nli(st, verdicts)]}


def _relevancy(flags: list[int], vecs: list[list[float]]) -> dict[str, Any]:
    qs = [f"Generated question {i}?" for i in range(len(flags))]
    return {"metric": "answer_relevancy", "ragas": "AnswerRelevancy", "kwargs": {"strictness": len(flags)},
            "inputs": {"question": Q, "answer": A},
            "outputs": [{"question": q, "noncommittal": f} for q, f in zip(qs, flags)],
            "embeddings": {Q: [1.0, 0.0, 0.0], **dict(zip(qs, vecs))}}


def _precision(verdicts: list[int]) -> dict[str, Any]:
    ctx = [f"Context number {i}." for i in range(len(verdicts))]
    return {"metric": "context_precision", "ragas": "ContextPrecisionWithReference",
            "inputs": {"question": Q, "contexts": ctx, "reference": REF},
            "outputs": [{"reason": f"r{i}", "verdict": v} for i, v in enumerate(verdicts)]}


def _recall(attributed: list[int]) -> dict[str, Any]:
    sents = [f"Sentence number {i} is here." for i in range(len(attributed))]
    return {"metric": "context_recall", "ragas": "ContextRecall",
            "inputs": {"question": Q, "contexts": CTX, "reference": " ".join(sents)},
            "outputs": [{"classifications": [{"statement": s, "reason": f"r{i}", "attributed": v}
                                             for i, (s, v) in enumerate(zip(sents, attributed))]}]}


def _entities(ref_ents: list[str], ctx_ents: list[str]) -> dict[str, Any]:
    return {"metric": "context_entity_recall", "ragas": "ContextEntityRecall",
            "inputs": {"contexts": [" ".join(ctx_ents) or "Nothing here."],
                       "reference": " ".join(ref_ents) or "Nothing named here."},
            "outputs": [{"entities": ref_ents}, {"entities": ctx_ents}]}


def _nv(metric: str, cls: str, ratings: list[int], **inputs: Any) -> dict[str, Any]:
    return {"metric": metric, "ragas": cls, "inputs": inputs,
            "outputs": [{"rating": r} for r in ratings]}


def _correctness(tp: list[str], fp: list[str], fn: list[str], a_st: list[str], g_st: list[str],
                 cos: float) -> dict[str, Any]:
    def items(xs: list[str]) -> list[dict[str, str]]:
        return [{"statement": s, "reason": "r"} for s in xs]
    return {"metric": "answer_correctness", "ragas": "AnswerCorrectness",
            "inputs": {"question": Q, "answer": A, "reference": REF},
            "outputs": [{"statements": a_st}, {"statements": g_st},
                        {"TP": items(tp), "FP": items(fp), "FN": items(fn)}],
            "embeddings": {A: [1.0, 0.0], REF: [cos, math.sqrt(1 - cos * cos)]}}


def _noise(mode: str, ref_v: list[list[int]], ans_v: list[list[int]], ans_ref: list[int]) -> dict[str, Any]:
    """ref_v[k] / ans_v[k]: verdicts of reference / answer statements against context k."""
    g, a = G_ST[:len(ref_v[0]) if ref_v else 2], ST[:len(ans_ref)]
    outs: list[dict[str, Any]] = [{"statements": g}, {"statements": a}]
    for k in range(len(ref_v)):  # ragas asks per context: reference, then answer
        outs += [_nli(g, ref_v[k]), _nli(a, ans_v[k])]
    outs.append(_nli(a, ans_ref))
    return {"metric": "noise_sensitivity", "ragas": "NoiseSensitivity", "kwargs": {"mode": mode},
            "inputs": {"question": Q, "answer": A, "contexts": CTX[:len(ref_v)], "reference": REF},
            "outputs": outs}


CASES: list[dict[str, Any]] = [
    _faith([1, 0, 1]), _faith([1, 1, 1]), _faith([0, 0, 0]), _faith([1]), _faith([]),
    _relevancy([0, 0, 0], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.6, 0.8, 0.0]]),
    _relevancy([0, 1, 0], [[0.8, 0.6, 0.0], [-0.6, 0.8, 0.0], [0.0, 0.0, 1.0]]),
    _relevancy([1, 1, 1], [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]),
    _precision([0, 1, 0, 1]), _precision([1, 1, 1]), _precision([0, 0, 0]), _precision([0, 0, 1]),
    _precision([1, 0, 0]),
    _recall([1, 0, 1]), _recall([1, 1]), _recall([0, 0, 0, 0]), _recall([1]),
    _entities(["Nolan", "Murphy", "Oppenheimer"], ["Nolan", "Oppenheimer"]),
    _entities(["Nolan", "Murphy"], ["Paris"]), _entities(["Nolan", "Murphy"], ["Murphy", "Nolan"]),
    _entities(["Nolan"], []), _entities([], ["Nolan"]),
    _nv("nv_answer_accuracy", "AnswerAccuracy", [4, 2], question=Q, answer=A, reference=REF),
    _nv("nv_answer_accuracy", "AnswerAccuracy", [0, 0], question=Q, answer=A, reference=REF),
    _nv("nv_answer_accuracy", "AnswerAccuracy", [4, 4], question=Q, answer=A, reference=REF),
    _nv("nv_context_relevance", "ContextRelevance", [2, 1], question=Q, contexts=CTX[:2]),
    _nv("nv_context_relevance", "ContextRelevance", [0, 0], question=Q, contexts=CTX[:2]),
    _nv("nv_response_groundedness", "ResponseGroundedness", [2, 1], answer=A, contexts=CTX[:2]),
    _nv("nv_response_groundedness", "ResponseGroundedness", [2, 2], answer=A, contexts=CTX[:2]),
    _correctness([ST[0]], [ST[1], ST[2]], [G_ST[1]], ST, G_ST, 0.6),
    _correctness(ST[:2], [], [], ST[:2], G_ST, 1.0),
    _correctness([], ST[:2], G_ST, ST[:2], G_ST, 0.0),
    _noise("relevant", [[1, 0], [0, 1]], [[1, 0, 1], [0, 1, 0]], [1, 1, 0]),
    _noise("irrelevant", [[1, 0], [0, 0]], [[1, 0, 0], [0, 0, 1]], [1, 1, 0]),
    _noise("relevant", [[1, 1], [1, 1]], [[1, 1, 1], [1, 1, 1]], [1, 1, 1]),
]


def _ragas_classes(ragas_dir: str | None) -> Any:
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from suite.ragas_prompts import import_ragas  # one work-around for ragas 0.4.3's imports

    ragas = import_ragas(ragas_dir)
    if ragas is None:
        raise SystemExit(2)
    from ragas.embeddings.base import BaseRagasEmbedding
    from ragas.llms.base import InstructorBaseRagasLLM
    from ragas.metrics import collections

    class FakeLLM(InstructorBaseRagasLLM):
        """Returns the case's outputs in call order, validated by ragas's response model."""

        def __init__(self, outputs: list[dict[str, Any]]) -> None:
            self.outputs = list(outputs)
            self.models: list[str] = []

        def generate(self, prompt: str, response_model: Any) -> Any:
            if not self.outputs:
                raise RuntimeError("fake LLM exhausted")
            self.models.append(response_model.__name__)
            return response_model.model_validate(self.outputs.pop(0))

        async def agenerate(self, prompt: str, response_model: Any) -> Any:
            return self.generate(prompt, response_model)

    class FakeEmbeddings(BaseRagasEmbedding):
        def __init__(self, table: dict[str, list[float]]) -> None:
            super().__init__()
            self.table = table

        def embed_text(self, text: str, **kw: Any) -> list[float]:
            return self.table[text]

        async def aembed_text(self, text: str, **kw: Any) -> list[float]:
            return self.table[text]

    return ragas.__version__, collections, FakeLLM, FakeEmbeddings


RAGAS_ARGS = {"question": "user_input", "answer": "response", "contexts": "retrieved_contexts",
              "reference": "reference"}


def score_case(case: dict[str, Any], collections: Any, fake_llm: Any, fake_emb: Any) -> dict[str, Any]:
    """ragas's score for one case: ``value`` (None for NaN) or ``error``, and the models it asked for."""
    llm = fake_llm(case["outputs"])
    kw: dict[str, Any] = {"llm": llm, **case.get("kwargs", {})}
    if "embeddings" in case:
        kw["embeddings"] = fake_emb(case["embeddings"])
    metric = getattr(collections, case["ragas"])(**kw)
    args = {RAGAS_ARGS[k]: v for k, v in case["inputs"].items()}
    try:
        value = asyncio.run(metric.ascore(**args)).value
        out: dict[str, Any] = {"value": None if value is None or math.isnan(value) else float(value)}
    except Exception as e:  # ragas's own refusal is part of the golden
        out = {"error": f"{type(e).__name__}: {e}"}
    out["response_models"] = llm.models
    out["unused_outputs"] = len(llm.outputs)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ragas-dir", help="a directory holding ragas (pip install --target DIR ragas)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    version, collections, fake_llm, fake_emb = _ragas_classes(args.ragas_dir)
    cases = [{**c, "ragas_result": score_case(c, collections, fake_llm, fake_emb)} for c in CASES]
    doc = {"generated_by": "scripts/ragas_goldens.py", "ragas_version": version, "cases": cases}
    args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases (ragas {version}) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
