"""Reasons on demand: ``localeval explain RUN_DIR``.

A run with ``--reasons none`` keeps its verdicts and not the judge's reasons,
which are most of what the judge writes. A reader of a failure still wants to
know why, but only for the samples they open: ``explain`` scores those samples
again (by id, or the worst N) with full reasons, through ``evaluate`` and the
run's own settings (verdict mode, language, seed), and writes the result beside
the run as ``explain.jsonl``, one line per sample; the HTML report shows it under
each metric's working (``report.read_explained``).

The explained verdicts come from a second, full-reason call: a judge may decide
differently once it has written a reason, so each line keeps the run's score
beside the explaining score, and the report says when they differ. The samples'
text comes from the dataset (results.jsonl holds only hashes of it), checked
against the hashes the run recorded of every input a metric reads
(``results.changed_content``: question, contexts, answer, messages, reference, reference
contexts, ids, expected calls and topics), so that a changed file is not explained; a
field an older results line has no hash of is said, not passed over in silence.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from localeval.errors import DataError, UsageError, printable

__all__ = ["explain", "worst_ids"]


def worst_ids(records: Sequence[Mapping[str, Any]], keys: Mapping[str, bool], n: int) -> list[str]:
    """The ids of the ``n`` samples that score worst on any of ``keys`` (key -> lower is
    better), worst first; ties keep file order, unscored samples come last."""
    def badness(rec: Mapping[str, Any]) -> float:
        vals = [(v if low else 1.0 - v) for k, low in keys.items()
                if isinstance(v := (rec.get("scores") or {}).get(k), (int, float))]
        return max(vals) if vals else float("-inf")

    ranked = sorted(range(len(records)), key=lambda i: -badness(records[i]))
    return [str(records[i]["id"]) for i in ranked[:n]]


def _source(data: Any) -> str | None:
    """The data file's name for a message, when the data is a file."""
    return os.fspath(data) if isinstance(data, (str, os.PathLike)) else None


def explain(run_dir: str | os.PathLike[str], data: Any, *, ids: Sequence[str] | None = None,
            worst: int = 5, judge: Any = None, judge_options: Mapping[str, Any] | None = None,
            embedder: Any = None, cache: Any = True, verdicts: str | None = None,
            progress: bool | None = None,
            on_info: Callable[[str], None] | None = None) -> Path:
    """Ask the full-reason verdicts of some of a run's samples; returns explain.jsonl's path.

    ``ids``: the samples to explain, else the ``worst`` N on the run's metrics that
    give reasons (``Metric.gives_reasons``). ``data``: the dataset the run scored.
    ``verdicts``: hard or soft (default: the run's). ``on_info`` is told what is
    skipped, which samples are asked and when the judge is not the run's.
    """
    from localeval.dataset import load_dataset
    from localeval.metrics import parse_metrics
    from localeval.output import OutputPolicy
    from localeval.report import EXPLAIN_FILE, write_html_report
    from localeval.results import (
        RESULTS_FILE,
        SUMMARY_FILE,
        SignatureEntry,
        changed_content,
        dumps_strict,
        read_run,
        record_of,
    )
    from localeval.run.runner import evaluate

    tell = on_info or (lambda _msg: None)
    folder = Path(run_dir)
    summary, records = read_run(folder)
    sig = record_of(summary).signature or SignatureEntry()
    chosen, skipped = [], []
    for key in summary.get("metrics") or {}:
        try:
            m = parse_metrics(key)[0]
        except Exception:  # noqa: BLE001 - a user-defined metric is not parsed from its key
            skipped.append(key)
            continue
        if m.gives_reasons:
            chosen.append(m)
    if skipped:
        tell(f"not explained: {', '.join(skipped)} (metrics from a metrics file, or unknown)")
    if not chosen:
        raise UsageError(f"the run in {folder} has no metric whose judge gives reasons "
                         "(faithfulness, context_precision, ...): nothing to explain")
    by_id = {str(r.get("id")): r for r in records}
    if ids:
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise UsageError(f"--ids: no sample {unknown[0]!r} in {folder / 'results.jsonl'}")
        wanted = list(dict.fromkeys(ids))
    else:
        wanted = worst_ids(records, {m.key: m.lower_is_better for m in chosen}, worst)
    ds = load_dataset(data)
    samples = {s.id: s for s in ds}
    picked = []
    not_checked: dict[str, list[str]] = {}
    for i in wanted:
        s = samples.get(i)
        if s is None:
            raise DataError(f"sample '{printable(i)}' of the run is not in the dataset given",
                            file=_source(data))
        changed, unchecked = changed_content(by_id[i], s)
        if changed:
            raise DataError(f"sample '{printable(i)}' differs from the one the run scored "
                            f"(changed: {', '.join(changed)}): give the dataset the run scored",
                            file=_source(data))
        for f in unchecked:
            not_checked.setdefault(f, []).append(i)
        picked.append(s)
    if not_checked:
        tell("not checked against the run (its results.jsonl predates their hashes): "
             + "; ".join(f"{f} of {len(v)} sample(s)" for f, v in not_checked.items()))
    out = folder / EXPLAIN_FILE  # into the run's folder by design; never over what is read
    policy = OutputPolicy([data if isinstance(data, (str, os.PathLike)) else None,
                           folder / RESULTS_FILE, folder / SUMMARY_FILE], overwrite=True)
    policy.check(out, folder=False)
    tell(f"asking the judge's reasons for {len(picked)} sample(s): {', '.join(wanted)}")
    res = evaluate(picked, chosen, judge=judge, embedder=embedder, cache=cache,
                   judge_options=judge_options, reasons="full",
                   verdicts=verdicts or sig.verdicts, lang=sig.lang, seed=sig.seed,
                   judge_check=False, progress=progress)
    asked = record_of(res.summary)
    now = asked.signature or SignatureEntry()
    if now.judge_fingerprint != sig.judge_fingerprint:
        tell(f"the reasons come from {now.judge}, not the judge "
             f"that scored the run ({sig.judge}): --judge names the run's judge")
    with policy.atomic(out) as f:
        for rec in res.records():
            run_scores = by_id[str(rec["id"])].get("scores") or {}
            line = {"id": rec["id"], "signature_line": asked.line(),
                    "metrics": {m.key: {"score": rec["scores"].get(m.key),
                                        "run_score": run_scores.get(m.key),
                                        "details": (rec.get("details") or {}).get(m.key)}
                                for m in chosen}}
            f.write(dumps_strict(line) + "\n")
    # the report again, now with the reasons (and the dataset's text for every sample)
    write_html_report(folder, summary, records,
                      [samples.get(str(r.get("id")), {"id": r.get("id")}) for r in records])
    return out
