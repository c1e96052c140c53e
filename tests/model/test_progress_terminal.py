"""A real run in a real terminal (a pty), with the real small judge: signs of life.

While the judge loads there is a stage line; during the first sample, judge
calls and tokens/s appear call by call (not when the sample ends), and the
ETA, once the first call is in, counts down between calls.
"""

from __future__ import annotations

import os
import pty
import re
import select
import sys
import time
from pathlib import Path

from localeval.cli.app import example_path

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _run_in_pty(argv: list[str], cwd: Path, env: dict[str, str], limit: float) -> tuple[int, str]:
    pid, fd = pty.fork()
    if pid == 0:  # the child: the localeval command, with the pty as its terminal
        os.chdir(cwd)
        os.execve(sys.executable, [sys.executable, "-m", "localeval.cli", *argv], env)
    out = b""
    deadline = time.time() + limit
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


def test_stage_line_live_calls_and_a_counting_down_eta(smollm2, tmp_path):
    rows = example_path().read_text(encoding="utf-8").splitlines()[:2]
    (tmp_path / "two.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200", "TERM": "xterm",
           "LOCALEVAL_CACHE": str(tmp_path / "cache.sqlite")}
    code, out = _run_in_pty(["run", "two.jsonl", "-m", "faithfulness", "--judge", str(smollm2),
                             "--no-judge-check", "-o", "out"], tmp_path, env, limit=400)
    assert code == 0, out[-2000:]
    frames = [_ANSI.sub("", f).strip() for f in re.split(r"[\r\n]", out)]
    frames = [f for f in frames if f]
    stage = next(i for i, f in enumerate(frames) if "loading judge" in f)
    bar = [(i, f) for i, f in enumerate(frames) if f.startswith("evaluating")]
    assert bar and stage < bar[0][0]
    assert any("loading judge" in f and "done in" in f for f in frames)
    # calls counted while the first sample is still running (0/2), i.e. per call
    live = [f for _, f in bar if "0/2" in f and "calls " in f]
    assert live, bar[-5:]
    # between two calls the ETA counts down; it is estimated from the work left at the pace
    # of the metrics finished so far, so it shows once the first sample's metric is done
    etas: dict[str, list[int]] = {}
    for f in (f for _, f in bar if "1/2" in f and "calls " in f):
        m = re.search(r"eta (\d+):(\d\d):(\d\d) · calls (\d+)", f)
        if m:
            h, mi, s, calls = map(int, m.groups())
            etas.setdefault(str(calls), []).append(h * 3600 + mi * 60 + s)
    assert any(len(set(v)) > 1 and v[-1] < v[0] for v in etas.values()), etas
