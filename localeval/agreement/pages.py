"""The files ``localeval compare -o`` and ``localeval validate -o`` write.

A comparison becomes comparison.json (with every paired value),
comparison.md, one SVG scatter per metric and comparison.html, a
self-contained page rendered from ``templates/comparison.html.j2`` the way
the run report is rendered from its templates. A validation becomes
validation.json and validation.md.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from localeval.agreement.comparison import Comparison
from localeval.agreement.comparison_view import comparison_view
from localeval.agreement.validation import Validation
from localeval.results import dumps_strict

__all__ = ["write_comparison", "comparison_html", "write_validation"]

_TEMPLATES = "templates"


def write_comparison(cmp: Comparison, out_dir: str | Path) -> Path:
    """comparison.json (with per-pair values), comparison.md, scatter/<metric>.svg and the page."""
    out = Path(out_dir)
    (out / "scatter").mkdir(parents=True, exist_ok=True)
    (out / "comparison.json").write_text(
        dumps_strict(cmp.to_dict(values=True), indent=2) + "\n",
        encoding="utf-8")
    (out / "comparison.md").write_text(cmp.to_markdown(), encoding="utf-8")
    for label, svg in cmp.scatter_svgs().items():
        fname = re.sub(r"[^0-9A-Za-z@._-]+", "_", label).strip("_") + ".svg"
        (out / "scatter" / fname).write_text(svg, encoding="utf-8")
    (out / "comparison.html").write_text(comparison_html(cmp), encoding="utf-8")
    return out


def comparison_html(cmp: Comparison) -> str:
    """A self-contained page in the run report's style: the agreement table (notes folded
    under it), confusion matrices, scatter plots and the disagreeing samples with both
    judges' working side by side.

    It uses the report's own stylesheet, script and working macro (from
    ``localeval.report``'s templates) so both pages look and behave alike, and
    the same Content-Security-Policy: only our own style and script, by hash.
    Text is escaped by jinja2 (autoescape); the SVGs come from
    :func:`scatter_svg`, which escapes its own labels, so they are inserted as markup.
    """
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader("localeval.agreement", _TEMPLATES),
                                    jinja2.PackageLoader("localeval.report", _TEMPLATES)]),
        autoescape=True,  # names, questions and working come from user files; keep it on
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    )
    source = env.loader.get_source  # type: ignore[union-attr]
    css = source(env, "report.css")[0] + "\n" + source(env, "comparison.css")[0]
    js = source(env, "report.js")[0]
    return env.get_template("comparison.html.j2").render(
        v=comparison_view(cmp), plots=[Markup(s) for s in cmp.scatter_svgs().values()],
        css=Markup(css), js=Markup(js), css_hash=_csp_hash(css), js_hash=_csp_hash(js))


def _csp_hash(text: str) -> str:
    """The CSP source for an inline block: ``sha256-`` and its base64 digest."""
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def write_validation(v: Validation, out_dir: str | Path) -> Path:
    """validation.json and validation.md in ``out_dir`` (created if needed)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "validation.json").write_text(dumps_strict(v.to_dict(), indent=2) + "\n", encoding="utf-8")
    (out / "validation.md").write_text(v.to_markdown(), encoding="utf-8")
    return out
