"""HTML to plain text with the standard library's ``html.parser``.

What a reader sees is kept: the text of the body (and the title), one blank line
between block elements (paragraphs, headings, list items, table rows, ...), a line
break at ``<br>``, the line breaks of ``<pre>`` kept. What a reader does not see is dropped:
scripts, styles, ``<template>``, ``<noscript>``, ``<head>`` apart from its title,
comments. Entities are decoded (``&amp;`` -> ``&``). Runs of spaces and line breaks
inside a paragraph become one space, as a browser shows them.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["html_to_text"]

#: Elements whose content is never shown.
_HIDDEN = {"script", "style", "template", "noscript", "svg", "math", "iframe", "object"}
#: Elements that start and end a paragraph.
_BLOCKS = {"p", "div", "section", "article", "aside", "header", "footer", "main", "nav",
           "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt", "dd",
           "blockquote", "pre", "table", "tr", "thead", "tbody", "tfoot", "caption",
           "figure", "figcaption", "form", "fieldset", "address", "details", "summary",
           "hr", "title", "body", "html", "center"}
_CELLS = {"td", "th"}
_SPACES = re.compile(r"[ \t\n\r\f\v]+")
_BREAK = "\x00"  # a paragraph break in the stream of pieces (NUL never survives decoding)


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self.hidden = 0
        self.pre = 0
        self.head = False
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self.hidden += 1
        elif tag == "head":
            self.head = True
        elif tag == "title":
            self.in_title = True
        if tag == "pre":
            self.pre += 1
        if tag in _BLOCKS:
            self.pieces.append(_BREAK)
        elif tag == "br":
            self.pieces.append("\n")
        elif tag in _CELLS:
            self.pieces.append(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.pieces.append("\n")
        elif tag in _BLOCKS:
            self.pieces.append(_BREAK)

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag == "head":
            self.head = False
        elif tag == "title":
            self.in_title = False
        if tag == "pre":
            self.pre = max(0, self.pre - 1)
        if tag in _BLOCKS:
            self.pieces.append(_BREAK)

    def handle_data(self, data: str) -> None:
        if self.hidden or (self.head and not self.in_title):
            return
        self.pieces.append(data if self.pre else _SPACES.sub(" ", data))


def html_to_text(html: str) -> str:
    """The visible text of ``html``: paragraphs separated by one blank line."""
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    paragraphs = []
    for block in "".join(parser.pieces).split(_BREAK):
        lines = [line.strip() for line in block.split("\n")]
        text = "\n".join(line for line in lines if line)
        if text:
            paragraphs.append(text)
    return "\n\n".join(paragraphs)
