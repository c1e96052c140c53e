"""Helpers for the judge-metric tests: an embedder with chosen vectors, verdict builders."""

from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

import numpy as np

from localeval.metrics import Judging, Metric, decide_empty
from localeval.testing.scripted import ScriptedJudge
from localeval.types import Sample, Score

__all__ = ["TableEmbedder", "verdicts", "run", "unit", "noise_source_and_statements"]


def unit(*xs: float) -> list[float]:
    """``xs`` scaled to length 1, so a test can write the cosine it wants."""
    v = np.asarray(xs, dtype=np.float64)
    return list(v / np.linalg.norm(v))


class TableEmbedder:
    """Vectors chosen per text (so tests can dictate cosines); others hash to a random unit vector."""

    fingerprint = "table"
    name = "table"
    english_only = False

    def __init__(self, table: Mapping[str, Sequence[float]] | None = None, dim: int = 3) -> None:
        self.table = {k: np.asarray(v, dtype=np.float32) for k, v in (table or {}).items()}
        self.dim = dim
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = []
        for t in texts:
            if t in self.table:
                v = self.table[t]
            else:
                seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
                v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows)


def verdicts(*values: int) -> dict[str, Any]:
    """A judge's verdict list with the given 0/1 values, as a script entry."""
    return {"verdicts": [{"reason": f"reason {i}", "verdict": v} for i, v in enumerate(values)]}


def run(metric: Metric, sample: Sample, script: Mapping[str, Any] | ScriptedJudge, *,
        embedder: Any = None, **ctx_kw: Any) -> tuple[Score, ScriptedJudge, Judging]:
    """Score one sample with a scripted judge; returns the score, the judge and the context.

    Empty inputs are decided first, as in a run (``metrics.decide_empty``); judge
    errors are raised, not turned into unscored samples, so tests can catch them.
    """
    judge = script if isinstance(script, ScriptedJudge) else ScriptedJudge(script)
    ctx = Judging(judge=judge, embedder=embedder, **ctx_kw)
    ctx.begin_sample()
    return decide_empty(metric, sample) or metric.score(sample, ctx), judge, ctx


def noise_source_and_statements(request: Any) -> tuple[int | str, list[str]]:
    """What a noise_sensitivity verdict call asks about: the source ("reference" or the
    context number) and the statements, read from its prompt, so a script can answer by text."""
    task = request.messages[1]["content"]
    task = task[task.index("# Task"):]
    named = task.rsplit("Source: ", 1)[1]
    source: int | str = "reference" if named.startswith("the Reference above") else int(
        named.split("context [", 1)[1].split("]", 1)[0])
    listed = task.rsplit("Statements:\n", 1)[1].split("\n\nSource:", 1)[0].splitlines()
    return source, [line.split(". ", 1)[1] for line in listed if line.strip()]
