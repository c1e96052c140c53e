"""The labelling sheet: a CSV a spreadsheet opens cleanly, and the draw it records.

UTF-8 with a byte-order mark (so Excel reads accents and CJK right), one row
per drawn sample: id, question (a conversation's first user turn, and the
conversation as text in a ``conversation`` column), contexts, answer,
reference, then per metric an empty ``label_<metric>`` column, then the row's
inclusion probability and the draw's name. The sheet is blind: a labeller who
sees the judge's score beside the empty cell tends to copy it (anchoring), and
the labels would then measure the judge rather than the truth. The judge's
score and working per metric go to a companion ``<sheet>.judge.csv`` (id, draw,
``judge_<metric>``, ``working_<metric>``), to open once labelling is done;
``show_judge`` puts them in the sheet, beside the label columns, as earlier
versions did (and writes no companion). Cells a spreadsheet
would run as a formula (starting with = + - @, tab or carriage return), and
cells starting with an apostrophe, get a leading apostrophe (OWASP's
CSV-injection advice; ``results.spreadsheet_cell``), which ``results.unquote_cell``
removes when the filled sheet is read back, so every id round-trips exactly. A
sidecar ``<sheet>.draw.json`` records the whole draw (every row's inclusion
probability, the seed) and names the companion. Reading a filled sheet back
needs neither: the estimate redraws the draw from the run.

Before anything is drawn, ``check_sheet_target`` refuses an ``-o`` that would
lose work: an input of the command (the run's files, the dataset), a folder,
or an existing sheet with a filled label cell. Both files are written through
``results.atomic_file``: a failure is one message naming the file (exit 2) and
leaves no temporary file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Sequence

from localeval.errors import DataError, OutputError, UsageError
from localeval.estimate.draw import Draw
from localeval.output import OutputPolicy
from localeval.report import conversation_text, is_conversation, sample_question
from localeval.results import atomic_file, make_output_folder, write_csv
from localeval.resultsets import ResultSet

__all__ = ["sheet_rows", "judge_rows", "write_sheet", "sidecar_path", "judge_path",
           "check_sheet_target", "draw_pool", "LABEL_PREFIX", "PROB_COLUMN", "DRAW_COLUMN"]

LABEL_PREFIX = "label_"
PROB_COLUMN = "inclusion_probability"
DRAW_COLUMN = "draw"
_CONTEXT_SEP = "\n\n----\n\n"


def _judge_cells(sid: str, metrics: Sequence[str], scores: dict[str, dict[str, Any]],
                 details: dict[str, dict[str, Any]]) -> list[Any]:
    row: list[Any] = []
    for m in metrics:
        v = scores.get(sid, {}).get(m)
        work = details.get(sid, {}).get(m)
        row += ["" if v is None else f"{v:.6g}",
                json.dumps(work, ensure_ascii=False) if work else ""]
    return row


def _judge_header(metrics: Sequence[str]) -> list[str]:
    return [c for m in metrics for c in (f"judge_{m}", f"working_{m}")]


def sheet_rows(draw: Draw, metrics: Sequence[str], samples: dict[str, Any],
               scores: dict[str, dict[str, Any]], details: dict[str, dict[str, Any]], *,
               show_judge: bool = False) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the sheet; ``samples`` maps id to its Sample (None when unknown).
    Cells are as meant; ``write_sheet`` (``results.write_csv``) quotes them against formulas.

    Blind unless ``show_judge``: no judge score or working (``judge_rows`` has them). When a
    drawn sample is a conversation, a ``conversation`` column after the question holds it
    as text (``report.conversation_text``: turns, tool calls, expected calls), and its
    question is its first user turn."""
    talk = any(is_conversation(samples.get(sid)) for sid in draw.drawn_ids)
    header = ["id", "question", *(["conversation"] if talk else []), "contexts", "answer",
              "reference"]
    if show_judge:
        header += _judge_header(metrics)
    header += [LABEL_PREFIX + m for m in metrics] + [PROB_COLUMN, DRAW_COLUMN]
    rows = []
    prob = {sid: float(p) for sid, p in zip(draw.ids, draw.prob)}
    for sid in draw.drawn_ids:
        s = samples.get(sid)
        row = [sid, sample_question(s), *([conversation_text(s)] if talk else []),
               _CONTEXT_SEP.join(getattr(s, "contexts", None) or []),
               getattr(s, "answer", None), getattr(s, "reference", None)]
        if show_judge:
            row += _judge_cells(sid, metrics, scores, details)
        row += [""] * len(metrics)
        row += [repr(prob[sid]), draw.name]
        rows.append(row)  # quoted against formulas by results.write_csv
    return header, rows


