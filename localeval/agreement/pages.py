"""The files ``localeval compare -o`` and ``localeval validate -o`` write.

A comparison becomes comparison.json (with every paired value),
comparison.md, one SVG scatter per metric and comparison.html, a
self-contained page rendered from ``templates/comparison.html.j2`` the way
the run report is rendered from its templates. A validation becomes
validation.json and validation.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from localeval.agreement.comparison import Comparison
from localeval.agreement.validation import Validation

__all__ = ["write_comparison", "comparison_html", "write_validation"]

_TEMPLATES = "templates"


def write_comparison(cmp: Comparison, out_dir: str | Path) -> Path:
    """comparison.json (with per-pair values), comparison.md, scatter/<metric>.svg and the page."""
    out = Path(out_dir)
    (out / "scatter").mkdir(parents=True, exist_ok=True)
    (out / "comparison.json").write_text(
        json.dumps(cmp.to_dict(values=True), ensure_ascii=False, indent=2) + "\n",
        encoding="utf-8")
    (out / "comparison.md").write_text(cmp.to_markdown(), encoding="utf-8")
    for label, svg in cmp.scatter_svgs().items():
        fname = re.sub(r"[^0-9A-Za-z@._-]+", "_", label).strip("_") + ".svg"
        (out / "scatter" / fname).write_text(svg, encoding="utf-8")
    (out / "comparison.html").write_text(comparison_html(cmp), encoding="utf-8")
    return out


def comparison_html(cmp: Comparison) -> str:
    """A self-contained page: the statistics table and one scatter plot (A vs B) per metric.

    Text is escaped by jinja2 (autoescape); the SVGs come from
    :func:`scatter_svg`, which escapes its own labels, so they are inserted
    as markup.
    """
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("localeval.agreement", _TEMPLATES),
        autoescape=True,  # names and notes come from user files; never turn this off
        undefined=jinja2.StrictUndefined,
    )
    names: list[str] = []
    for m in cmp.metrics:
        names += [k for k in m.stats if k not in names]
    return env.get_template("comparison.html.j2").render(
        a=cmp.a_name, b=cmp.b_name, notes=cmp.notes(), metrics=cmp.metrics,
        stat_names=names, svgs=[Markup(v) for v in cmp.scatter_svgs().values()])


def write_validation(v: Validation, out_dir: str | Path) -> Path:
    """validation.json and validation.md in ``out_dir`` (created if needed)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "validation.json").write_text(json.dumps(v.to_dict(), ensure_ascii=False,
                                                    indent=2) + "\n", encoding="utf-8")
    (out / "validation.md").write_text(v.to_markdown(), encoding="utf-8")
    return out
