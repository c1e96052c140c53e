"""The report people read: one self-contained HTML file per run.

``report.html`` must open on an air-gapped laptop, in a mail attachment or a
CI artefact viewer, so everything is inline: CSS and JS are embedded, plots
are inline SVG, there are no fonts, images or scripts from anywhere else. A
Content-Security-Policy meta tag pins that down (``default-src 'none'`` plus
hashes of our own style and script), so even if a dataset string slipped
through escaping it could neither run nor fetch anything.

Escaping is Jinja's job (``autoescape=True``): every dataset or judge string
reaches the template as plain data and is escaped on output. This module
never builds HTML itself; ``view.build_view`` turns the summary and records
into a small view model and the template renders that.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import jinja2
from markupsafe import Markup

from localeval.report.explained import read_explained
from localeval.report.view import build_view
from localeval.results import atomic_file

__all__ = ["render_html", "write_html_report", "csp_hash"]

_TEMPLATES = "templates"


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("localeval.report", _TEMPLATES),
        autoescape=True,  # every dataset string is escaped; never turn this off
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def csp_hash(text: str) -> str:
    """The CSP source for an inline block: ``sha256-`` and its base64 digest."""
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def render_html(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                samples: Sequence[Mapping[str, Any]],
                explained: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """The whole report as one HTML string (UTF-8, no external references); ``explained``:
    the reasons ``localeval explain`` asked afterwards (``read_explained``)."""
    env = _env()
    css = env.loader.get_source(env, "report.css")[0]  # type: ignore[union-attr]  # the loader set above
    js = env.loader.get_source(env, "report.js")[0]  # type: ignore[union-attr]  # the loader set above
    view = build_view(summary, records, samples, explained=explained)
    # Our own CSS/JS are static package files, not data: they go in unescaped.
    return env.get_template("report.html.j2").render(
        v=view, css=Markup(css), js=Markup(js),
        css_hash=csp_hash(css), js_hash=csp_hash(js))


def write_html_report(out_dir: str | os.PathLike[str], summary: Mapping[str, Any],
                      records: Sequence[Mapping[str, Any]],
                      samples: Sequence[Mapping[str, Any]]) -> Path:
    """Write ``out_dir/report.html`` (atomically) and return its path; OutputError (exit 2)
    naming the page when it cannot be written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.html"
    page = render_html(summary, records, samples, read_explained(out))
    with atomic_file(path) as f:  # no report.html.tmp left behind on a full disk
        f.write(page)
    return path

