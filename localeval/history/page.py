"""``localeval history``'s page: every run kept, by dataset version, with each metric's trend.

One self-contained HTML file, built with the page toolkit of every page
(``report.page_env``, ``report.render_page``): the report's stylesheet and script
plus ``history.css``, Jinja2 with autoescape (run names, tags and folders come
from users), and the one Content-Security-Policy (our own style and script only, by hash; no URL
anywhere). The charts are ``chart.trend_svg``'s SVG. A run whose judge failed
its judge check is marked where its judged numbers are shown (its chart points,
its table row: "judge unfit"), and a judged trend through such a run is
captioned "not evidence"; ROUGE, BLEU and retrieval trends never are. Links to
each run's report.html and to the diff pages are relative to the page, so a
folder of runs and its page can be moved or zipped together.

Large histories stay small: every run is in every trend, but a group's table
lists its newest ``max_rows`` runs, with a note naming ``localeval runs`` for
the rest.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import quote

from localeval.errors import printable
from localeval.history.chart import trend_svg
from localeval.history.diffs import diffs_folder, write_diffs
from localeval.history.groups import Group, group_runs
from localeval.history.runs import HistoryRun, from_entry, from_export

__all__ = ["History", "build_history", "history_html", "write_history", "MAX_ROWS"]

#: runs listed in a group's table (the newest); every run is in the trends
MAX_ROWS = 300


@dataclass
class History:
    """The runs found and added, grouped, and where the page and its diffs go."""

    page: Path
    folders: list[str]
    groups: list[Group]
    #: diff folder name -> why that diff was not written (``--diffs``)
    diff_failures: dict[str, str] = field(default_factory=dict)

    @property
    def runs(self) -> list[HistoryRun]:
        """Every run of every group."""
        return [r for g in self.groups for r in g.runs]


def build_history(folders: Iterable[str | os.PathLike[str]], page: str | os.PathLike[str], *,
                  added: Sequence[tuple[str, Path]] = ()) -> History:
    """The history of the runs under ``folders`` and the ``added`` exports (name, file).

    A folder that does not exist is a UsageError (``find_runs``); a run's
    content never raises: it is listed with its reason.
    """
    from localeval.resultsets import find_runs

    tops = [str(f) for f in folders]
    runs = [from_entry(e) for e in find_runs(tops)] + [from_export(n, p) for n, p in added]
    return History(Path(page), tops, group_runs(runs))


def write_history(h: History, *, diffs: bool = False, max_rows: int = MAX_ROWS,
                  policy: Any = None, settings: Mapping[str, Any] | None = None) -> list[Path]:
    """Write the page (and, with ``diffs``, the diff pages, once the page's place is
    checked); return what was written.

    Through the output policy (``output.OutputPolicy``, the command's own): the page
    may not be a file of a run it shows (its report.html, summary.json) nor an
    export it adds, and a page made with other ``settings`` (folders, exports, rows,
    ``--diffs``; recorded in the page) is replaced only with ``--overwrite``. An
    unwritable place is one OutputError naming it (exit 2), no half-written page left.
    """
    from localeval.output import OutputPolicy, html_settings_comment, make_folder

    policy = policy if policy is not None else OutputPolicy(overwrite=True)
    policy.add_inputs(_read_files(h))
    policy.check(h.page, folder=False)
    if settings is not None:
        policy.check_settings(h.page, settings)
    make_folder(h.page.parent)
    written: list[Path] = []
    if diffs and any(g.diffs for g in h.groups):
        folder = policy.check(diffs_folder(h.page), folder=True)
        h.diff_failures = write_diffs(h.groups, folder)
        written.append(folder)
    text = history_html(h, max_rows=max_rows)
    policy.write_text(h.page, text + (html_settings_comment(settings) if settings else ""))
    return [h.page, *written]


def _read_files(h: History) -> list[Path]:
    """The files the page was made from: each run's summary, results and report, each
    export added: none of them may be written over."""
    from localeval.results import RESULTS_FILE, SUMMARY_FILE

    files: list[Path] = []
    for r in h.runs:
        src = Path(r.source)
        files += ([src / SUMMARY_FILE, src / RESULTS_FILE] if src.is_dir() else [src])
        files += [r.report] if r.report is not None else []
    return files


def history_html(h: History, *, max_rows: int = MAX_ROWS) -> str:
    """The self-contained page as one string."""
    from markupsafe import Markup

    from localeval.report import page_env, render_page

    return render_page(page_env("localeval.history"), "history.html.j2", css=("history.css",),
                       v=_view(h, max_rows, Markup))


def _view(h: History, max_rows: int, markup: Any) -> dict[str, Any]:
    base = h.page.parent
    diff_dir = diffs_folder(h.page)
    groups = []
    for gi, g in enumerate(h.groups):
        trends = [{"metric": printable(t.metric), "svg": markup(trend_svg(t.metric, g.runs, t.marks)),
                   "marks": [{"number": m.number, "unknown": m.unknown,
                              "between": f"{printable(g.runs[m.base].label)} → "
                                         f"{printable(g.runs[m.index].label)}",
                              "notes": [printable(n) for n in m.notes]} for m in t.marks],
                   "not_evidence": _not_evidence(g, t.unfit)}
                  for t in g.trends]
        marked = {m.index: [] for t in g.trends for m in t.marks}  # type: dict[int, list[str]]
        for t in g.trends:
            for m in t.marks:
                marked[m.index].append(f"{printable(t.metric)} {m.number}")
        order = list(range(len(g.runs)))[::-1][:max_rows]
        rows = [_row(g, i, base, diff_dir, marked.get(i, []), h.diff_failures) for i in order]
        groups.append({"id": f"g{gi}", "title": g.title, "about": g.about,
                       "version": g.version, "n": len(g.runs), "trends": trends, "rows": rows,
                       "hidden": len(g.runs) - len(rows)})
    runs = h.runs
    return {"folders": [printable(f) for f in h.folders], "groups": groups,
            "n_runs": len(runs), "n_versions": sum(1 for g in h.groups if g.version),
            "n_problems": sum(1 for r in runs if r.problem),
            "n_unfit": sum(1 for r in runs if r.fitness is not None and r.fitness.marker),
            "max_rows": max_rows}


def _not_evidence(g: Group, unfit: list[int]) -> str:
    """The caption of a judged trend through runs whose judge failed its check ("": none)."""
    if not unfit:
        return ""
    runs = [g.runs[i] for i in unfit]
    names = [printable(r.label) for r in runs[:8]] + (
        [f"{len(runs) - 8} more"] if len(runs) > 8 else [])
    failed = any(r.fitness is not None and r.fitness.failed for r in runs)
    broken = any(r.fitness is not None and r.fitness.could_not_run for r in runs)
    what = " or ".join((["failed"] if failed else []) + (["could not run"] if broken else []))
    return (f"not evidence: the judge {what or 'did not pass'} its judge check on "
            f"run{'s' if len(runs) != 1 else ''} {', '.join(names)}, so this trend may be "
            "the judge's, not the pipeline's")


def _row(g: Group, i: int, base: Path, diff_dir: Path, marks: list[str],
         failures: dict[str, str]) -> dict[str, Any]:
    r = g.runs[i]
    diff_href, diff_note = None, ""
    name = g.diffs.get(i)
    if name is not None:
        page = diff_dir / name / "diff.html"
        if page.is_file():
            diff_href = _href(page, base)
        elif name in failures:
            diff_note = f"no diff: {printable(failures[name])}"
    metrics = []
    for key, p in r.metrics.items():
        mean = "–" if p.mean is None else f"{p.mean:.3f}"
        ci = (f" [{p.low:.3f}, {p.high:.3f}]" if p.low is not None and p.high is not None
              else "")
        un = f", {p.unscored} unscored" if p.unscored else ""
        metrics.append({"key": printable(key), "text": f"{mean}{ci}{un}",
                        "caveat": r.caveat(key) or ""})
    e = r.entry
    gates = e.gates
    return {
        "date": (r.started or "–").replace("T", " ").removesuffix("Z"),
        "file_time": e.dated_by == "file time", "label": printable(r.label),
        "tags": [printable(f"{k}={v}") for k, v in e.tags.items()],
        "source": printable(r.source), "kind": r.kind,
        "report": _href(r.report, base) if r.report else None,
        "samples": e.samples, "judge": printable(e.judge or "–"),
        "check": printable(e.check), "check_bad": bool(r.fitness and r.fitness.marker),
        "embedder": printable(e.embedder) if e.embedder else "",
        "metrics": metrics,
        "gates": None if gates is None else ("passed" if gates["passed"] else
                                             f"failed ({len(gates['failed'])})"),
        "gates_ok": bool(gates and gates["passed"]),
        "problem": printable(r.problem) if r.problem else "",
        "notes": [printable(n) for n in r.notes], "marks": marks,
        "diff": diff_href, "diff_note": diff_note,
        "previous": printable(g.runs[i - 1].label) if i > 0 and name is not None else "",
    }


def _href(target: Path, base: Path) -> str:
    """A relative link from the page's folder (percent-encoded; never a scheme)."""
    try:
        rel = os.path.relpath(target.resolve(), base.resolve())
    except ValueError:  # another drive (Windows): an absolute file URL
        return target.resolve().as_uri()
    return quote(Path(rel).as_posix())
