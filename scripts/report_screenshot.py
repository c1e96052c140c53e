"""Build an HTML report and take a PNG screenshot of it with headless Chromium.

    python scripts/report_screenshot.py          # synthetic run on the bundled example data
    python scripts/report_screenshot.py RESULTS_DIR --data DATASET.jsonl
    python scripts/report_screenshot.py --out /tmp/shot.png --window-size 1280,6000 --open en-03

RESULTS_DIR holds ``results.jsonl`` and ``summary.json`` from ``localeval run``;
``--data`` is the dataset that run read (results files carry scores, not the
question/answer text). Without RESULTS_DIR a quick synthetic run is built from
``localeval/data/example.jsonl``: the scores and judge working are made up but
shaped like the real metrics', and the summary is computed by the real
``localeval.report.summary`` code. Needs Chromium (Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from localeval.dataset import load_dataset  # noqa: E402
from localeval.errors import LocalevalError  # noqa: E402
from localeval.report import signature, signature_line, summarize_metric  # noqa: E402
from localeval.report import write_html_report  # noqa: E402
from localeval.results import read_run  # noqa: E402
from localeval.types import Score  # noqa: E402

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--hide-scrollbars"]
EXAMPLE = ROOT / "localeval" / "data" / "example.jsonl"


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?。！？])\s*", text or "")
    return [p.strip() for p in parts if p.strip()]


Run = tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]


def synthetic_run(rng: random.Random) -> Run:
    """Made-up but realistic-looking scores and working for the example dataset."""
    samples = [s.to_dict() for s in load_dataset(str(EXAMPLE)).samples]
    keys = ["faithfulness", "answer_relevancy", "context_precision", "context_recall",
            "answer_correctness", "nv_context_relevance", "noise_sensitivity", "hit_rate@5",
            "mrr", "rougeL"]
    lower = {"noise_sensitivity"}
    records, cols = [], {k: [] for k in keys}
    for s in samples:
        q = (s.get("metadata") or {}).get("quality", "good")
        sc: dict[str, Score] = {}
        stm = _sentences(s.get("answer", "")) or [s.get("answer", "")]
        ok = [not (q == "unfaithful" and i == len(stm) - 1) and rng.random() > 0.08
              for i in range(len(stm))]
        verdicts = [{"reason": ("Stated in context 1." if v else
                                "The contexts do not mention this."), "verdict": int(v)}
                    for v in ok]
        if rng.random() < 0.07:
            sc["faithfulness"] = Score.unscored("judge output truncated at max_tokens=512 "
                                                "(step faithfulness.verdicts)")
        else:
            sc["faithfulness"] = Score(sum(ok) / len(ok), None,
                                       {"statements": stm, "verdicts": verdicts})
        nonc = int(q == "noncommittal")
        qs = [{"question": s["question"] if i == 0 else f"{s['question'][:-1]} exactly?",
               "noncommittal": nonc} for i in range(3)]
        cos = [round(rng.uniform(0.62, 0.97), 4) for _ in qs]
        sc["answer_relevancy"] = Score(0.0 if nonc else sum(cos) / 3, None,
                                       {"questions": qs, "cosines": cos})
        ctx_ok = [int(cid in (s.get("relevant_ids") or {})) for cid in s.get("retrieved_ids", [])]
        if q == "wrong_ranking":
            ctx_ok = sorted(ctx_ok)
        cp = sum((sum(ctx_ok[: i + 1]) / (i + 1)) * v for i, v in enumerate(ctx_ok))
        cp = cp / sum(ctx_ok) if sum(ctx_ok) else 0.0
        sc["context_precision"] = Score(cp, None, {"verdicts": [
            {"reason": "Gives the fact asked for." if v else "About another topic.",
             "verdict": v} for v in ctx_ok]})
        ref = _sentences(s.get("reference", ""))
        rv = [int(q != "irrelevant_context" or i > 0) for i in range(len(ref))]
        sc["context_recall"] = Score(sum(rv) / max(len(rv), 1), None, {"classifications": [
            {"statement": t, "reason": "Found in context 1." if v else "No context covers it.",
             "verdict": v} for t, v in zip(ref, rv, strict=True)]})
        pairs = list(zip(stm, ok, strict=True))
        tp = [{"statement": t, "reason": "Matches the reference."} for t, v in pairs if v]
        fp = [{"statement": t, "reason": "Not in the reference."} for t, v in pairs if not v]
        fn = ([{"statement": ref[0], "reason": "The answer leaves this out."}]
              if q == "incomplete" and ref else [])
        f1 = len(tp) / (len(tp) + 0.5 * (len(fp) + len(fn))) if tp or fp or fn else 0.0
        sim = rng.uniform(0.7, 0.95)
        sc["answer_correctness"] = Score(0.75 * f1 + 0.25 * sim, None,
                                         {"TP": tp, "FP": fp, "FN": fn, "f1": f1,
                                          "similarity": sim, "weights": [0.75, 0.25]})
        ratings = [2 if q != "irrelevant_context" else 0, rng.choice([1, 2])]
        sc["nv_context_relevance"] = Score(sum(ratings) / 4, None, {"ratings": ratings})
        ns = 1 - sum(ok) / len(ok) if q in ("unfaithful", "irrelevant_context") else 0.0
        sc["noise_sensitivity"] = Score(ns, None, {"statements": stm, "verdicts": verdicts})
        ranks = [i + 1 for i, cid in enumerate(s.get("retrieved_ids", []))
                 if cid in (s.get("relevant_ids") or {})]
        sc["hit_rate@5"] = Score(1.0 if ranks and ranks[0] <= 5 else 0.0)
        sc["mrr"] = Score(1 / ranks[0] if ranks else 0.0, None, {"first_relevant_rank": ranks[0]}
                          if ranks else {})
        sc["rougeL"] = Score(rng.uniform(0.15, 0.75)) if s.get("reference") else \
            Score.unscored("missing reference")
        for k in keys:
            cols[k].append(sc[k])
        records.append({"id": s["id"], "scores": {k: v.value for k, v in sc.items()},
                        "errors": {k: v.reason for k, v in sc.items() if v.value is None},
                        "details": {k: v.details for k, v in sc.items() if v.details}})
    metrics = {}
    for k in keys:
        e = summarize_metric(cols[k])
        if k in lower:
            e["lower_is_better"] = True
        metrics[k] = e

    class _Named:
        def __init__(self, name: str, fp: str) -> None:
            self.name, self.fingerprint = name, fp

    judge = _Named("qwen2.5-7b-instruct-q4_k_m.gguf", "9f3c1e27ab45d0")
    sig = signature(version="0.1.0", judge=judge,
                    embedder=_Named("all-MiniLM-L6-v2", "1b2e44f09c3d"), seed=0,
                    prompts={"faithfulness.statements": "a41c09", "faithfulness.verdicts": "77e2b0",
                             "answer_relevancy.questions": "c0d9f1"})
    summary = {"metrics": metrics, "n_samples": len(samples), "signature": sig,
               "signature_line": signature_line(sig),
               "usage": {"calls": 412, "prompt_tokens": 318_420, "reused_tokens": 201_877,
                         "evaluated_tokens": 116_543, "generated_tokens": 28_311,
                         "seconds": 742.6, "cache_hits": 37}}
    return summary, records, samples


def screenshot(html: Path, png: Path, *, size: str = "1280,2000") -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        sys.exit("chromium not installed: apt-get install chromium")
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as prof:
        cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={prof}", f"--screenshot={png}",
               f"--window-size={size}", html.resolve().as_uri()]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="?", help="results directory (default: a synthetic run)")
    ap.add_argument("--data", help="dataset the run read, for the sample texts")
    ap.add_argument("--out", default=str(ROOT / "docs" / "report-screenshot.png"))
    ap.add_argument("--html", help="where to keep report.html (default: a temporary directory)")
    ap.add_argument("--window-size", default="1280,2000")
    ap.add_argument("--open", default="", help="show this sample id expanded")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)

    t0 = time.perf_counter()
    if a.results:
        summary, records = read_run(a.results)
        samples = [s.to_dict() for s in load_dataset(a.data).samples] if a.data else []
    else:
        summary, records, samples = synthetic_run(random.Random(a.seed))
    out_dir = Path(a.html) if a.html else Path(tempfile.mkdtemp(prefix="localeval-report-"))
    html = write_html_report(out_dir, summary, records, samples)
    t1 = time.perf_counter()
    if a.open:
        # Headless screenshots do not follow a #fragment scroll reliably, so the
        # sample is opened in the file itself (this copy only; the API never does).
        ids = [str(r.get("id")) for r in records]
        if a.open not in ids:
            sys.exit(f"--open: no sample with id {a.open!r}")
        anchor = f'<details class="sample" id="s-{ids.index(a.open)}"'
        text = html.read_text(encoding="utf-8")
        html.write_text(text.replace(anchor, anchor + " open", 1), encoding="utf-8")
    screenshot(html, Path(a.out), size=a.window_size)
    t2 = time.perf_counter()
    print(f"report: {html} ({html.stat().st_size / 1024:.1f} KiB, {len(records)} samples, "
          f"rendered in {t1 - t0:.2f} s)")
    print(f"screenshot: {a.out} ({Path(a.out).stat().st_size / 1024:.1f} KiB, {t2 - t1:.2f} s)")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except LocalevalError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(e.exit_code) from None
