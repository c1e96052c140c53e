"""The judge-wide drafting policy (``DraftGovernor``) and what drafting did (``DraftStats``).

Pure Python: the governor sets how many guesses each decode step may carry
and decides ``draft="auto"`` from measured decode times; it holds the judge's
``output_memory.OutputMemory``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from localeval.judge.llama.output_memory import OutputMemory

__all__ = ["DRAFT_MODES", "DraftGovernor", "DraftStats"]

#: ``draft=`` values: never, always, or where the measured speed says it pays.
DRAFT_MODES = ("none", "lookup", "auto")


@dataclass
class DraftStats:
    """What drafting did in one generation: guesses made and kept, decodes run."""

    drafted: int = 0
    accepted: int = 0
    decode_steps: int = 0

    def add(self, other: "DraftStats") -> None:
        self.drafted += other.drafted
        self.accepted += other.accepted
        self.decode_steps += other.decode_steps


class DraftGovernor:
    """The judge-wide drafting policy: how many guesses a step may carry, and the choice.

    A generation decode has two rows at least (``drafting.padded``), so one
    guess rides free in the second row; only guesses past it cost rows.
    Each step therefore carries up to ``step_limit()`` guesses: 0 with
    ``mode`` "none" (the plain loop: a pad row), no limit with "lookup", and
    with "auto" no limit while it is measured to pay, else 1 (the free row).
    Timing, not acceptance alone, decides, because what a row costs depends
    on the model and the device (an extra row is nearly free on a GPU and on
    a memory-bound CPU decode, not on a small model's compute-bound one on 2
    cores). While probing, every ``probe_every``-th step runs with one guess,
    so both kinds of step are timed on the same calls; after ``probe_steps``
    steps the seconds per generated token decide, once, for the life of the
    judge. ``memory`` (``OutputMemory``) is shared by the judge's generations.
    """

    def __init__(self, mode: str = "auto", probe_steps: int = 256, probe_every: int = 4) -> None:
        if mode not in DRAFT_MODES:
            raise ValueError(f"draft must be one of {', '.join(DRAFT_MODES)}")
        self.mode = mode
        self.probe_steps = probe_steps
        self.probe_every = probe_every
        #: whether steps carry as many guesses as the lookup finds (None: still measuring)
        self.decided: bool | None = None if mode == "auto" else mode == "lookup"
        self.memory = OutputMemory() if mode != "none" else None
        self._secs = [0.0, 0.0]  # one guess, many
        self._toks = [0, 0]
        self._steps = 0

    @property
    def enabled(self) -> bool:
        """Whether generations guess at all (every mode but "none")."""
        return self.mode != "none"

    def step_limit(self) -> int | None:
        """Guesses the next step may carry: 0, 1 (the free row) or None (no limit)."""
        if self.mode == "none":
            return 0
        if self.decided is False or (self.decided is None and self._steps % self.probe_every == 0):
            return 1
        return None

    def record(self, drafted: bool, tokens: int, seconds: float) -> None:
        """One decode step that produced ``tokens`` output tokens in ``seconds``.

        ``drafted``: the step had no guess limit (``step_limit()`` was None).
        """
        if self.decided is not None:
            return
        self._steps += 1
        self._secs[drafted] += seconds
        self._toks[drafted] += tokens
        if self._steps >= self.probe_steps and min(self._toks) > 0:
            one, many = (s / t for s, t in zip(self._secs, self._toks))
            self.decided = many < one

    def to_dict(self) -> dict[str, Any]:
        rates = [s / t if t else None for s, t in zip(self._secs, self._toks)]
        return {"mode": self.mode, "drafting": self.decided,
                "seconds_per_token_one_guess": rates[0], "seconds_per_token_drafted": rates[1]}
