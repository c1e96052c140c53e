"""``answer()``: run the user's pipeline over a test set and write the filled rows.

Each row's question goes to the pipeline (with the row as ``row=`` when the
function takes it); what it returns fills the row's answer, contexts and
retrieved ids (``contract``). A call that raises keeps its row with a
``pipeline_error`` and the run goes on. ``parallel`` threads call the pipeline
at once; the rows are written in input order whatever order they finish in, so
the file is the same byte for byte at any ``parallel``.

Resuming. The rows are appended to ``OUT.tmp`` (``output.AppendFile``), one
row as soon as it and every row before it are done, each on disk before the
next, and ``OUT.tmp`` is renamed to ``OUT`` at the end. Ctrl-C renames it too,
after appending the earlier run's rows not reached yet, so the file then holds
every row done; so does a pipeline that ends the process on a row
(``sys.exit``, ``SystemExit`` or another ``BaseException``): that is a
UsageError naming the row (exit 2). A full disk leaves ``OUT.tmp`` with its
whole rows. A rerun to the same output reads ``OUT`` (and an ``OUT.tmp`` a
killed or failed run left) and asks the pipeline only for rows not answered
there, known by (id, question); a failed row is asked again. ``OUT`` may not be
the data file or the pipeline's own file (``output.OutputPolicy``).

Why no cache keyed by the function's name (``localeval.cache`` keys judge calls
by the judge's fingerprint: the model file's hash and every setting): a
pipeline's answers depend on what localeval cannot see (its index, prompts,
model, a server behind it), so ``rag:answer`` after a change is the same name
with new answers. A cache keyed by it would hand the old answers to the new
version, and ``localeval diff`` would then compare a version with itself. The
output file the user named for this version is the only store, and
``cache=False`` (``--no-cache``) answers every row again.
"""

from __future__ import annotations

import copy
import inspect
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from localeval.dataset import Dataset, load_dataset
from localeval.errors import DataError, UsageError, printable
from localeval.output import AppendFile, OutputPolicy, move_into_place
from localeval.pipeline.contract import read_output
from localeval.pipeline.rows import (
    ERROR_COLUMN,
    Columns,
    RowKey,
    base_row,
    earlier_rows,
    failed_row,
    filled_row,
    is_filled,
)
from localeval.pipeline.spec import Pipeline, load_pipeline
from localeval.results import dumps_strict
from localeval.run import RunProgress
from localeval.types import Usage

__all__ = ["answer", "AnswerResult", "Failure"]


@dataclass(frozen=True)
class Failure:
    """A row whose call failed: its id, its line or row in the input, and the error."""

    id: str
    row: int | None
    error: str


