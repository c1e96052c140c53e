"""Shared by the label-sheet and estimate tests: a soft-verdict run folder and a full disk."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import numpy as np


def soft_run(tmp: Path, n: int, *, metric: str = "faithfulness",
             unscored: tuple[int, ...] = (), details: bool = True) -> Path:
    """A localeval run folder ``tmp/run``: one judged metric over ``n`` rows, ids q0..,
    each row's soft verdict p in its working; rows in ``unscored`` failed."""
    rng = np.random.default_rng(0)
    d = tmp / "run"
    d.mkdir()
    with open(d / "results.jsonl", "w", encoding="utf-8") as f:
        for i in range(n):
            p = float(rng.uniform(0.05, 0.95))
            v = None if i in unscored else round(p, 4)
            row: dict[str, Any] = {"id": f"q{i}", "question": f"question {i}?",
                                   "scores": {metric: v},
                                   "errors": {metric: "judge failed"} if v is None else {}}
            if details:
                row["details"] = {metric: {"verdicts": [{"p_verdict_1": p}]}}
            f.write(json.dumps(row) + "\n")
    return d


def fill_disk(monkeypatch: Any, fails: str) -> None:
    """Make the atomic writer's ``write`` (or the final ``os.replace``) fail with ENOSPC."""
    import localeval.output.files as files  # the output policy's atomic writer

    full = OSError(errno.ENOSPC, "No space left on device")
    if fails == "rename":
        def replace(src: Any, dst: Any) -> None:
            raise full
        monkeypatch.setattr(os, "replace", replace)
        return
    real_open = open

    class Full:
        def __init__(self, f: Any) -> None:
            self.f = f

        def __enter__(self) -> "Full":
            return self

        def __exit__(self, *exc: Any) -> None:
            self.f.close()

        def write(self, text: str) -> None:
            raise full

    monkeypatch.setattr(files, "open", lambda *a, **k: Full(real_open(*a, **k)), raising=False)


def refused(capsys: Any, argv: list[str], *words: str) -> str:
    """Run the CLI on ``argv``: exit 2 with one error line holding every one of ``words``."""
    from localeval.cli.app import main

    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    for w in words:
        assert w in err, err
    assert "Traceback" not in err and err.count("localeval: error:") == 1, err
    return err


def example_labels(tmp: Path, n: int = 15, cell: Any = lambda i: str(i % 2)) -> Path:
    """``tmp/labels.csv``: ``label_rougeL`` for the bundled example's first ``n`` English rows
    (``cell(i)`` the i-th cell, 0/1 alternating by default)."""
    p = tmp / "labels.csv"
    p.write_text("id,label_rougeL\n" + "".join(f"en-{i + 1:02d},{cell(i)}\n" for i in range(n)),
                 encoding="utf-8")
    return p
