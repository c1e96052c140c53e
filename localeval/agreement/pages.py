"""The files ``localeval compare -o`` and ``localeval validate -o`` write.

A comparison becomes comparison.json (with every paired value),
comparison.md, one SVG scatter per metric and comparison.html, a
self-contained page rendered from ``templates/comparison.html.j2`` the way
the run report is rendered from its templates. A validation becomes
validation.json, validation.md and validation.html. Both writers return
the paths they wrote, so the commands can name every one, and write each
file atomically (``results.atomic_file``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

from markupsafe import Markup

from localeval.agreement.comparison import Comparison
from localeval.agreement.comparison_view import comparison_view
from localeval.agreement.scatter import name_slug
from localeval.agreement.validation import HUMAN_HEAD, SEP_HEAD, Validation
from localeval.output import SETTINGS_KEY, OutputPolicy, settings_record
from localeval.results import atomic_file, dumps_strict
from localeval.resultsets import validation_caveat

__all__ = ["write_comparison", "comparison_html", "write_validation", "validation_html",
           "scatter_file_names"]

def write_comparison(cmp: Comparison, out_dir: str | Path, *, policy: Any = None,
                     settings: Mapping[str, Any] | None = None) -> list[Path]:
    """comparison.json (with per-pair values and ``settings``, the options that made it),
    comparison.md, scatter/<metric>.svg and the page; returns the paths written. The
    folders are made through the output policy (``output.OutputPolicy``: the command's
    own, which refuses an ``out_dir`` that is, lies in or holds an input)."""
    policy = policy if policy is not None else OutputPolicy()
    out = policy.folder(out_dir)
    policy.folder(out / "scatter")
    written = [_write(out / "comparison.json",
                      dumps_strict(_stamped(cmp.to_dict(values=True), settings), indent=2)
                      + "\n"),
               _write(out / "comparison.md", cmp.to_markdown())]
    svgs = cmp.scatter_svgs()
    for label, fname in scatter_file_names(list(svgs)).items():
        written.append(_write(out / "scatter" / fname, svgs[label]))
    written.append(_write(out / "comparison.html", comparison_html(cmp)))
    return written


def scatter_file_names(labels: list[str]) -> dict[str, str]:
    """label -> ``<slug>.svg``, one file per label, also where the file system ignores
    case (``A`` and ``a`` on macOS): such names get their hash too."""
    slugs = {lab: name_slug(lab) for lab in labels}
    folded = Counter(s.casefold() for s in slugs.values())
    out = {}
    for lab, s in slugs.items():
        if folded[s.casefold()] > 1:
            s += "-" + hashlib.sha256(lab.encode("utf-8")).hexdigest()[:8]
        out[lab] = s + ".svg"
    return out


def _write(path: Path, text: str) -> Path:
    """Every file of both writers, atomically (``results.atomic_file``, as every page is
    written): a full disk is one OutputError naming the file (exit 2), never half a page
    or a .tmp left behind."""
    with atomic_file(path, newline="\n") as f:
        f.write(text)
    return path


def comparison_html(cmp: Comparison) -> str:
    """A self-contained page in the run report's style: the agreement table (notes folded
    under it), confusion matrices, scatter plots and the disagreeing samples with both
    judges' working side by side.

    It uses the report's own stylesheet, script and working macro (from
    ``localeval.report``'s templates) so both pages look and behave alike, and
    the same Content-Security-Policy: only our own style and script, by hash.
    Built with the page toolkit (``report.page_env``, ``report.render_page``).
    Text is escaped by jinja2 (autoescape); the SVGs come from
    :func:`scatter_svg`, which escapes its own labels, so they are inserted as markup.
    """
    from localeval.report import page_env, render_page

    return render_page(page_env("localeval.agreement"), "comparison.html.j2",
                       css=("comparison.css",), v=comparison_view(cmp),
                       plots=[Markup(s) for s in cmp.scatter_svgs().values()])


def _stamped(body: dict[str, Any], settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """``body`` with the settings it was made with (``output.SETTINGS_KEY``), if given."""
    return body if settings is None else {**body, SETTINGS_KEY: settings_record(settings)}


def write_validation(v: Validation, out_dir: str | Path, *, policy: Any = None,
                     settings: Mapping[str, Any] | None = None) -> list[Path]:
    """validation.json, validation.md and validation.html in ``out_dir`` (created if
    needed); returns the paths written."""
    out = (policy if policy is not None else OutputPolicy()).folder(out_dir)
    return [_write(out / "validation.json",
                   dumps_strict(_stamped(v.to_dict(), settings), indent=2) + "\n"),
            _write(out / "validation.md", v.to_markdown()),
            _write(out / "validation.html", validation_html(v))]


def validation_html(v: Validation) -> str:
    """A self-contained page in the run report's style: the sentences, the verdict
    matrices, the statistics tables and the notes (no script)."""
    from localeval.report import page_env, render_page

    tables = []
    if v.separation:
        tables.append({"title": "Separation of labelled samples", "head": SEP_HEAD,
                       "rows": v.sep_rows(" ")})
    if v.human:
        tables.append({"title": "Agreement with human scores", "head": HUMAN_HEAD,
                       "rows": v.human_rows(" ")})
    view = {"name": v.result_name, "labels": v.labels_source,
            "threshold": f"{v.threshold:g}", "sentences": v.sentences(),
            "matrices": [{"metric": x.metric, "caveat": bool(v.judge_caveat(x.metric)),
                          **x.matrix()} for x in v.verdicts],
            "tables": tables, "notes": v.notes(),
            "judge_caveat": validation_caveat(v.fitness) if v.judged else "",
            "judged": v.judged, "fitness_notes": v.fitness_notes()}
    return render_page(page_env("localeval.agreement"), "validation.html.j2", script=False,
                       v=view)
