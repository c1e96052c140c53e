"""The selection steps with a real small instruct judge: SmolLM2-135M-Instruct.

SmolLM2 cannot judge (it copies the prompts' examples and loops), which makes
it the right adversary for the steps that pick from their inputs: whatever it
writes, answer_correctness may list only the extracted statements, each in
one class; context_relevancy only sentences of the contexts; context_recall
only sentences of the reference; context_entity_recall only entities found in
their source. Statements are merged before verdicts, every call's worst-case
output fits in the context left after its prompt, and two runs agree.
"""

from __future__ import annotations

import json

import pytest

import localeval
from localeval.cli.app import example_path
from localeval.judge import LlamaJudge
from localeval.judge.grammar import max_tokens_for
from localeval.lang import normalise, resolve_lang, split_sentences
from localeval.metrics import parse_metrics
from localeval.metrics.output_bounds import occurs_in

METRICS = ["answer_correctness:weights=1,0", "context_relevancy", "context_recall",
           "context_entity_recall"]
CORRECTNESS = parse_metrics(METRICS[:1])[0].key
#: The only reasons a metric may be unscored here: failures of the judge that the run
#: detects (its reply was the example's, or it extracted nothing from a non-empty text).
COPIED = "judge copied the prompt's example"
EXTRACTED_NOTHING = "judge extracted nothing from a non-empty "

class Recording:
    """Passes requests to the judge and keeps each one's budget and prompt size."""

    def __init__(self, inner: LlamaJudge) -> None:
        self.inner, self.fingerprint, self.name = inner, inner.fingerprint, inner.name
        self.calls: list[tuple[str, int, int]] = []  # step, worst-case output, prompt tokens

    def ask(self, request):
        prompt = len(self.inner.prompt_tokens(request.messages))
        self.calls.append((request.step, max_tokens_for(request.schema), prompt))
        return self.inner.ask(request)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, smollm2):
    """An English and a Japanese sample, then the English one again on its own."""
    rows = [json.loads(x) for x in example_path().read_text(encoding="utf-8").splitlines()]
    pick = [next(r for r in rows if r["id"] == "en-11"), next(r for r in rows if r["id"] == "ja-01")]
    d = tmp_path_factory.mktemp("smol")
    both, en = d / "both.jsonl", d / "en.jsonl"
    both.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in pick), "utf-8")
    en.write_text(json.dumps(pick[0], ensure_ascii=False) + "\n", "utf-8")
    llama = LlamaJudge(smollm2)
    judge = Recording(llama)
    kw = dict(judge=judge, embedder=False, cache=False, progress=False, judge_check=False)
    first = localeval.evaluate(both, METRICS, **kw)
    again = localeval.evaluate(en, METRICS, **kw)
    yield first, again, judge, llama.n_ctx, rows
    llama.close()


def _records(res):
    return {r["id"]: r for r in res.records()}


def test_every_metric_scored_or_copy_detected(runs):
    first, _, judge, _, _ = runs
    keys = {m.key for m in parse_metrics(METRICS)}
    for rec in first.records():
        assert set(rec["scores"]) == keys
        for key, reason in rec["errors"].items():
            # no parse failure, no truncation
            assert reason == COPIED or reason.startswith(EXTRACTED_NOTHING), (rec["id"], key, reason)
    # 8 scores: most are scored (the demo judge extracts no entities from en-11's reference,
    # which is now unscored as a detected judge failure instead of a score)
    assert sum(v is not None for rec in first.records() for v in rec["scores"].values()) >= 5
    assert {step for step, _, _ in judge.calls} == {
        "statements", "answer_correctness", "context_relevancy", "context_recall", "entities"}


def test_correctness_classes_are_the_extracted_statements(runs):
    for rec in runs[0].records():
        d = rec["details"].get(CORRECTNESS)
        if not d or "TP" not in d:
            continue
        a_st, g_st = d["answer_statements"], d["reference_statements"]
        tp, fp, fn = ([i["statement"] for i in d[k]] for k in ("TP", "FP", "FN"))
        assert sorted(tp + fp) == sorted(a_st), rec["id"]  # each answer statement once
        assert not set(tp) & set(fp)
        assert set(fn) <= set(g_st) and len(fn) == len(set(fn))
        for side in (a_st, g_st):  # duplicates were merged before the verdicts
            assert len({normalise(s) for s in side}) == len(side), side


def test_selected_and_classified_sentences_come_from_the_sample(runs):
    _, _, _, _, rows = runs
    by_id = {r["id"]: r for r in rows}
    checked = 0
    for rec in runs[0].records():
        row = by_id[rec["id"]]
        lang = resolve_lang("auto", row["question"], row["answer"])
        rel = rec["details"].get("context_relevancy")
        if rel and "selected" in rel:
            sentences = split_sentences("\n".join(row["contexts"]), lang)
            assert rel["sentences"] == [sentences[i - 1] for i in rel["selected"]]
            assert len(set(rel["selected"])) == len(rel["selected"])
            assert rec["scores"]["context_relevancy"] == len(rel["selected"]) / len(sentences)
            checked += 1
        rec_d = rec["details"].get("context_recall")
        if rec_d and rec_d.get("classifications"):
            assert [c["statement"] for c in rec_d["classifications"]] == split_sentences(
                row["reference"], lang)
            checked += 1
        ent = rec["details"].get("context_entity_recall")
        if ent:
            for e in ent["reference_entities"]:
                assert occurs_in(e, row["reference"]), e
            for e in ent.get("context_entities", []):
                assert occurs_in(e, "\n".join(row["contexts"])), e
            assert ent["dropped"] == len(ent["dropped_reference_entities"]) + len(
                ent.get("dropped_context_entities", []))
            checked += 1
    assert checked >= 4


def test_every_budget_fits_in_the_context(runs):
    _, _, judge, n_ctx, _ = runs
    assert judge.calls
    for step, budget, prompt in judge.calls:
        assert prompt + budget <= n_ctx, (step, prompt, budget)
    # the bounds follow the inputs (one-sentence answers and references, short
    # contexts), far below the fixed caps' 17,426 (statements) and 43,345 tokens
    worst = {step: max(b for s, b, _ in judge.calls if s == step) for step, _, _ in judge.calls}
    assert worst["statements"] < 2000 and worst["context_relevancy"] < 60


def test_deterministic_across_runs(runs):
    first, again, _, _, _ = runs
    assert _records(again)["en-11"] == _records(first)["en-11"]
