"""The report people read: one self-contained HTML file per run.

``report.html`` must open on an air-gapped laptop, in a mail attachment or a
CI artefact viewer, so everything is inline: CSS and JS are embedded, plots
are inline SVG, there are no fonts, images or scripts from anywhere else. A
Content-Security-Policy meta tag pins that down (``default-src 'none'`` plus
hashes of our own style and script), so even if a dataset string slipped
through escaping it could neither run nor fetch anything.

The environment, the policy, the assets and the writer are ``pages``', shared by
every page. Escaping is Jinja's job (``autoescape=True``): every dataset or judge string
reaches the template as plain data and is escaped on output. This module
never builds HTML itself; ``view.build_view`` turns the summary and records
into a small view model and the template renders that.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from localeval.output import make_folder
from localeval.report.explained import read_explained
from localeval.report.pages import csp_hash, page_env, render_page, write_page
from localeval.report.view import build_view

__all__ = ["render_html", "write_html_report", "csp_hash"]


def render_html(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                samples: Sequence[Mapping[str, Any]],
                explained: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """The whole report as one HTML string (UTF-8, no external references); ``explained``:
    the reasons ``localeval explain`` asked afterwards (``read_explained``)."""
    view = build_view(summary, records, samples, explained=explained)
    return render_page(page_env(), "report.html.j2", v=view)


def write_html_report(out_dir: str | os.PathLike[str], summary: Mapping[str, Any],
                      records: Sequence[Mapping[str, Any]],
                      samples: Sequence[Mapping[str, Any]]) -> Path:
    """Write ``out_dir/report.html`` (atomically) and return its path; OutputError (exit 2)
    naming the page when it cannot be written."""
    out = Path(out_dir)
    if not out.is_dir():  # an existing folder: a fault is the file's, named by the write
        make_folder(out)  # OutputError (exit 2) naming the folder
    path = out / "report.html"
    page = render_html(summary, records, samples, read_explained(out))
    return write_page(path, page)  # no report.html.tmp left behind on a full disk

