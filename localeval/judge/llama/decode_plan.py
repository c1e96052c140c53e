"""What the batched decode thread measures, and how many rows its next decode should have.

``EngineStats`` counts where the decode thread's time goes (the benchmark and
``LlamaJudge.batch_stats`` report it). ``padded_rows`` uses the same counts to
decide whether a generation decode of k live sequences should carry dummy
rows: llama.cpp's CPU matrix-matrix kernels work on groups of rows (its
repacked Q4/Q8 kernels take four at a time), so on the machine this was
measured on (2 AVX-512 cores, Qwen2-0.5B shape) a decode of 13 rows took
129 ms and one of 16 took 123 ms, 11 rows 116 ms and 12 rows 105 ms. llama.cpp
offers no cost model and the shape of the curve depends on the CPU, the
quantisation and the GPU (where padding gains nothing), so the engine learns
its own from the decodes it times and pads only towards a row count it has
seen to be cheaper. A dummy row's KV entry is removed at once. A live row in a
padded decode may go through another kernel than in the smaller one, so its
logits can differ in the last float32 bits, as any row of a batched decode
can from the sequential loop's (docs/performance.md, "Identity with
sequential decoding"); replies were identical in every test and bench run
(tests/model/test_judge_batched.py), verdict probabilities within 1e-6.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["EngineStats", "floor_rows", "padded_rows", "prompt_chunks", "reusable", "MIN_SEEN",
           "MARGIN", "MIN_SUFFIX"]

#: Prompt tokens evaluated however much of the prompt is cached, so that the decode whose
#: logits are read has two rows at least (``reusable``).
MIN_SUFFIX = 2
#: A row count's mean cost is trusted once this many decodes of it were timed.
MIN_SEEN = 4
#: Pad only when the larger decode is expected to cost at most this share of the smaller.
MARGIN = 0.97


@dataclass
class EngineStats:
    """Counters of the decode thread: what it decoded, copied and computed in Python."""

    gen_decodes: int = 0  # decodes of generated tokens (one per live sequence)
    gen_rows: int = 0  # generated tokens (live rows; padding not counted)
    gen_seconds: float = 0.0
    pad_rows: int = 0  # dummy rows added to generation decodes (``padded_rows``)
    prompt_decodes: int = 0  # decodes of prompt chunks
    prompt_tokens: int = 0
    prompt_seconds: float = 0.0
    copies: int = 0  # KV streams copied from another slot (a shared prefix)
    copy_seconds: float = 0.0
    waits: int = 0  # admissions put off until a shared prefix was evaluated
    step_seconds: float = 0.0  # per-token Python work after decodes (grammar, UTF-8, pick)
    #: generation decodes by rows decoded, padding included: {rows: [decodes, seconds]}
    gen_by_rows: dict[int, list[float]] = field(default_factory=dict)

    def count_generation(self, live: int, padding: int, seconds: float) -> None:
        """Record one generation decode of ``live`` sequences plus ``padding`` dummy rows."""
        self.gen_decodes += 1
        self.gen_rows += live
        self.pad_rows += padding
        self.gen_seconds += seconds
        entry = self.gen_by_rows.setdefault(live + padding, [0, 0.0])
        entry[0] += 1
        entry[1] += seconds

    def mean_seconds(self, rows: int) -> float | None:
        """Mean time of a generation decode of ``rows`` rows, once ``MIN_SEEN`` were timed."""
        entry = self.gen_by_rows.get(rows)
        if entry is None or entry[0] < MIN_SEEN:
            return None
        return entry[1] / entry[0]

    def to_dict(self) -> dict[str, Any]:
        """The counters, plus the totals over both kinds of decode."""
        out: dict[str, Any] = {k: round(v, 3) if isinstance(v, float) else v
                               for k, v in vars(self).items() if k != "gen_by_rows"}
        # Keys as text: the dict goes into JSON reports, which have no integer keys.
        out["gen_by_rows"] = {str(k): [int(c), round(s, 3)]
                              for k, (c, s) in sorted(self.gen_by_rows.items())}
        out.update(decodes=self.gen_decodes + self.prompt_decodes,
                   batch_tokens=self.gen_rows + self.prompt_tokens,
                   decode_seconds=round(self.gen_seconds + self.prompt_seconds, 3))
        return out


def padded_rows(stats: EngineStats, live: int, spare: int) -> int:
    """Rows the next generation decode should have: ``live`` plus at most ``spare`` dummies.

    The row count with the lowest measured mean cost, when it is below
    ``MARGIN`` times the cost of decoding ``live`` rows alone; ``live`` itself
    while either is unmeasured, so the engine never pads on a guess.
    """
    base = stats.mean_seconds(live)
    if base is None:
        return live
    best, best_cost = live, base * MARGIN
    for rows in range(live + 1, live + spare + 1):
        cost = stats.mean_seconds(rows)
        if cost is not None and cost < best_cost:
            best, best_cost = rows, cost
    return best


def floor_rows(rows: list[int]) -> list[int]:
    """Rows each sequence should have in a generation decode so that it never has one row
    in a micro-batch.

    ``rows``: the rows each sequence carries (all with logits). A row's
    logits are bit-identical whatever the decode's width from two rows on,
    not for one (``drafting.padded``). With one KV stream per sequence
    llama.cpp splits a decode into micro-batches that take equally many rows
    from every sequence still having rows (as many as the shortest has left),
    and attention runs per sequence over those rows. So every sequence needs
    at least two rows, and the row counts, sorted, must step by two or more
    (or not at all): the extra rows are pad rows, removed from the cache after.
    """
    out = list(rows)
    level = 0
    for i in sorted(range(len(rows)), key=rows.__getitem__):
        t = max(rows[i], 2, level)
        if t - level == 1:
            t += 1
        out[i] = level = t
    return out


def reusable(cached: int, prompt_len: int) -> int:
    """How many of the ``cached`` common-prefix tokens a prompt may take from the KV cache.

    All but the last ``MIN_SUFFIX``: the logits after a prompt (its first
    pick, a verdict probability) then always come from a decode of two rows
    or more. A one-row decode runs other llama.cpp kernels, whose float32
    results differ in the last bits (``drafting.padded``), so without this
    rule the same prompt read after a different call (one more token cached)
    could get other logits: results would depend on the order of the calls.
    """
    return max(0, min(cached, prompt_len - MIN_SUFFIX))


def prompt_chunks(n: int, n_batch: int) -> list[int]:
    """Sizes of the decodes that evaluate ``n`` prompt tokens: ``n_batch`` at most each,
    and none of one row (a suffix of ``n_batch`` + 1 is cut ``n_batch`` - 1, 2), for the
    reason in ``reusable``. A one-token prompt is the one exception."""
    sizes: list[int] = []
    while n > 0:
        take = min(n, n_batch)
        if n - take == 1 and take > 2:
            take -= 1
        sizes.append(take)
        n -= take
    return sizes