def judge_rows(draw: Draw, metrics: Sequence[str], scores: dict[str, dict[str, Any]],
               details: dict[str, dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of a blind sheet's companion: per drawn row (in the sheet's order) its
    id, the draw, and per metric the judge's score and working."""
    rows = [[sid, draw.name, *_judge_cells(sid, metrics, scores, details)]
            for sid in draw.drawn_ids]
    return ["id", DRAW_COLUMN, *_judge_header(metrics)], rows


def sidecar_path(sheet: Path) -> Path:
    """``SHEET.draw.json`` beside the sheet."""
    return sheet.with_name(sheet.stem + ".draw.json")


def judge_path(sheet: Path) -> Path:
    """``SHEET.judge.csv`` beside a blind sheet: the judge's scores, kept out of the sheet."""
    return sheet.with_name(sheet.stem + ".judge.csv")


def draw_pool(run: ResultSet, metrics: Sequence[str]) -> tuple[list[str], int]:
    """The rows a sheet for ``metrics`` draws from: those the judge scored on at least one
    of them (a row scored on none would give labels the estimate has to drop), in run
    order, and how many rows were left out."""
    ids = [sid for sid, sc in run.scores.items() if any(sc.get(m) is not None for m in metrics)]
    return ids, len(run.scores) - len(ids)


def _labelled_cell(path: Path) -> tuple[int, str] | None:
    """(row, column) of the first filled label cell of an existing sheet, else None.

    A file that cannot be read as a table is refused: it is not a sheet this
    command wrote, and what it holds is not ours to replace.
    """
    from localeval.resultsets import read_label_table

    try:
        t = read_label_table(path)
    except DataError as e:
        if "has no rows" in str(e):
            return None  # a header alone: an empty sheet
        raise UsageError(f"-o {path} exists and is not a labelling sheet ({e}); choose "
                         "another -o or move it") from None
    cols = [c for c in t.columns if c.startswith((LABEL_PREFIX, "human_")) or c == "label"]
    for n, r in t.rows:
        for c in cols:
            v = r.get(c)
            if v is not None and str(v).strip():
                return n, c
    return None


def check_sheet_target(out: str | Path, inputs: Iterable[str | Path]) -> Path:
    """Refuse an ``-o`` that would lose work (UsageError naming the file, exit 2): an input
    of the command, an existing folder, or an existing sheet with a filled label cell; make
    its folder. An existing sheet with every label cell empty may be replaced."""
    p = Path(out)
    names = {p: "the sheet", sidecar_path(p): "the sheet's sidecar",
             judge_path(p): "the sheet's companion of judge scores"}
    policy = OutputPolicy(inputs)  # the one output policy: never over or inside an input
    for target, what in names.items():
        try:
            policy.check(target, folder=False)
        except OutputError as e:
            if target == p:
                raise
            raise OutputError(f"{e} ({what}, written beside -o {p})") from None
    if p.is_dir():
        raise UsageError(f"-o {p} is a folder; name the sheet's file (e.g. "
                         f"{p / 'label-sheet.csv'})")
    if p.exists():
        cell = _labelled_cell(p)
        if cell is not None:
            raise UsageError(f"-o {p} already holds labels (row {cell[0]}, column "
                             f"{cell[1]!r}); a new sheet would lose them: choose another -o "
                             "or move it")
    make_output_folder(p.parent)
    return p


def write_sheet(path: str | Path, header: list[str], rows: list[list[str]], draw: Draw,
                run: str, judge: tuple[list[str], list[list[str]]] | None = None
                ) -> tuple[Path, ...]:
    """Write the sheet, its sidecar and (``judge``: the companion's header and rows, from
    ``judge_rows``) a blind sheet's companion, each through ``results.atomic_file`` (never
    half written; a failure is an OutputError naming the file, exit 2)."""
    out = Path(path)
    side = sidecar_path(out)
    record = {"run": run, "sheet": out.name,
              "judge_scores": judge_path(out).name if judge is not None else None,
              **draw.to_dict()}
    make_output_folder(out.parent)
    written = [write_csv(out, header, rows)]
    with atomic_file(side, newline="") as f:
        f.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    written.append(side)
    if judge is not None:
        written.append(write_csv(judge_path(out), *judge))
    return tuple(written)
