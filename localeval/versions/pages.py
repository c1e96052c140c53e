"""The files ``localeval diff`` writes: diff.json, diff.md and diff.html.

diff.html is rendered from ``templates/diff.html.j2`` with the page toolkit
every page uses (``report.page_env``, ``report.render_page``): the report's
stylesheet and script, the comparison page's layout rules, jinja2 autoescape,
and the one Content-Security-Policy (our own style and script only, by hash). With
``--pairwise`` the page gains a pairwise section (``pairwise_view``,
``templates/_pairwise.html.j2``) and diff.md a short one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from localeval.versions.diff import VersionDiff
from localeval.versions.pairwise_view import pairwise_markdown
from localeval.versions.tables import to_markdown
from localeval.versions.view import diff_view

__all__ = ["write_diff", "diff_html", "FILES"]

#: What write_diff writes, in the order it reports them.
FILES = ("diff.json", "diff.md", "diff.html")


def diff_html(d: VersionDiff) -> str:
    """The self-contained diff page as one string."""
    from localeval.report import page_env, render_page

    env = page_env("localeval.versions", "localeval.agreement")
    return render_page(env, "diff.html.j2", css=("comparison.css", "diff.css"), v=diff_view(d))


def write_diff(d: VersionDiff, out_dir: str | Path, *, policy: Any = None,
               settings: Mapping[str, Any] | None = None) -> list[Path]:
    """Write the three files into ``out_dir`` (created if needed); return their paths.

    All three are rendered first, then each goes through the output policy
    (``output.OutputPolicy``, the command's own with its inputs, else one with
    none): an ``out_dir`` that is, lies in or holds an input is refused, and a
    full disk or an unwritable folder is one ``OutputError`` naming the file
    (exit 2), with no half-written file and no ``.tmp`` left behind. diff.json
    records ``settings`` (the options that made it) for the next run's check.
    """
    from localeval.output import SETTINGS_KEY, OutputPolicy, dumps_strict, settings_record

    policy = policy if policy is not None else OutputPolicy()
    out = policy.folder(out_dir)  # a path that cannot be a folder: one message, exit 2
    body = d.to_dict()
    if settings is not None:
        body[SETTINGS_KEY] = settings_record(settings)
    texts = {"diff.json": dumps_strict(body, indent=2) + "\n",
             "diff.md": to_markdown(d) + ("\n" + pairwise_markdown(d.pairwise,
                                                                    d.pairwise_check)
                                          if d.pairwise else ""),
             "diff.html": diff_html(d)}
    paths = []
    for name in FILES:
        paths.append(policy.write_text(out / name, texts[name]))
    return paths