@dataclass
class AnswerResult:
    """What ``answer()`` did: the rows in input order, and how each was filled.

    ``answered``: rows the pipeline answered in this call; ``resumed``: rows taken
    from an earlier run to the same output; ``failures``: rows whose call failed
    (they carry ``pipeline_error``). ``out``: the file written (None without one).
    """

    rows: list[dict[str, Any]]
    answered: int = 0
    resumed: int = 0
    failures: list[Failure] = field(default_factory=list)
    out: Path | None = None
    pipeline: str = ""
    #: "line" or "row": how ``Failure.row`` counts, as the input's error messages do
    unit: str = "line"

    @property
    def failed(self) -> int:
        return len(self.failures)

    @property
    def all_failed(self) -> bool:
        """Every row failed: the pipeline could not answer at all (the CLI exits 3)."""
        return bool(self.rows) and self.failed == len(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


def answer(data: Any, pipeline: str | Callable[..., Any], out: str | os.PathLike[str] | None = None,
           *, parallel: int = 1, limit: int | None = None,
           columns: Iterable[str] | Mapping[str, str] | None = None, cache: bool = True,
           progress: bool | None = None) -> AnswerResult:
    """Fill ``data``'s answers (and contexts, retrieved ids) from ``pipeline``.

    ``data``: anything ``load_dataset`` reads (a file, a DataFrame, a list of
    dicts), each row with a question. ``pipeline``: a function, or a
    ``"module:function"`` / ``"path/to/file.py:function"`` spec. ``out``: the JSONL
    file to write (and resume from, unless ``cache=False``). ``parallel``: threads
    calling the pipeline at once (it must then be thread-safe). ``limit``: the
    first N rows only. ``progress``: None shows a bar on a terminal (a line every
    30 s in a log), False nothing.
    """
    if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
        raise UsageError(f"parallel: expected a whole number >= 1, got {parallel!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise UsageError(f"limit: expected a whole number >= 1, got {limit!r}")
    dataset = load_dataset(data, columns=columns)
    samples = dataset.samples[:limit] if limit else dataset.samples
    _check_questions(dataset, samples)
    pipe = load_pipeline(pipeline)
    cols = Columns.of(dataset)
    rows = [base_row(s, cols) for s in samples]
    keys = [cols.key(r) for r in rows]
    path = Path(out) if out is not None else None
    sink = _sink(path, data, pipe)  # -o over the data or the pipeline's file: refused here
    earlier = earlier_rows(path, cols) if path is not None and cache else {}
    result = AnswerResult([], out=path, pipeline=pipe.label, unit=dataset.unit)
    bar = RunProgress(len(rows), enabled=progress, description="answering")
    stopped: BaseException | None = None
    try:
        if sink is not None:
            sink.start()
        stopped = _fill(rows, keys, samples, earlier, pipe, cols, parallel, result, bar, sink,
                        dataset.source)
        if sink is not None and path is not None:
            if stopped is not None:
                # the earlier run's rows this one did not reach stay in the file
                written = {cols.key(r) for r in result.rows}
                for key, row in earlier.items():
                    if key not in written:
                        sink.add(dumps_strict(row))
            sink.close()
            _move(sink.path, path)
    finally:
        bar.close()
        if sink is not None:
            sink.close()  # after an OutputError, OUT.tmp keeps the whole rows: the next run resumes
    if stopped is not None:
        raise stopped
    return result


def _sink(path: Path | None, data: Any, pipe: Pipeline) -> AppendFile | None:
    """The checkpoint ``OUT.tmp`` the rows are appended to (renamed to ``OUT`` at the end),
    once the output policy has checked that ``OUT`` is none of the command's inputs."""
    if path is None:
        return None
    inputs = [data] if isinstance(data, (str, os.PathLike)) else []
    policy = OutputPolicy([*inputs, pipe_file(pipe)], overwrite=True)
    policy.check(path, folder=False)
    return policy.appender(path.with_name(path.name + ".tmp"))


def pipe_file(pipe: Pipeline) -> str | None:
    """The file the pipeline's function was imported from (None: not a file)."""
    try:
        return inspect.getsourcefile(inspect.unwrap(pipe.function))
    except (TypeError, ValueError):
        return None


def _move(tmp: Path, path: Path) -> None:
    move_into_place(tmp, path, then=f"the rows are kept in {tmp}; run the same command "
                                    "again to resume")


@dataclass(frozen=True)
class _Stopped:
    """What the pipeline raised that is not an ``Exception`` (``sys.exit``, SystemExit...)."""

    error: BaseException


def _fill(rows: list[dict[str, Any]], keys: list[RowKey | None], samples: list[Any],
          earlier: dict[RowKey, dict[str, Any]], pipe: Pipeline, cols: Columns, parallel: int,
          result: AnswerResult, bar: RunProgress, sink: AppendFile | None,
          source: str | None) -> BaseException | None:
    """Fill and write the rows in order; what stopped it, if something did: the
    KeyboardInterrupt, or the UsageError naming the row whose call ended the process."""
    done: dict[int, dict[str, Any]] = {}
    for i, key in enumerate(keys):
        before = earlier.get(key) if key is not None else None
        if before is not None and is_filled(before, cols):
            done[i] = _resumed(rows[i], before, cols)
    todo = [i for i in range(len(rows)) if i not in done]
    usage = Usage()
    try:
        for i, row in _in_order(len(rows), done, todo, rows, pipe, cols, parallel):
            if isinstance(row, _Stopped):
                return _stop_error(row.error, samples[i], result, pipe, source)
            if i in done:
                result.resumed += 1
            elif ERROR_COLUMN in row:
                result.failures.append(Failure(samples[i].id, samples[i].row, row[ERROR_COLUMN]))
            else:
                result.answered += 1
            result.rows.append(row)
            if sink is not None:
                sink.add(dumps_strict(row))
            bar.update(usage)
    except KeyboardInterrupt as e:
        return e
    return None


def _stop_error(e: BaseException, sample: Any, result: AnswerResult, pipe: Pipeline,
                source: str | None) -> UsageError:
    """The row, the user's code, and that the rows before it are kept (exit 2, never the
    pipeline's own exit code, which could be 0 or the gates' 1)."""
    what = (f"sys.exit({e.code!r})" if isinstance(e, SystemExit)
            else f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)
    where = ", ".join(x for x in (source, f"{result.unit} {sample.row}"
                                  if sample.row is not None else None) if x)
    kept = (f"the {len(result.rows)} rows before it are kept in {result.out}"
            if result.out is not None else f"{len(result.rows)} rows were answered before it")
    return UsageError(f"{printable(where) + ': ' if where else ''}row id {printable(sample.id)}: "
                      f"the pipeline {printable(pipe.label)} ended the process ({printable(what)}) "
                      f"while answering it: this is the pipeline's code, not localeval's; {kept}. "
                      "Fix it and run the same command again: answered rows are not asked again")


def _resumed(row: dict[str, Any], before: dict[str, Any], cols: Columns) -> dict[str, Any]:
    """The input row (today's columns) with the fields an earlier run filled."""
    merged = dict(row)
    merged.pop(ERROR_COLUMN, None)
    for f in ("answer", "contexts", "retrieved_ids"):
        if cols[f] in before:
            merged[cols[f]] = before[cols[f]]
    return merged


def _in_order(n: int, done: dict[int, dict[str, Any]], todo: list[int],
              rows: list[dict[str, Any]], pipe: Pipeline, cols: Columns,
              parallel: int) -> Iterator[tuple[int, Any]]:
    """(index, filled row) for every row in input order; ``todo`` rows are asked of the
    pipeline, by ``parallel`` threads at most, with at most ``4 * parallel`` ahead of the
    row being written (so a million rows are never all queued)."""
    from contextlib import closing

    from localeval.concurrency import ordered_map

    asked = ordered_map(lambda j: _ask(pipe, rows[j], cols), todo,
                        workers=min(parallel, len(todo)), window=4 * parallel, wait=False,
                        name="localeval-answer")
    with closing(asked):
        for i in range(n):
            yield i, done[i] if i in done else next(asked)


def _ask(pipe: Pipeline, row: dict[str, Any], cols: Columns) -> Any:
    """One call: the filled row, the row with ``pipeline_error`` if the call failed, or
    ``_Stopped`` when it raised what is not an ``Exception`` (``sys.exit``)."""
    question = row[cols["question"]]
    try:
        return filled_row(row, read_output(pipe(question, copy.deepcopy(row))), cols)
    except Exception as e:  # the user's code: any failure is this row's, the run goes on
        message = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        return failed_row(row, message, cols)
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - sys.exit in the user's code: stop, name the row
        return _Stopped(e)


def _check_questions(data: Dataset, samples: list[Any]) -> None:
    """Every row needs a question (what the pipeline is asked): one DataError naming the first."""
    missing = [s for s in samples if not isinstance(s.question, str)]
    if not missing:
        return
    if len(missing) == len(data.samples):
        raise DataError(f"no column '{data.column('question')}': 'localeval answer' asks the "
                        "pipeline each row's question (also accepted: user_input, query; or map "
                        "yours with --columns question=COL)", file=data.source)
    raise DataError("no question: 'localeval answer' asks the pipeline each row's question",
                    file=data.source, row=missing[0].row, column=data.column("question"),
                    unit=data.unit)
