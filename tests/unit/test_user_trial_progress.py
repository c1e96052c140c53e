"""User trial: a run in a pipe printed nothing for 17 minutes, and CI killed it."""

from __future__ import annotations

import json
import time

import localeval.run.progress as progress
from localeval.cli.app import main
from localeval.judge import Usage
from localeval.run.progress import RunProgress


def test_plain_line_every_interval_with_a_fake_clock(capsys):
    u = Usage()
    bar = RunProgress(40, enabled=None, usage=u, interval=30.0)  # stderr: captured, not a tty
    try:
        assert bar.plain and not bar.enabled
        t0 = bar._t0
        assert not bar.tick(t0 + 29.0)  # not yet
        assert bar.tick(t0 + 30.0)
        bar.update(u)
        assert not bar.tick(t0 + 45.0)
        assert bar.tick(t0 + 60.5)
    finally:
        bar.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("localeval: evaluating 0/40 samples, 0:00:30 elapsed, eta ")
    assert lines[1].startswith("localeval: evaluating 1/40 samples, 0:01:00 elapsed, eta ")
    assert len(lines) == 2


def test_quiet_and_terminal_runs_print_no_plain_line(capsys):
    for enabled in (False,):
        bar = RunProgress(5, enabled=enabled, interval=0.0)
        assert not bar.plain and not bar.tick(time.perf_counter() + 100)
        bar.close()
    assert capsys.readouterr().err == ""


def test_a_piped_cli_run_prints_progress_lines_and_quiet_silences_them(tmp_path, capsys,
                                                                       monkeypatch):
    data = tmp_path / "d.jsonl"
    with open(data, "w", encoding="utf-8") as f:
        for i in range(3):
            f.write(json.dumps({"id": f"q{i}", "question": f"Question {i}?",
                                "answer": "Paris is the capital of France.",
                                "contexts": ["Paris is the capital of France."]}) + "\n")
    monkeypatch.setattr(progress, "PLAIN_INTERVAL", 0.01)
    # a judge that takes a little while per call, so the ticker gets to run
    from localeval.testing import OracleJudge

    class Slow(OracleJudge):
        def ask(self, request):
            time.sleep(0.05)
            return super().ask(request)

    import localeval.config as config

    config.configure(judge=Slow())
    try:
        assert main(["run", str(data), "-m", "faithfulness", "-o", str(tmp_path / "o"),
                     "--no-cache"]) == 0
        err = capsys.readouterr().err
        assert "localeval: evaluating " in err and "/3 samples" in err and "eta" in err
        assert main(["run", str(data), "-m", "faithfulness", "-o", str(tmp_path / "q"),
                     "--no-cache", "--quiet"]) == 0
        assert "localeval: evaluating " not in capsys.readouterr().err
    finally:
        config.reset()
