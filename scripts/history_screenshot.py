"""Build a small synthetic history and take a PNG screenshot of its page with headless Chromium.

    python scripts/history_screenshot.py                  # writes docs/history.png
    python scripts/history_screenshot.py --out /tmp/h.png --runs 24 --window-size 1280,1500

The runs are summary.json files in the shape ``localeval run`` writes
(``scripts/bench_history.py``'s ``synthetic_summary``: three test sets, a judge
change, a prompts change, a damaged summary), written to a temporary folder;
the page is written by the real ``localeval history`` code. Needs Chromium
(Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_history import synthetic_summary  # noqa: E402

from localeval.cli.app import main as localeval_main  # noqa: E402

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--hide-scrollbars"]


def write_runs(top: Path, n: int) -> None:
    """``n`` runs (the last one's summary damaged) under ``top``."""
    import json

    rng = random.Random(3)
    start = datetime(2025, 3, 3, 9, tzinfo=UTC)
    for i in range(n):
        d = top / f"run-{i:02d}"
        d.mkdir(parents=True)
        s = synthetic_summary(i, n, rng, start)
        s["run"]["name"] = f"v{i + 1}"
        s["run"]["tags"] = {"branch": "main" if i % 3 else "feature"}
        (d / "summary.json").write_text("{cut short" if i == n - 1 else json.dumps(s))
        (d / "report.html").write_text("<!DOCTYPE html><title>report</title>")


def screenshot(html: Path, png: Path, size: str) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        sys.exit("chromium not installed: apt-get install chromium")
    with tempfile.TemporaryDirectory() as prof:
        cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={prof}", f"--screenshot={png}",
               f"--window-size={size}", html.as_uri()]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "history.png"))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--window-size", default="1280,1400")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="history-shot-") as tmp:
        top, page = Path(tmp) / "runs", Path(tmp) / "history.html"
        write_runs(top, a.runs)
        if localeval_main(["history", str(top), "-o", str(page)]) != 0:
            return 1
        screenshot(page, Path(a.out), a.window_size)
    print(f"screenshot: {a.out} ({Path(a.out).stat().st_size / 1024:.1f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
