"""Benchmark localeval's retrieval and text metrics against the reference tools.

    .venv/bin/python scripts/bench_retrieval_text.py [--queries 10000] [--pairs 10000]

Measured in one run, on the same generated data, best of ``--repeat`` timings:

- ndcg@10 + map + mrr over N queries vs pytrec_eval (evaluator construction
  + evaluate, the same three measures);
- sentence BLEU of N pairs + corpus BLEU vs sacrebleu (one BLEU object,
  ``sentence_score`` per pair, ``corpus_score`` once);
- rouge1 + rouge2 + rougeL of N pairs vs rouge-score's ``RougeScorer`` with
  the three types, without and with stemming.

Ours runs the metric objects the way the runner does (``score_batch`` on the
whole dataset, one ``Judging`` per run), so the time includes building the
``Score`` objects. Tokenizer and stemmer caches (sacrebleu's lru_caches,
localeval's) are cleared before every timing so no side reuses the previous
pass. The printed "speed-up" is reference time / localeval time; every
section also checks that the numbers agree.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import time
from typing import Callable

import numpy as np

__all__ = ["main"]


def _best(fn: Callable[[], object], repeat: int, before: Callable[[], None] = lambda: None
          ) -> tuple[tuple[float, float], object]:
    """Best (CPU seconds, wall seconds) of ``repeat`` runs, and the last result.

    CPU time of this process is the primary number: both sides are
    single-threaded, and CPU time stays meaningful on a shared, loaded
    machine where wall time does not.
    """
    best_cpu = best_wall = float("inf")
    out = None
    for _ in range(repeat):
        before()
        gc.collect()
        c, w = time.process_time(), time.perf_counter()
        out = fn()
        best_cpu = min(best_cpu, time.process_time() - c)
        best_wall = min(best_wall, time.perf_counter() - w)
    return (best_cpu, best_wall), out


def _report(name: str, ref_name: str, t_ref: tuple[float, float], t_ours: tuple[float, float],
            agree: str) -> None:
    print(f"{name:<38} {ref_name:<12} {t_ref[0]:7.3f} s  localeval {t_ours[0]:7.3f} s  "
          f"speed-up x{t_ref[0] / t_ours[0]:5.2f} (wall x{t_ref[1] / t_ours[1]:5.2f})  {agree}")


# -- data ------------------------------------------------------------------------
def retrieval_data(n: int, docs: int, seed: int):
    from localeval.types import Sample

    rng = np.random.default_rng(seed)
    samples, qrels, run = [], {}, {}
    for q in range(n):
        ranking = [f"doc{x}" for x in rng.choice(docs * 50, docs, replace=False)]
        judged = [f"doc{x}" for x in rng.choice(docs * 50, 30, replace=False)]
        judged += ranking[: int(rng.integers(0, 8))]
        grades = {d: int(g) for d, g in zip(judged, rng.integers(0, 4, len(judged)))}
        qid = f"q{q}"
        samples.append(Sample(id=qid, retrieved_ids=ranking,
                              relevant_ids={d: float(g) for d, g in grades.items()}))
        qrels[qid] = grades
        run[qid] = {d: float(docs - i) for i, d in enumerate(ranking)}
    return samples, qrels, run


def text_data(n: int, seed: int) -> tuple[list[str], list[str]]:
    """English-like sentence pairs: Zipfian vocabulary with inflected forms
    (so stemming matters), punctuation, 5-40 words; hypotheses drop, keep
    and insert words."""
    rng = random.Random(seed)
    syl = ["ka", "to", "ri", "men", "sor", "lan", "vi", "dor", "pel", "qua", "ste", "ron", "mi"]
    suffix = ["", "", "", "s", "ed", "ing", "ly", "ation", "ness", "er"]
    vocab = ["".join(rng.choice(syl) for _ in range(rng.randint(1, 3))) + rng.choice(suffix)
             for _ in range(3000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    refs, hyps = [], []
    for _ in range(n):
        words = rng.choices(vocab, weights=weights, k=rng.randint(5, 40))
        ref = " ".join(words).capitalize() + rng.choice([".", "!", "?", "", ", right."])
        hyp = [w for w in ref.split() if rng.random() > 0.3]
        for _ in range(rng.randint(0, 5)):
            hyp.insert(rng.randint(0, len(hyp)), rng.choice(vocab))
        refs.append(ref)
        hyps.append(" ".join(hyp))
    return refs, hyps


# -- sections --------------------------------------------------------------------
def bench_retrieval(n: int, docs: int, seed: int, repeat: int) -> None:
    import pytrec_eval

    from localeval.metrics import Judging, parse_metrics

    samples, qrels, run = retrieval_data(n, docs, seed)
    measures = {"ndcg_cut.10", "map", "recip_rank"}
    t_ref, ref = _best(lambda: pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run),
                       repeat)
    metrics = parse_metrics("ndcg@10,map,mrr")

    def ours():
        ctx = Judging()  # one per run, as the runner makes it
        return [m.score_batch(samples, ctx) for m in metrics]

    t_ours, got = _best(ours, repeat)
    diff = max(abs(s.value - ref[x.id][meas])
               for scores, meas in zip(got, ("ndcg_cut_10", "map", "recip_rank"))
               for x, s in zip(samples, scores))
    _report(f"ndcg@10+map+mrr, {n} queries x {docs}", "pytrec_eval", t_ref, t_ours,
            f"max |diff| {diff:.1e}")


def _clear_text_caches() -> None:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

    from localeval.lang import porter_stem
    from localeval.metrics.rouge import cached_rouge_batch

    Tokenizer13a.__call__.cache_clear()
    TokenizerRegexp.__call__.cache_clear()
    porter_stem.cache_clear()
    cached_rouge_batch.cache_clear()


def bench_bleu(refs: list[str], hyps: list[str], repeat: int) -> None:
    from sacrebleu.metrics.bleu import BLEU

    from localeval.metrics import Bleu, Judging, corpus_bleu_from_scores
    from localeval.types import Sample

    samples = [Sample(id=str(i), reference=r, answer=h)
               for i, (r, h) in enumerate(zip(refs, hyps))]

    def reference():
        sentence = BLEU(effective_order=True)
        scores = [sentence.sentence_score(h, [r]).score for r, h in zip(refs, hyps)]
        return scores, BLEU().corpus_score(hyps, [refs]).score

    def ours():
        metric = Bleu()
        scores = metric.score_batch(samples, Judging())
        return scores, corpus_bleu_from_scores(scores, metric)

    t_ref, (ref_scores, ref_corpus) = _best(reference, repeat, _clear_text_caches)
    t_ours, (scores, corpus) = _best(ours, repeat, _clear_text_caches)
    same = sum(s.value == r / 100 for s, r in zip(scores, ref_scores))
    _report(f"BLEU sentence+corpus, {len(refs)} pairs", "sacrebleu", t_ref, t_ours,
            f"{same}/{len(refs)} equal, corpus {corpus.value * 100:.4f} vs {ref_corpus:.4f}")


def bench_rouge(refs: list[str], hyps: list[str], repeat: int, stem: bool) -> None:
    from rouge_score import rouge_scorer

    from localeval.metrics import Judging, Rouge1, Rouge2, RougeL
    from localeval.types import Sample

    samples = [Sample(id=str(i), reference=r, answer=h)
               for i, (r, h) in enumerate(zip(refs, hyps))]
    kinds = ["rouge1", "rouge2", "rougeL"]

    def reference():
        scorer = rouge_scorer.RougeScorer(kinds, use_stemmer=stem)
        return [scorer.score(r, h) for r, h in zip(refs, hyps)]

    def ours():
        ctx = Judging()
        return [m.score_batch(samples, ctx)
                for m in (Rouge1(stem=stem), Rouge2(stem=stem), RougeL(stem=stem))]

    t_ref, ref = _best(reference, repeat, _clear_text_caches)
    t_ours, got = _best(ours, repeat, _clear_text_caches)
    same = sum((s.details["precision"], s.details["recall"], s.details["fmeasure"])
               == (e[k].precision, e[k].recall, e[k].fmeasure)
               for k, scores in zip(kinds, got) for s, e in zip(scores, ref))
    _report(f"ROUGE-1/2/L stem={stem}, {len(refs)} pairs", "rouge-score", t_ref, t_ours,
            f"{same}/{3 * len(refs)} equal")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=100, help="ranking length per query")
    ap.add_argument("--pairs", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3, help="timings per side; the best is kept")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import pytrec_eval  # noqa: F401  (imports outside the timings)
    import rouge_score  # noqa: F401
    import sacrebleu

    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"sacrebleu {sacrebleu.__version__}, {platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}; CPU seconds, best of {args.repeat}")
    # Warm-up: lazy imports and module-level setup are not what we measure.
    bench_retrieval(50, 10, args.seed + 1, 1)
    refs, hyps = text_data(50, args.seed + 1)
    bench_bleu(refs, hyps, 1)
    bench_rouge(refs, hyps, 1, stem=True)
    print("-- measured --")
    bench_retrieval(args.queries, args.docs, args.seed, args.repeat)
    refs, hyps = text_data(args.pairs, args.seed)
    bench_bleu(refs, hyps, args.repeat)
    bench_rouge(refs, hyps, args.repeat, stem=False)
    bench_rouge(refs, hyps, args.repeat, stem=True)


if __name__ == "__main__":
    main()
