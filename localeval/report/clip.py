"""How much text the report page shows: each text cut at ``MAX_TEXT_CHARS``, the page's
data text within ``MAX_PAGE_TEXT``.

``MAX_SAMPLES`` bounds how many samples the page shows, not how long their texts
are: one 40 MB answer made a 38 MB page, even when no metric read it. Here
every data text the page shows (question, answer, reference, contexts,
metadata, unscored reasons, the judge's working) is cut at ``MAX_TEXT_CHARS``
characters, with a note saying how many more there are and where the full
text is; once the page has shown ``MAX_PAGE_TEXT`` characters of data text,
later texts show only their first ``SPENT_TEXT_CHARS``. At most
``MAX_CONTEXTS`` contexts are shown per sample. So the page stays a few MB
whatever the data (docs/performance.md).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Clipper", "MAX_TEXT_CHARS", "MAX_PAGE_TEXT", "SPENT_TEXT_CHARS", "MAX_CONTEXTS"]

#: One text (an answer, a context, a reason) shows at most this many characters.
MAX_TEXT_CHARS = 4_000
#: Characters of data text the whole page shows before texts are cut to ``SPENT_TEXT_CHARS``.
MAX_PAGE_TEXT = 2_000_000
#: What a text shows once the page's budget is spent.
SPENT_TEXT_CHARS = 200
#: Contexts shown per sample (the rest are counted).
MAX_CONTEXTS = 20


class Clipper:
    """Cuts the page's texts, counting what the page has shown against ``budget``."""

    def __init__(self, budget: int = MAX_PAGE_TEXT, each: int = MAX_TEXT_CHARS) -> None:
        self.left = budget
        self.each = each

    def text(self, value: Any, where: str) -> Any:
        """``value`` cut with a note naming ``where`` the full text is; non-strings unchanged."""
        if not isinstance(value, str):
            return value
        limit = self.each if self.left > 0 else SPENT_TEXT_CHARS
        if len(value) <= limit:
            self.left -= len(value)
            return value
        self.left -= limit
        more = len(value) - limit
        return f"{value[:limit]} … ({more:,} more characters; the full text is in {where})"

    def node(self, node: Any, where: str) -> Any:
        """A ``details.to_node`` tree with every text and label cut (a new tree)."""
        if not isinstance(node, dict):
            return node
        kind = node.get("kind")
        if kind == "text":
            return {**node, "text": self.text(node["text"], where)}
        if kind == "list":
            return {**node, "entries": [self.node(n, where) for n in node["entries"]]}
        if kind == "table":
            return {**node, "columns": [self.text(c, where) for c in node["columns"]],
                    "rows": [{**r, "cells": [self.node(c, where) for c in r["cells"]]}
                             for r in node["rows"]]}
        if kind == "dict":
            return {**node, "entries": [(self.text(lab, where), tone, self.node(child, where))
                                        for lab, tone, child in node["entries"]]}
        return node
