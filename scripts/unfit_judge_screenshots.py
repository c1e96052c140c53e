"""Screenshots of what localeval shows when the judge failed its judge check, for the docs.

    python scripts/unfit_judge_screenshots.py                  # docs/report-unfit-judge.png, docs/diff-unfit-judge.png
    python scripts/unfit_judge_screenshots.py --keep /tmp/unfit --diff-window-size 1280,1800

Two runs of the first 12 rows of the bundled example data, scored with no model:
``localeval.testing.ScriptedJudge`` answers every judge step with its most
favourable output, so it cannot tell good from bad and fails its judge check
(unfit), as in the new user's trial (tests/unit/test_user_trial_end_to_end.py).
Version 2 swaps five answers for other rows' answers; the judge's call fails
on those, so their faithfulness is unscored. Then:

- ``docs/report-unfit-judge.png``: version 2's report.html, its judged metrics
  shown neutral with the "judge unfit" marker (``localeval.report``'s judged.py);
- ``docs/diff-unfit-judge.png``: diff.html of the two versions, with the
  "Judge fitness" banner, the "not evidence" caveats and the unscored pairs.

Needs Chromium (Debian: ``apt-get install chromium``), as scripts/report_screenshot.py does.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from report_screenshot import screenshot  # noqa: E402

import localeval  # noqa: E402
from localeval.cli.app import main as cli_main  # noqa: E402
from localeval.testing import trial_versions, unfit_judge  # noqa: E402

#: two judged metrics, one text metric (never "not evidence": no judge scored it)
METRICS = ["faithfulness", "context_precision", "bleu"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report-out", default=str(ROOT / "docs" / "report-unfit-judge.png"))
    ap.add_argument("--diff-out", default=str(ROOT / "docs" / "diff-unfit-judge.png"))
    ap.add_argument("--keep", help="build the runs and pages here (default: a temporary folder)")
    ap.add_argument("--window-size", default="1280,1400", help="the report's viewport")
    ap.add_argument("--diff-window-size", default="1280,1400", help="diff.html's viewport")
    a = ap.parse_args(argv)

    tmp = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="localeval-unfit-"))
    tmp.mkdir(parents=True, exist_ok=True)
    runs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the judge check's own warning: expected here
        for name, data in zip(("v1", "v2"), trial_versions(tmp)):
            out = tmp / name
            r = localeval.evaluate(data, METRICS, judge=unfit_judge(), cache=False,
                                   judge_check=True, out_dir=out, progress=False)
            print(f"{name}: {r.summary['judge_check']['line']}")
            runs.append(out)
    diff_dir = tmp / "diff"
    here = Path.cwd()
    os.chdir(tmp)  # the page names the runs as given: v1, v2, not a temporary path
    try:  # exit 0 without a gate; its table goes to stdout, as on the command line
        cli_main(["diff", "v1", "v2", "--base-data", "v1.jsonl", "--new-data", "v2.jsonl",
                  "-o", "diff"])
    finally:
        os.chdir(here)
    report = runs[1] / "report.html"
    for html, png, size in ((report, Path(a.report_out), a.window_size),
                            (diff_dir / "diff.html", Path(a.diff_out), a.diff_window_size)):
        screenshot(html, png, size=size)
        print(f"screenshot: {png} ({png.stat().st_size / 1024:.1f} KiB) of {html}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
