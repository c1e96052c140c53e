"""ragas 0.4's own prompts for the same samples, counted with the judge's tokenizer.

No LLM is involved: ragas's prompt objects are filled with the statements
localeval's run extracted, so both sides see the same inputs, and the
prompts are tokenized with the same GGUF tokenizer and passed through a
simulated single-slot prefix cache. ``ragas_section`` prints and records the
comparison with localeval's calls of the same metrics.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any, Mapping, Sequence

from suite.accounting import calls_of, simulate_prefix_reuse, totals
from suite.tables import format_table

__all__ = ["statements_for", "ragas_calls", "import_ragas", "ragas_section", "NO_RAGAS"]


# -- ragas 0.4's prompts ------------------------------------------------------------------
def statements_for(details: Mapping[str, Any], sample: Any) -> tuple[list[str], list[str]]:
    """The answer's and the reference's statements localeval's run extracted.

    Falls back to the texts' sentences when a metric stopped before asking
    (so ragas is still charged for prompts of a realistic size).
    """
    from localeval.lang import split_sentences

    a = (details.get("answer_correctness", {}).get("answer_statements")
         or details.get("noise_sensitivity", {}).get("answer_statements")
         or details.get("faithfulness", {}).get("statements"))
    g = (details.get("answer_correctness", {}).get("reference_statements")
         or details.get("noise_sensitivity", {}).get("reference_statements"))
    if not a:
        a = split_sentences(sample.answer or "", "en") or [sample.answer or ""]
    if not g:
        g = split_sentences(sample.reference or "", "en") or [sample.reference or ""]
    return list(a), list(g)


def ragas_calls(sample: Any, answer_statements: Sequence[str],
                reference_statements: Sequence[str]) -> list[tuple[str, str, str]]:
    """(metric, prompt name, prompt text) of every LLM call ragas 0.4 makes for ``sample``.

    Uses ragas's own prompt objects (``PydanticPrompt.to_string``) and the
    NVIDIA metrics' string templates, in ragas's per-metric order. Each
    metric is separate in ragas: statement generation is repeated by
    faithfulness, answer_correctness and noise_sensitivity. answer_relevancy
    is ONE call with n=3 (``generate_multiple`` passes n to the LLM; a server
    that ignores n gives one generation); a backend that loops would send it
    3 times. context_relevancy (legacy) has no ragas 0.4 counterpart.
    """
    # import_module, not "from ragas.metrics import _faithfulness": ragas.metrics has
    # attributes of those names (metric instances) that shadow the submodules.
    mod = lambda name: importlib.import_module(f"ragas.metrics.{name}")  # noqa: E731
    ac, ar, ce = mod("_answer_correctness"), mod("_answer_relevance"), mod("_context_entities_recall")
    cp, cr, fa, nv = (mod("_context_precision"), mod("_context_recall"), mod("_faithfulness"),
                      mod("_nv_metrics"))

    q, a, ref = sample.question or "", sample.answer or "", sample.reference or ""
    ctxs = list(sample.contexts or [])
    joined = "\n".join(ctxs)
    A, G = list(answer_statements), list(reference_statements)
    calls: list[tuple[str, str, str]] = []

    def add(metric: str, prompt: Any, data: Any) -> None:
        calls.append((metric, type(prompt).__name__, prompt.to_string(data)))

    stmt = fa.StatementGeneratorPrompt()
    nli = fa.NLIStatementPrompt()
    # faithfulness: statements of the answer, then NLI against the joined contexts
    add("faithfulness", stmt, fa.StatementGeneratorInput(question=q, answer=a))
    add("faithfulness", nli, fa.NLIStatementInput(context=joined, statements=A))
    # answer_relevancy: one generation call (n=strictness=3)
    add("answer_relevancy", ar.ResponseRelevancePrompt(), ar.ResponseRelevanceInput(response=a))
    # context_precision / utilization: one call per context
    cpp = cp.ContextPrecisionPrompt()
    for c in ctxs:
        add("context_precision", cpp, cp.QAC(question=q, context=c, answer=ref))
    for c in ctxs:
        add("context_utilization", cpp, cp.QAC(question=q, context=c, answer=a))
    # context_recall: one classification call over the joined contexts
    add("context_recall", cr.ContextRecallClassificationPrompt(),
        cr.QCA(question=q, context=joined, answer=ref))
    # context_entity_recall: entities of the reference, then of the joined contexts
    ent = ce.ExtractEntitiesPrompt()
    add("context_entity_recall", ent, ce.StringIO(text=ref))
    add("context_entity_recall", ent, ce.StringIO(text=joined))
    # noise_sensitivity: both statement sets, NLI per context for each, answer vs reference
    add("noise_sensitivity", stmt, fa.StatementGeneratorInput(question=q, answer=ref))
    add("noise_sensitivity", stmt, fa.StatementGeneratorInput(question=q, answer=a))
    for c in ctxs:
        add("noise_sensitivity", nli, fa.NLIStatementInput(context=c, statements=G))
        add("noise_sensitivity", nli, fa.NLIStatementInput(context=c, statements=A))
    add("noise_sensitivity", nli, fa.NLIStatementInput(context=ref, statements=A))
    # answer_correctness: both statement sets, then the TP/FP/FN classifier
    add("answer_correctness", stmt, fa.StatementGeneratorInput(question=q, answer=a))
    add("answer_correctness", stmt, fa.StatementGeneratorInput(question=q, answer=ref))
    add("answer_correctness", ac.CorrectnessClassifier(),
        ac.QuestionAnswerGroundTruth(question=q, answer=A, ground_truth=G))
    # NVIDIA metrics: two plain string templates each
    for metric, names, kw in (
        ("nv_context_relevance", ("template_relevance1", "template_relevance2"),
         {"query": q, "context": joined}),
        ("nv_answer_accuracy", ("template_accuracy1", "template_accuracy2"), None),
        ("nv_response_groundedness", ("template_groundedness1", "template_groundedness2"),
         {"response": a, "context": joined}),
    ):
        for i, name in enumerate(names):
            tpl = getattr(nv.ContextRelevance if metric == "nv_context_relevance"
                          else nv.AnswerAccuracy if metric == "nv_answer_accuracy"
                          else nv.ResponseGroundedness, name)
            if kw is None:  # accuracy: the second judge swaps answer and reference
                kw_i = ({"query": q, "answer0": "User Answer", "answer1": "Reference Answer",
                         "sentence_inference": a, "sentence_true": ref} if i == 0 else
                        {"query": q, "answer0": "Reference Answer", "answer1": "User Answer",
                         "sentence_inference": ref, "sentence_true": a})
            else:
                kw_i = kw
            calls.append((metric, name, tpl.format(**kw_i)))
    return calls


def import_ragas(extra_path: str | None = None) -> Any:
    """``ragas``, or None with a message when it cannot be imported.

    ragas 0.4.3 imports ``langchain_community.chat_models.vertexai``, which
    langchain-community 0.4 (what pip resolves today) no longer has; only
    the LLM wrappers use it, never the prompts rendered here, so a stand-in
    module is put in its place when that one import fails.
    """
    if extra_path:
        sys.path.append(extra_path)  # after site-packages: the venv's versions win
    try:
        import ragas
        return ragas
    except ModuleNotFoundError as e:
        if e.name != "langchain_community.chat_models.vertexai":
            print(f"\nragas not importable ({e}): no comparison")
            return None
    except ImportError as e:
        print(f"\nragas not importable ({e}): no comparison (pip install ragas, "
              "or --ragas-path)")
        return None
    import types

    for name in [n for n in sys.modules if n == "ragas" or n.startswith("ragas.")]:
        del sys.modules[name]  # half-imported
    stub = types.ModuleType("langchain_community.chat_models.vertexai")
    stub.ChatVertexAI = type("ChatVertexAI", (), {})  # type: ignore[attr-defined]
    sys.modules[stub.__name__] = stub
    import ragas
    return ragas


def ragas_section(args: argparse.Namespace, samples: Sequence[Any],
                  details: Mapping[str, Any], judge: Any, report: dict[str, Any]
                  ) -> dict[str, float] | None:
    """Render ragas's prompts for the same samples; print and record the comparison."""
    ragas = import_ragas(args.ragas_path)
    if ragas is None:
        return None
    import warnings

    print(f"\n== ragas {ragas.__version__}: its own prompts, same samples, same tokenizer ==")
    by_metric: dict[str, dict[str, int]] = {}
    sent = ev = calls = 0
    per_sample = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in samples:
            A, G = statements_for(details.get(s.id, {}), s)
            rc = ragas_calls(s, A, G)
            toks = [judge.prompt_tokens([{"role": "user", "content": text}])
                    for _, _, text in rc]
            evals = simulate_prefix_reuse(toks)
            s_sent = sum(len(t) for t in toks)
            sent += s_sent
            ev += sum(evals)
            calls += len(rc)
            per_sample.append({"name": s.id, "calls": len(rc), "prompt_tokens": s_sent,
                               "evaluated_tokens": sum(evals)})
            for (metric, _, _), t, e in zip(rc, toks, evals):
                d = by_metric.setdefault(metric, {"name": metric, "calls": 0,
                                                  "prompt_tokens": 0, "evaluated_tokens": 0})
                d["calls"] += 1
                d["prompt_tokens"] += len(t)
                d["evaluated_tokens"] += e
    cols = [("name", ""), ("calls", "calls"), ("prompt_tokens", "prompt sent"),
            ("evaluated_tokens", "evaluated (1-slot prefix cache)")]
    print(format_table(list(by_metric.values()), cols))
    n = max(1, len(samples))
    # Like for like: localeval's calls of the metrics ragas 0.4 also has.
    loc = totals(r for r in calls_of(report["run"]["calls"]) if r.metric not in NO_RAGAS)
    r_tot = {"calls": calls / n, "prompt_tokens": sent / n, "evaluated_tokens": ev / n}
    print(f"\nper sample: ragas {r_tot['calls']:.1f} calls, {r_tot['prompt_tokens']:.0f} "
          f"prompt tokens sent, {r_tot['evaluated_tokens']:.0f} evaluated with a single-slot "
          f"prefix cache (no cache: all {r_tot['prompt_tokens']:.0f})")
    print(f"localeval / ragas: calls {loc['calls'] / n / r_tot['calls']:.2f}, prompt tokens "
          f"sent {loc['prompt_tokens'] / sent:.2f}, evaluated {loc['evaluated_tokens'] / sent:.2f} "
          f"(vs ragas without a prefix cache) / {loc['evaluated_tokens'] / ev:.2f} "
          f"(vs ragas with one)")
    print("note: context_relevancy has no ragas 0.4 counterpart and is left out of these "
          "ratios; ragas prompts are filled with the statements localeval extracted"
          + ("" if details else " (here: the texts' sentences)"))
    report["ragas"] = {"version": ragas.__version__, "per_metric": list(by_metric.values()),
                       "per_sample": per_sample, "per_sample_avg": r_tot,
                       "localeval_same_metrics_per_sample": {k: v / n for k, v in loc.items()}}
    return r_tot


#: Metrics localeval has and ragas 0.4 does not: left out of the like-for-like ratio.
NO_RAGAS = frozenset({"context_relevancy"})
