"""BLEU, equal to sacrebleu's: sentence BLEU per sample and corpus BLEU.

Numbers equal sacrebleu on English (except that a perfect match is exactly 1.0,
where sacrebleu's arithmetic gives a few ulps above 100): its tokenizers and its ``compute_bleu``
arithmetic (``weighted_bleu`` repeats that arithmetic for per-order weights,
which sacrebleu lacks). n-gram counting runs vectorised over the whole
dataset (``localeval.metrics.ngrams``), because the runner hands
``score_batch`` every sample at once; Japanese and Chinese are tokenised
into words (``localeval.lang``), since sacrebleu has no Japanese tokenizer
without MeCab + ipadic.

Scores are on a 0-1 scale like every localeval metric; sacrebleu prints
BLEU on 0-100, so ``bleu`` = sacrebleu's score / 100.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np

from localeval.lang import auto_bleu_tokenizer, bleu_tokens, check_bleu_tokenizer
from localeval.metrics.base import Metric
from localeval.metrics.model_access import Judging
from localeval.metrics.ngrams import encode_pairs, ngram_matches
from localeval.metrics.specs import register
from localeval.metrics.text_pairs import filled, pair_language, split_missing
from localeval.types import Sample, Score

__all__ = ["Bleu", "corpus_bleu", "corpus_bleu_from_scores", "weighted_bleu"]

Smoothing = Literal["none", "floor", "add-k", "exp"]


def weighted_bleu(correct: Sequence[float], total: Sequence[float], sys_len: int, ref_len: int,
                  weights: Sequence[float], smoothing: str = "exp",
                  smooth_value: float | None = None, effective_order: bool = False) -> float:
    """BLEU (0-100) with per-order weights, from sacrebleu's sufficient statistics.

    sacrebleu has no weights option (``BLEU.compute_bleu`` takes the plain
    mean of the log precisions), so this is its ``compute_bleu`` step for step
    (brevity penalty, early exit on no matches, add-k / floor / exp smoothing,
    effective order) with a weighted mean in place of the plain one. Weights
    are normalised over the orders that count (all of them, or the effective
    ones), so uniform weights give sacrebleu's number.
    """
    from sacrebleu.metrics.bleu import BLEU
    from sacrebleu.utils import my_log

    # sacrebleu's default k for add-k and floor; "exp" and "none" use none (0.0 is never read)
    k: float = smooth_value if smooth_value is not None else (BLEU.SMOOTH_DEFAULTS[smoothing] or 0.0)
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    order = len(weights)
    correct, total = list(correct), list(total)
    if not any(correct):
        return 0.0
    precisions = [0.0] * order
    smooth_mteval = 1.0
    eff = order
    for n in range(1, order + 1):
        if smoothing == "add-k" and n > 1:
            correct[n - 1] += k
            total[n - 1] += k
        if total[n - 1] == 0:
            break
        if effective_order:
            eff = n
        if correct[n - 1] == 0:
            if smoothing == "exp":
                smooth_mteval *= 2
                precisions[n - 1] = 100.0 / (smooth_mteval * total[n - 1])
            elif smoothing == "floor":
                precisions[n - 1] = 100.0 * k / total[n - 1]
        else:
            precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1]
    wsum = sum(weights[:eff])
    if wsum <= 0:  # only zero-weight orders exist in this segment: nothing to average
        return 0.0
    log_mean = sum(w * my_log(p) for w, p in zip(weights[:eff], precisions[:eff]) if w) / wsum
    return bp * math.exp(log_mean)


@register
@dataclass(frozen=True)
class Bleu(Metric):
    """Sentence BLEU per sample, exactly sacrebleu's ``sentence_bleu``
    (effective order on), on a 0-1 scale.

    Parameters: ``max_order`` (n-gram orders 1..max_order), ``weights`` (one
    per order, default uniform; trailing zero weights drop those orders),
    ``smoothing`` (sacrebleu's ``none`` / ``floor`` / ``add-k`` / ``exp``),
    ``smooth_value`` (floor / add-k constant; sacrebleu's defaults 0.1 / 1),
    ``tokenize`` (``auto``: 13a for English, fugashi for Japanese, jieba for
    Chinese; or any sacrebleu tokenizer name, ``ja-fugashi``, ``zh-jieba``),
    ``lowercase``.

    Corpus BLEU is not a mean of sentence BLEUs: each sample's details carry
    the sufficient statistics (counts, totals, hyp_len, ref_len), and
    ``corpus_bleu_from_scores`` / ``Bleu.corpus_score`` sum them into
    sacrebleu's corpus BLEU.
    """

    name = "bleu"
    requires = ("answer", "reference")
    description = "sentence BLEU of the answer against the reference (sacrebleu, 0-1)"

    max_order: int = 4
    weights: tuple[float, ...] | None = None
    smoothing: Smoothing = "exp"
    smooth_value: float | None = None
    tokenize: str = "auto"
    lowercase: bool = False

    def __post_init__(self) -> None:
        if self.max_order < 1:
            raise ValueError("max_order must be at least 1")
        if self.smoothing not in ("none", "floor", "add-k", "exp"):
            raise ValueError("smoothing must be one of none, floor, add-k, exp")
        if self.smooth_value is not None and self.smooth_value <= 0:
            raise ValueError("smooth_value must be positive")
        if self.weights is not None:
            w = tuple(float(x) for x in self.weights)
            object.__setattr__(self, "weights", w)
            if len(w) != self.max_order:
                raise ValueError(f"weights has {len(w)} entries but max_order is {self.max_order};"
                                 f" give one weight per n-gram order (e.g. max_order={len(w)})")
            if any(x < 0 or math.isnan(x) for x in w) or not any(w):
                raise ValueError("weights must be non-negative and not all zero")
        if self.tokenize != "auto":
            check_bleu_tokenizer(self.tokenize)

    # -- configuration helpers
    @property
    def orders(self) -> int:
        """n-gram orders actually counted (trailing zero weights dropped: exact,
        because orders above the last weighted one cannot change the score)."""
        if self.weights is None:
            return self.max_order
        return max(i + 1 for i, x in enumerate(self.weights) if x > 0)

    def _uniform(self) -> bool:
        if self.weights is None:
            return True
        used = self.weights[: self.orders]
        return all(x == used[0] for x in used)

    def _tokenizer_for(self, sample: Sample, ctx: Judging | None) -> str:
        if self.tokenize != "auto":
            return self.tokenize
        return auto_bleu_tokenizer(pair_language("auto", ctx, sample.reference or "",
                                                 sample.answer or ""))

    def bleu_from_stats(self, correct: Sequence[float], total: Sequence[float], sys_len: int,
                        ref_len: int, *, effective_order: bool) -> float:
        """BLEU on sacrebleu's 0-100 scale from one set of sufficient statistics.

        At most 100: sacrebleu's exp(mean of logs) of precisions of 100 comes out a few
        ulps above it (100.00000000000004 for identical texts), and a perfect match
        must read 1.0 exactly (a gate at 1.0, ``== 1.0`` in a test).
        """
        return min(100.0, self._bleu(correct, total, sys_len, ref_len,
                                     effective_order=effective_order))

    def _bleu(self, correct: Sequence[float], total: Sequence[float], sys_len: int,
              ref_len: int, *, effective_order: bool) -> float:
        if self._uniform():
            from sacrebleu.metrics.bleu import BLEU

            # sacrebleu's own arithmetic: equal to the last bit. (It mutates
            # the lists for add-k, hence the copies.)
            return BLEU.compute_bleu(list(correct), list(total),  # type: ignore[arg-type]  # counts: sacrebleu's hints say int
                                     sys_len, ref_len,
                                     smooth_method=self.smoothing, smooth_value=self.smooth_value,
                                     effective_order=effective_order,
                                     max_ngram_order=self.orders).score
        weights = self.weights or (1.0,) * self.orders  # None is uniform, taken above
        return weighted_bleu(correct, total, sys_len, ref_len, weights[: self.orders],
                             self.smoothing, self.smooth_value, effective_order)

    # -- statistics
    def statistics(self, samples: Sequence[Sample], ctx: Judging | None = None
                   ) -> tuple[np.ndarray, list[str]]:
        """sacrebleu's per-segment statistics for each sample: rows
        ``[hyp_len, ref_len, correct_1..N, total_1..N]``, and the tokenizer used."""
        names = [self._tokenizer_for(s, ctx) for s in samples]
        hyps = [bleu_tokens(s.answer or "", t, self.lowercase) for s, t in zip(samples, names)]
        refs = [bleu_tokens(s.reference or "", t, self.lowercase) for s, t in zip(samples, names)]
        batch = encode_pairs(refs, hyps)
        N = self.orders
        stats = np.zeros((len(samples), 2 + 2 * N), dtype=np.int64)
        stats[:, 0] = batch.hyp_len
        stats[:, 1] = batch.ref_len
        stats[:, 2:2 + N] = ngram_matches(batch, N)
        stats[:, 2 + N:] = np.maximum(batch.hyp_len[:, None] - np.arange(N)[None, :], 0)
        return stats, names

    def score(self, sample: Sample, ctx: Judging | None = None) -> Score:
        return self.score_batch([sample], ctx)[0]

    def score_batch(self, samples: Sequence[Sample], ctx: Judging | None = None) -> list[Score]:
        out, todo = split_missing(samples, self.requires)
        stats, names = self.statistics([samples[i] for i in todo], ctx)
        N = self.orders
        for row, name, i in zip(stats.tolist(), names, todo):
            correct, total = row[2:2 + N], row[2 + N:]
            value = self.bleu_from_stats(correct, total, row[0], row[1], effective_order=True)
            out[i] = Score(value / 100.0, details={
                "counts": correct, "totals": total, "hyp_len": row[0], "ref_len": row[1],
                "tokenize": name})
        return filled(out)

    def corpus_from_scores(self, scores: Sequence[Score]) -> Score:
        """Corpus BLEU from this metric's per-sample scores (the runner's summary hook)."""
        return corpus_bleu_from_scores(scores, self)

    def corpus_score(self, samples: Sequence[Sample], ctx: Judging | None = None) -> Score:
        """Corpus BLEU (sacrebleu's ``corpus_bleu``: summed statistics, no
        effective order) of the samples that have both texts."""
        return corpus_bleu_from_scores(self.score_batch(samples, ctx), self)


def corpus_bleu_from_scores(scores: Sequence[Score], metric: Bleu | None = None) -> Score:
    """Corpus BLEU from per-sample bleu Scores (their details' statistics).

    Lets the runner (and a bootstrap over samples) get corpus BLEU without
    re-tokenising: sum the statistics of the resampled scores and call this.
    """
    metric = metric or Bleu()
    N = metric.orders
    rows = [s.details for s in scores if s.scored and "counts" in s.details]
    if not rows:
        return Score.unscored("no scored samples")
    if any(len(r["counts"]) != N for r in rows):
        raise ValueError(f"scores were not made by {metric.key}: n-gram orders differ")
    correct = [sum(r["counts"][n] for r in rows) for n in range(N)]
    total = [sum(r["totals"][n] for r in rows) for n in range(N)]
    sys_len = sum(r["hyp_len"] for r in rows)
    ref_len = sum(r["ref_len"] for r in rows)
    value = metric.bleu_from_stats(correct, total, sys_len, ref_len, effective_order=False)
    return Score(value / 100.0, details={"counts": correct, "totals": total, "hyp_len": sys_len,
                                         "ref_len": ref_len, "n": len(rows)})


def corpus_bleu(samples: Sequence[Sample], metric: Bleu | str | None = None,
                ctx: Judging | None = None) -> Score:
    """Corpus BLEU of ``samples`` for a ``Bleu`` metric (or spec such as
    ``"bleu:max_order=2"``; default ``Bleu()``)."""
    chosen: object = metric
    if isinstance(metric, str):
        from localeval.metrics.specs import parse_metrics

        (chosen,) = parse_metrics(metric)
    if chosen is None:
        chosen = Bleu()
    if not isinstance(chosen, Bleu):
        raise TypeError("corpus_bleu needs a bleu metric")
    return chosen.corpus_score(samples, ctx)
