"""The files ``localeval compare -o`` and ``localeval validate -o`` write.

A comparison becomes comparison.json (with every paired value),
comparison.md, one SVG scatter per metric and comparison.html, a
self-contained page rendered from ``templates/comparison.html.j2`` the way
the run report is rendered from its templates. A validation becomes
validation.json, validation.md and validation.html. Both writers return
the paths they wrote, so the commands can name every one.
"""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from markupsafe import Markup

from localeval.agreement.comparison import Comparison
from localeval.agreement.comparison_view import comparison_view
from localeval.agreement.scatter import name_slug
from localeval.agreement.validation import HUMAN_HEAD, SEP_HEAD, Validation
from localeval.results import dumps_strict
from localeval.resultsets import validation_caveat

__all__ = ["write_comparison", "comparison_html", "write_validation", "validation_html",
           "scatter_file_names"]

_TEMPLATES = "templates"


def write_comparison(cmp: Comparison, out_dir: str | Path) -> list[Path]:
    """comparison.json (with per-pair values), comparison.md, scatter/<metric>.svg and the
    page; returns the paths written."""
    out = Path(out_dir)
    (out / "scatter").mkdir(parents=True, exist_ok=True)
    written = [_write(out / "comparison.json",
                      dumps_strict(cmp.to_dict(values=True), indent=2) + "\n"),
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
    path.write_text(text, encoding="utf-8")
    return path


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
    env = _env()
    source = env.loader.get_source
    css = source(env, "report.css")[0] + "\n" + source(env, "comparison.css")[0]
    js = source(env, "report.js")[0]
    return env.get_template("comparison.html.j2").render(
        v=comparison_view(cmp), plots=[Markup(s) for s in cmp.scatter_svgs().values()],
        css=Markup(css), js=Markup(js), css_hash=_csp_hash(css), js_hash=_csp_hash(js))


def _csp_hash(text: str) -> str:
    """The CSP source for an inline block: ``sha256-`` and its base64 digest."""
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def write_validation(v: Validation, out_dir: str | Path) -> list[Path]:
    """validation.json, validation.md and validation.html in ``out_dir`` (created if
    needed); returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [_write(out / "validation.json", dumps_strict(v.to_dict(), indent=2) + "\n"),
            _write(out / "validation.md", v.to_markdown()),
            _write(out / "validation.html", validation_html(v))]


def validation_html(v: Validation) -> str:
    """A self-contained page in the run report's style: the sentences, the verdict
    matrices, the statistics tables and the notes (no script)."""
    env = _env()
    css = env.loader.get_source(env, "report.css")[0]
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
    return env.get_template("validation.html.j2").render(
        v=view, css=Markup(css), css_hash=_csp_hash(css))


def _env() -> Any:
    """The pages' jinja2 environment: our templates, then the run report's."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader("localeval.agreement", _TEMPLATES),
                                    jinja2.PackageLoader("localeval.report", _TEMPLATES)]),
        autoescape=True,  # names, questions and working come from user files; keep it on
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    )
