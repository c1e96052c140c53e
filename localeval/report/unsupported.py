"""A span checker's unsupported spans, marked in the answer the report shows.

A span checker (LettuceDetect, ``--checker``) scores faithfulness by marking
the characters of an answer its contexts do not support; each sentence's
verdict reason names those spans (``judge.read_span_reason`` reads them back).
Here they become the pieces of the answer the per-sample view shows, the
unsupported ones marked with their probability, so a reader sees what the
checker doubted where it stands, not only in the verdict table below.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["answer_pieces"]


def answer_pieces(answer: Any, details: Mapping[str, Any] | None,
                  signature: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    """``answer`` (the text shown) as ``{"text", "p"}`` pieces, ``p`` the P(unsupported) of a
    marked span and None elsewhere; None when nothing is marked (no checker run, no span, or
    a span not found in the text shown)."""
    judge = str((signature or {}).get("judge") or "")
    if not isinstance(answer, str) or not judge.startswith("checker:"):
        return None
    from localeval.judge import read_span_reason

    spans: list[tuple[str, float]] = []
    for key, value in (details or {}).items():
        if key.split(":", 1)[0] != "faithfulness" or not isinstance(value, Mapping):
            continue
        for row in value.get("verdicts") or []:
            if isinstance(row, Mapping):
                spans += read_span_reason(row.get("reason"))
    marks: list[tuple[int, int, float]] = []
    for text, p in spans:
        at = answer.find(text)
        while at >= 0 and any(s < at + len(text) and at < e for s, e, _ in marks):
            at = answer.find(text, at + 1)
        if at >= 0 and text:
            marks.append((at, at + len(text), p))
    if not marks:
        return None
    pieces: list[dict[str, Any]] = []
    cursor = 0
    for start, end, p in sorted(marks):
        if start > cursor:
            pieces.append({"text": answer[cursor:start], "p": None})
        pieces.append({"text": answer[start:end], "p": f"{p:.2f}"})
        cursor = end
    if cursor < len(answer):
        pieces.append({"text": answer[cursor:], "p": None})
    return pieces
