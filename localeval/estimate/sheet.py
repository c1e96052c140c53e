"""The labelling sheet: a CSV a spreadsheet opens cleanly, and the draw it records.

UTF-8 with a byte-order mark (so Excel reads accents and CJK right), one row
per drawn sample: id, question, contexts, answer, reference, then per metric
the judge's score, its working and an empty ``label_<metric>`` column, then
the row's inclusion probability and the draw's name. Cells a spreadsheet
would run as a formula (starting with = + - @, tab or carriage return) get a
leading apostrophe (OWASP's CSV-injection advice; ``results.spreadsheet_cell``, as
in results.csv); ``results.unquote_cell`` removes it when the filled sheet is read
back. A sidecar ``<sheet>.draw.json`` records
the whole draw (every row's inclusion probability, the seed).
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any, Sequence

from localeval.estimate.draw import Draw
from localeval.results import spreadsheet_cell

__all__ = ["sheet_rows", "write_sheet", "LABEL_PREFIX", "PROB_COLUMN", "DRAW_COLUMN"]

LABEL_PREFIX = "label_"
PROB_COLUMN = "inclusion_probability"
DRAW_COLUMN = "draw"
_CONTEXT_SEP = "\n\n----\n\n"


def sheet_rows(draw: Draw, metrics: Sequence[str], samples: dict[str, Any],
               scores: dict[str, dict[str, Any]], details: dict[str, dict[str, Any]]
               ) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the sheet; ``samples`` maps id to its Sample (None when unknown)."""
    header = ["id", "question", "contexts", "answer", "reference"]
    for m in metrics:
        header += [f"judge_{m}", f"working_{m}"]
    header += [LABEL_PREFIX + m for m in metrics] + [PROB_COLUMN, DRAW_COLUMN]
    rows = []
    for sid in draw.drawn_ids:
        s = samples.get(sid)
        row = [sid, getattr(s, "question", None), _CONTEXT_SEP.join(getattr(s, "contexts", None) or []),
               getattr(s, "answer", None), getattr(s, "reference", None)]
        for m in metrics:
            v = scores.get(sid, {}).get(m)
            work = details.get(sid, {}).get(m)
            row += ["" if v is None else f"{v:.6g}",
                    json.dumps(work, ensure_ascii=False) if work else ""]
        row += [""] * len(metrics)
        row += [repr(float(draw.prob[draw.ids.index(sid)])), draw.name]
        rows.append([spreadsheet_cell(c) for c in row])  # every cell is text here
    return header, rows


def write_sheet(path: str | Path, header: list[str], rows: list[list[str]], draw: Draw,
                run: str) -> tuple[Path, Path]:
    """Write the sheet and its sidecar, each through a temporary file (never half written)."""
    out = Path(path)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(header)
    w.writerows(rows)
    side = out.with_name(out.stem + ".draw.json")
    record = {"run": run, "sheet": out.name, **draw.to_dict()}
    out.parent.mkdir(parents=True, exist_ok=True)
    for p, text in ((out, "\ufeff" + buf.getvalue()),
                    (side, json.dumps(record, indent=2, ensure_ascii=False) + "\n")):
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(text, encoding="utf-8", newline="")
        os.replace(tmp, p)
    return out, side
