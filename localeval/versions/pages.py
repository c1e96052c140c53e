"""The files ``localeval diff`` writes: diff.json, diff.md and diff.html.

diff.html is rendered from ``templates/diff.html.j2`` like the run report
and the comparison page: the report's stylesheet and script, the
comparison page's layout rules, jinja2 autoescape, and the same
Content-Security-Policy (our own style and script only, by hash). With
``--pairwise`` the page gains a pairwise section (``pairwise_view``,
``templates/_pairwise.html.j2``) and diff.md a short one.
"""

from __future__ import annotations

from pathlib import Path

from localeval.versions.diff import VersionDiff
from localeval.versions.pairwise_view import pairwise_markdown
from localeval.versions.tables import to_markdown
from localeval.versions.view import diff_view

__all__ = ["write_diff", "diff_html", "FILES"]

_TEMPLATES = "templates"
#: What write_diff writes, in the order it reports them.
FILES = ("diff.json", "diff.md", "diff.html")


def diff_html(d: VersionDiff) -> str:
    """The self-contained diff page as one string."""
    import jinja2
    from markupsafe import Markup

    from localeval.report import csp_hash

    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader("localeval.versions", _TEMPLATES),
                                    jinja2.PackageLoader("localeval.agreement", _TEMPLATES),
                                    jinja2.PackageLoader("localeval.report", _TEMPLATES)]),
        autoescape=True,  # answers, ids and working come from user files; keep it on
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    )
    source = env.loader.get_source  # type: ignore[union-attr]  # the loader set above
    css = "\n".join(source(env, f)[0] for f in ("report.css", "comparison.css", "diff.css"))
    js = source(env, "report.js")[0]
    return env.get_template("diff.html.j2").render(
        v=diff_view(d), css=Markup(css), js=Markup(js), css_hash=csp_hash(css),
        js_hash=csp_hash(js))


def write_diff(d: VersionDiff, out_dir: str | Path) -> list[Path]:
    """Write the three files into ``out_dir`` (created if needed); return their paths.

    All three are rendered first, then each goes through ``results.atomic_file``
    (a temporary name moved into place): a full disk or an unwritable folder is
    one ``OutputError`` naming the file (exit 2), with no half-written file and
    no ``.tmp`` left behind.
    """
    from localeval.results import atomic_file, dumps_strict, make_output_folder

    out = Path(out_dir)
    make_output_folder(out)  # a path that cannot be a folder: one message, exit 2
    texts = {"diff.json": dumps_strict(d.to_dict(), indent=2) + "\n",
             "diff.md": to_markdown(d) + ("\n" + pairwise_markdown(d.pairwise,
                                                                    d.pairwise_check)
                                          if d.pairwise else ""),
             "diff.html": diff_html(d)}
    paths = []
    for name in FILES:
        p = out / name
        with atomic_file(p) as f:
            f.write(texts[name])
        paths.append(p)
    return paths
