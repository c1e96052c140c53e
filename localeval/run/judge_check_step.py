"""The run's judge check: the judge on known-answer probes before its first judge call.

``evaluate`` calls ``run_judge_check_step`` once the models are loaded; its
result goes into the summary beside the scores (``summary["judge_check"]``),
never into them, and a crash of the check is a verdict, not the end of the run.
"""

from __future__ import annotations

from typing import Any, Sequence

from localeval.errors import UsageError
from localeval.judge import Judge
from localeval.metrics import Metric

__all__ = ["run_judge_check_step", "check_pairs"]


def check_pairs(judge_check: Any) -> int | None:
    """Pairs per metric for the run's judge check: a number given, else None (the quick check)."""
    if isinstance(judge_check, int) and not isinstance(judge_check, bool):
        if judge_check < 1:
            raise UsageError(f"judge_check must be True, False or a number of pairs >= 1, "
                             f"not {judge_check}")
        return judge_check
    return None


def run_judge_check_step(chosen: Sequence[Metric], judge: Judge | None, embedder: Any, verdicts: str,
                     store: Any, *, enabled: bool, pooled: bool,
                     progress: bool | None, pairs: int | None = None,
                     reasons: str = "full") -> dict[str, Any] | None:
    """The judge check of the run's judge on its judge metrics (``JudgeCheckResult.to_dict()``).

    None when the run has no judge metric; ``{"verdict": "skipped", ...}`` when
    it cannot or should not run. It has its own Judging, so no score changes.
    """
    if not any(m.uses_judge for m in chosen):
        return None
    reason = ("switched off (--no-judge-check)" if not enabled else
              "the judge is loaded by the worker processes, not by this one; "
              "check it with `localeval judge check --judge ...`" if pooled else
              "no judge model" if judge is None else None)
    if reason is not None:
        return {"verdict": "skipped", "reason": reason, "metrics": {},
                "line": f"judge check: skipped ({reason})"}
    from localeval.judge_check import QUICK_PAIRS, run_judge_check
    from localeval.run.progress import RunProgress

    bar: RunProgress | None = None
    last = 0

    def step(done: int, total: int, usage: Any) -> None:
        nonlocal bar, last
        if bar is None:
            bar = RunProgress(total, enabled=progress, description="judge check")
        bar.update(usage, advance=done - last)
        last = done

    try:
        # The quick check (4 pairs per metric, every language): enough to catch a
        # judge that copies, guesses or gives one score; `localeval judge check`
        # runs all ten pairs.
        result = run_judge_check(judge, chosen, embedder=embedder, verdicts=verdicts,
                                 cache=store, on_progress=step, pairs=pairs or QUICK_PAIRS,
                                 reasons=reasons)
    except Exception as e:  # the judge check advises; a crash of it must not end the run
        reason = f"the judge check failed: {type(e).__name__}: {e}"
        return {"verdict": "error", "reason": reason, "metrics": {},
                "line": f"judge check: {reason}"}
    finally:
        if bar is not None:
            bar.close()
    return result.to_dict()

