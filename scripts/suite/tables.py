"""Output: the plain text tables the benchmark prints, and the issue's targets."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

__all__ = ["format_table", "COLUMNS", "targets"]


# -- output ---------------------------------------------------------------------------------
def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]]) -> str:
    """A plain right-aligned text table; first column left-aligned."""
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.2f}"
        return str(v)

    head = [h for _, h in columns]
    body = [[cell(r.get(k, "")) for k, _ in columns] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = []
    for i, line in enumerate([head] + body):
        parts = [line[0].ljust(widths[0])] + [x.rjust(w) for x, w in zip(line[1:], widths[1:])]
        lines.append("  ".join(parts))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


COLUMNS = [("name", ""), ("calls", "calls"), ("prompt_tokens", "prompt sent"),
           ("evaluated_tokens", "evaluated"), ("generated_tokens", "generated"),
           ("judge_seconds", "judge s"), ("seconds", "wall s"), ("floor", "floor s")]


def targets(per_sample: Mapping[str, float], ragas: Mapping[str, float] | None,
            wall: float, floor: float, same_scores: bool | None) -> list[dict[str, Any]]:
    """The issue's four targets, each with the measured figure and pass/fail (None: not run)."""
    out = []
    if ragas:
        sent = per_sample["prompt_tokens"] / ragas["prompt_tokens"]
        ev = per_sample["evaluated_tokens"] / ragas["prompt_tokens"]
        ev_reuse = per_sample["evaluated_tokens"] / ragas["evaluated_tokens"]
        out.append({"target": "prompt tokens sent <= 50% of ragas", "value": sent,
                    "pass": sent <= 0.50})
        out.append({"target": "prompt tokens evaluated <= 30% of ragas (ragas without a "
                    "prefix cache)", "value": ev, "pass": ev <= 0.30})
        out.append({"target": "prompt tokens evaluated <= 30% of ragas (ragas with a "
                    "single-slot prefix cache, sequential)", "value": ev_reuse,
                    "pass": ev_reuse <= 0.30})
    ratio = wall / floor if floor else float("inf")
    out.append({"target": "wall <= 1.15 x compute floor", "value": ratio, "pass": ratio <= 1.15})
    out.append({"target": "same scores with fast paths on/off", "value": same_scores,
                "pass": same_scores})
    return out
