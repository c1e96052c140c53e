"""A new user's trial in miniature: two versions of a pipeline and a judge that fails its check.

Version 1 is the first rows of the bundled example; version 2 swaps some
answers for other rows' answers (marked ``SWAPPED_MARK``), as a regression
would. ``unfit_judge`` answers every step with its most favourable output, so
it cannot tell good from bad (the judge check finds it unfit), and its call
fails on the swapped answers' statements, which leaves them unscored. The
end-to-end test of fitness and unscored rows and the docs' screenshots
(scripts/unfit_judge_screenshots.py) both build on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from localeval.errors import JudgeCallError
from localeval.output import write_text
from localeval.testing.scripted import ScriptedJudge, auto_output

__all__ = ["SWAPPED_MARK", "SWAPPED", "trial_versions", "unfit_judge"]

SWAPPED_MARK = "HALLUCINATED:"
#: the rows whose answers version 2 swaps
SWAPPED = (1, 3, 5, 8, 10)


def trial_versions(folder: Path, *, rows: int = 12, swapped: Sequence[int] = SWAPPED
                   ) -> tuple[Path, Path]:
    """Write ``v1.jsonl`` and ``v2.jsonl`` into ``folder``; returns their paths."""
    from importlib.resources import files

    text = (files("localeval.data") / "example.jsonl").read_text(encoding="utf-8")
    data = [json.loads(x) for x in text.splitlines() if x.strip()][:rows]
    v1, v2 = folder / "v1.jsonl", folder / "v2.jsonl"
    write_text(v1, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data))
    for i in swapped:
        data[i] = {**data[i], "answer": SWAPPED_MARK + " " + data[(i + 6) % rows]["answer"]}
    write_text(v2, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data))
    return v1, v2


def unfit_judge() -> ScriptedJudge:
    """The most favourable output everywhere; a failed call on the swapped answers."""
    def statements(request: Any) -> Any:
        if any(SWAPPED_MARK in str(m.get("content", "")) for m in request.messages):
            raise JudgeCallError("the judge's reply was cut off")
        return auto_output(request.schema)
    return ScriptedJudge({"statements": statements}, auto=True)
