"""``--diffs``: the diff page of each two consecutive runs on the same dataset version.

Written by ``localeval.versions`` (``diff_runs`` then ``write_diff``, what
``localeval diff`` does) into ``<page>-diffs/<name>/`` beside the page, where
``<name>`` is ``groups.diff_name`` of the pair: the same two runs always get
the same folder, so a page written later without ``--diffs`` still links to
it. A pair that cannot be compared (no shared samples or metrics) is not an
error of the history: its reason is kept and shown in the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from localeval.errors import LocalevalError
from localeval.history.groups import Group

__all__ = ["diffs_folder", "write_diffs"]


def diffs_folder(page: Path) -> Path:
    """The folder beside ``page`` that holds its diff pages."""
    return page.parent / f"{page.stem}-diffs"


def write_diffs(groups: Sequence[Group], folder: Path) -> dict[str, str]:
    """Write every consecutive pair's diff; return {pair name: why it was not written}."""
    from localeval.versions import diff_runs, load_version, write_diff

    failed: dict[str, str] = {}
    for g in groups:
        for i, name in g.diffs.items():
            a, b = g.runs[i - 1], g.runs[i]
            assert a.diffable is not None and b.diffable is not None  # diffs holds only these
            try:
                d = diff_runs(load_version(a.diffable, name=a.label),
                              load_version(b.diffable, name=b.label))
                write_diff(d, folder / name)
            except LocalevalError as e:
                failed[name] = str(e)
    return failed
