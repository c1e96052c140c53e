"""Fault injection, input half: hostile data files, paths and options against the contract.

Each catalogue entry is run as a real ``localeval`` process and must keep the
contract of docs/failure-behaviour.md: the documented exit code (2 for bad input,
paths and options), no traceback, one message naming the file, line or column
(or the option), and, where the run goes ahead, intact data: one results line per
input row, strict JSON (no NaN/Infinity), no NUL byte, no score for a row that
failed. The judge, cache and HTTP half of the catalogue is
tests/model/test_faults_judge.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from localeval.errors import DataError

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False


# -- helpers -------------------------------------------------------------------------
def strict_loads(text: str):
    """json.loads that fails on NaN/Infinity, as strict JSON readers (JavaScript, jq) do."""
    def bad(name):
        raise AssertionError(f"non-strict JSON token {name}")
    return json.loads(text, parse_constant=bad)


def cli(*argv: str, cwd: Path | None = None, unprivileged: bool = False,
        env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    """``localeval ARGV`` in a new process (as an unprivileged user when asked and root)."""
    prefix: list[str] = []
    if unprivileged and ROOT:
        # root ignores file modes; without these two capabilities it obeys them
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: cannot make a path unwritable")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    return subprocess.run([*prefix, sys.executable, "-m", "localeval.cli.app", *argv],
                          capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})})


def jsonl(rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def assert_one_message(proc, code: int, *says: str) -> None:
    """Exit code, no traceback, exactly one error line, and it says each of ``says``."""
    err = proc.stderr
    assert proc.returncode == code, (proc.returncode, err)
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("localeval") and ": error:" in ln]
    assert len(lines) == 1, err
    for s in says:
        assert s in lines[0], (s, lines[0])


def assert_run_data(out: Path, rows: int, failed: dict[str, str] | None = None) -> list[dict]:
    """The run folder after a run: every row once, strict JSON, no NUL, no failed score."""
    raw = (out / "results.jsonl").read_bytes()
    assert b"\x00" not in raw
    records = [strict_loads(x) for x in raw.decode("utf-8").split("\n") if x]
    assert len(records) == rows
    assert len({r["id"] for r in records}) == rows
    strict_loads((out / "summary.json").read_text(encoding="utf-8"))
    for r in records:
        for metric, value in r["scores"].items():
            assert (value is None) == (metric in r["errors"]), r
        for metric in (failed or {}).get(r["id"], ()):
            assert r["scores"][metric] is None, r
    return records


# -- the catalogue: hostile data files -----------------------------------------------
@dataclass
class Case:
    """A data file and what a run on it must do."""

    name: str
    file: str                       # file name (its suffix picks the reader)
    content: str | bytes | Callable[[Path], None]
    metrics: str = "mrr"
    code: int = 2
    says: tuple[str, ...] = ()      # in the one error line (exit != 0)
    rows: int = 0                   # results lines (exit 0)
    extra: tuple[str, ...] = ()     # more options
    check: Callable[[list[dict]], None] | None = None


R = {"retrieved_ids": ["d1", "d2"], "relevant_ids": ["d2"]}
DEEP = 100_000


def _parquet(kind: str) -> Callable[[Path], None]:
    def write(p: Path) -> None:
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq
        grades = [{"d1": 1, "d2": 3}, {"d9": 2}]
        if kind == "map":
            table = pa.table({
                "id": ["a", "b"], "retrieved_ids": [["d1", "d2"], ["d9"]],
                "relevant_ids": pa.array([list(g.items()) for g in grades],
                                         type=pa.map_(pa.string(), pa.int64()))})
            pq.write_table(table, p)
        else:  # a pandas column of dicts: pyarrow stores a struct with every row's keys
            pd.DataFrame({"id": ["a", "b"], "retrieved_ids": [["d1", "d2"], ["d9"]],
                          "relevant_ids": grades}).to_parquet(p)
    return write


def _graded_ndcg(records: list[dict]) -> None:
    # grades d1=1, d2=3 ranked d1, d2: DCG = 1 + 3/log2(3); IDCG = 3 + 1/log2(3)
    import math
    want = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    a, b = records
    assert a["scores"]["ndcg@2"] == pytest.approx(want)
    assert b["scores"]["ndcg@2"] == pytest.approx(1.0)


def _long_cell(p: Path, size: int) -> None:
    """A CSV whose contexts cell (a JSON array, quoted) is ``size`` characters long."""
    cell = json.dumps(["x" * size]).replace('"', '""')
    p.write_text(f'question,answer,reference,contexts\nq,a,r,"{cell}"\n', encoding="utf-8")


def _texts_kept(records: list[dict]) -> None:
    assert [r["id"] for r in records] == ["1", "2"]  # no id column: the row number
    assert all(r["scores"]["rougeL"] is not None for r in records)


CASES = [
    # JSONL: lines end at \n only
    Case("jsonl_u2028_in_string", "d.jsonl",
         jsonl([{"question": "a\u2028b\u2029c\u0085d", **R}, {"question": "q2", **R}]),
         code=0, rows=2),
    # nesting and big numbers
    Case("json_nested_100k", "d.jsonl", '{"meta": ' + "[" * DEEP + "]" * DEEP + "}\n",
         says=("d.jsonl, line 1", "nested too deeply")),
    Case("metadata_nested_500", "d.jsonl",
         jsonl([{**R, "meta": json.loads("[" * 500 + "]" * 500)}]),
         says=("line 1", "column 'meta'", "nested more than")),
    Case("id_of_5000_digits", "d.jsonl", '{"id": ' + "7" * 5000 + ', "retrieved_ids": [], '
         '"relevant_ids": []}\n', says=("line 1", "thousands of digits")),
    Case("grade_of_400_digits", "d.jsonl",
         '{"retrieved_ids": ["d1"], "relevant_ids": {"d1": ' + "9" * 400 + "}}\n",
         says=("line 1", "column 'relevant_ids'", "of 400 digits", "between")),
    Case("grade_1e308", "d.jsonl", jsonl([{"retrieved_ids": ["d1"],
                                          "relevant_ids": {"d1": 1e308, "d2": 1e308}}]),
         metrics="dcg@5", says=("column 'relevant_ids'", "between -1000 and 1000")),
    # non-finite numbers
    Case("grade_Infinity", "d.jsonl",
         '{"retrieved_ids": ["d1"], "relevant_ids": {"d1": Infinity}}\n',
         says=("line 1", "Infinity is not a number JSON allows")),
    Case("grade_NaN", "d.jsonl", '{"retrieved_ids": ["d1"], "relevant_ids": {"d1": NaN}}\n',
         says=("line 1", "NaN")),
    Case("grade_1e400", "d.jsonl", '{"retrieved_ids": ["d1"], "relevant_ids": {"d1": 1e400}}\n',
         says=("line 1", "too large")),
    Case("json_array_Infinity", "d.json", '[{"retrieved_ids": ["d1"], "relevant_ids": '
         '{"d1": -Infinity}}]', says=("d.json", "-Infinity")),
    # CSV/TSV damage
    Case("csv_unterminated_quote", "d.csv",
         'question,answer,reference\nq1,"never closed,r1\nq2,a2,r2\nq3,a3,r3\n',
         metrics="rougeL", says=("d.csv, line 2", "unterminated quote")),
    Case("tsv_quote_swallows_rows", "d.tsv",
         'question\tanswer\treference\nq1\t"starts quoted\tr1\nq2\ta2"\tr2\nq3\ta3\tr3\n',
         metrics="rougeL", says=("d.tsv, line 2", "column 'answer'", "starts with a quote")),
    Case("tsv_quote_inside_cell", "d.tsv",
         'question\tanswer\treference\nq1\t"so-called" answer\tr1\n', metrics="rougeL",
         says=("line 2", "quote in the wrong place")),
    Case("csv_duplicate_header", "d.csv", "question,answer,answer,reference\nq,a1,a2,r\n",
         metrics="rougeL", says=("line 1", "duplicate column 'answer'")),
    Case("csv_short_row", "d.csv", "question,answer,reference\nq1,a1,r1\nq2,a2\n",
         metrics="rougeL", says=("line 3", "2 cells, but the header has 3 columns")),
    Case("csv_long_row", "d.csv", "question,answer,reference\nq1,a1,r1,extra\n",
         metrics="rougeL", says=("line 2", "4 cells, but the header has 3")),
    Case("csv_nul_byte", "d.csv", "question,answer,reference\nq1,a\x001,r1\n", metrics="rougeL",
         says=("line 2", "NUL")),
    Case("csv_bad_list_cell", "d.csv", "retrieved_ids,relevant_ids\n[\"d1\"],not json\n",
         says=("line 2", "column 'relevant_ids'", "expected a JSON array")),
    Case("csv_text_cells_that_look_like_json", "d.csv",
         'question,answer,reference\nq1,"{""verdict"": ""yes""}",the verdict is yes\n'
         'q2,"[1, 2]",one and two\n', metrics="rougeL", code=0, rows=2, check=_texts_kept),
    Case("csv_cell_over_128k", "d.csv", lambda p: _long_cell(p, 300_000), metrics="rougeL",
         code=0, rows=1),
    # graded relevance from Parquet
    Case("parquet_arrow_map_grades", "d.parquet", _parquet("map"), metrics="ndcg@2", code=0,
         rows=2, check=_graded_ndcg),
    Case("parquet_pandas_dict_grades", "d.parquet", _parquet("struct"), metrics="ndcg@2",
         code=0, rows=2, check=_graded_ndcg),
    Case("parquet_garbage", "d.parquet", b"PAR1 this is not parquet", says=("d.parquet",
                                                                            "cannot read")),
    # other damage that already held: kept in the catalogue so that it keeps holding
    Case("not_utf8", "d.jsonl", b'{"question": "caf\xe9"}\n', says=("line 1", "UTF-8")),
    Case("empty_file", "d.jsonl", "\n \n", says=("file is empty",)),
    Case("duplicate_ids", "d.jsonl", jsonl([{"id": "x", **R}, {"id": "x", **R}]),
         says=("line 2", "duplicate id")),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_data_file(case: Case, tmp_path):
    data = tmp_path / case.file
    if callable(case.content):
        case.content(data)
    elif isinstance(case.content, bytes):
        data.write_bytes(case.content)
    else:
        data.write_text(case.content, encoding="utf-8")
    out = tmp_path / "out"
    proc = cli("run", str(data), "-m", case.metrics, "-o", str(out), "--quiet", *case.extra)
    if case.code:
        assert_one_message(proc, case.code, str(data), *case.says)
        assert not (out / "results.jsonl").exists(), "bad data must stop the run before work"
        return
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    records = assert_run_data(out, case.rows)
    if case.check:
        case.check(records)


# -- paths ---------------------------------------------------------------------------
def _data(d: Path) -> Path:
    p = d / "d.jsonl"
    p.write_text(jsonl([R, R]), encoding="utf-8")
    return p


def test_out_is_a_file(tmp_path):
    data, out = _data(tmp_path), tmp_path / "out.txt"
    out.write_text("keep me")
    proc = cli("run", str(data), "-m", "mrr", "-o", str(out))
    assert_one_message(proc, 2, f"output folder {out} is a file")
    assert out.read_text() == "keep me"


def test_out_under_a_file(tmp_path):
    data, f = _data(tmp_path), tmp_path / "plain"
    f.write_text("x")
    proc = cli("run", str(data), "-m", "mrr", "-o", str(f / "sub" / "out"))
    assert_one_message(proc, 2, "cannot create output folder", f"{f} is a file")


def test_out_not_writable(tmp_path):
    data = _data(tmp_path)
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o555)
    proc = cli("run", str(data), "-m", "mrr", "-o", str(locked / "out"), unprivileged=True)
    assert_one_message(proc, 2, str(locked / "out"), "permission denied")


def test_existing_out_not_writable(tmp_path):
    data, out = _data(tmp_path), tmp_path / "out"
    out.mkdir()
    out.chmod(0o555)
    proc = cli("run", str(data), "-m", "mrr", "-o", str(out), unprivileged=True)
    assert_one_message(proc, 2, f"output folder {out}", "not writable")


def test_dataset_unreadable(tmp_path):
    data = _data(tmp_path)
    data.chmod(0)
    proc = cli("run", str(data), "-m", "mrr", "-o", str(tmp_path / "out"), unprivileged=True)
    assert_one_message(proc, 2, str(data), "cannot read: permission denied")


def test_dataset_is_a_directory(tmp_path):
    proc = cli("run", str(tmp_path), "-m", "mrr", "-o", str(tmp_path / "out"))
    assert_one_message(proc, 2, str(tmp_path), "is a directory")


def test_cache_is_a_directory(tmp_path):
    data = _data(tmp_path)
    proc = cli("run", str(data), "-m", "mrr", "--cache", str(tmp_path), "-o",
               str(tmp_path / "out"))
    assert_one_message(proc, 2, str(tmp_path), "directory")
    proc = cli("cache", "stats", "--cache", str(tmp_path))
    assert_one_message(proc, 2, str(tmp_path), "directory")


def test_cache_folder_not_writable(tmp_path):
    data = _data(tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    proc = cli("run", str(data), "-m", "mrr", "-o", str(tmp_path / "out"), unprivileged=True,
               env={"LOCALEVAL_CACHE": str(ro / "sub" / "c.sqlite")})
    assert proc.returncode in (2, 3), proc.stderr
    assert_one_message(proc, proc.returncode, str(ro / "sub"))


# -- options -------------------------------------------------------------------------
OPTION_CASES = [
    (["--fail-under", "mrr=nan"], "mrr=nan", "finite"),
    (["--fail-under", "mrr=inf"], "mrr=inf", "finite"),
    (["-m", "mrr:threshold=nan"], "threshold=nan", "not a finite number"),
    (["-m", ",,,"], "no metric named in ',,,'", ""),
    (["--columns", "answer=no_such_col"], "no column 'no_such_col'", "--columns answer="),
    (["--judge-concurrency", "0"], "--judge-concurrency", "at least 1"),
    (["--workers", "0"], "--workers", "at least 1"),
    (["--repeats", "0"], "--repeats", "at least 1"),
    (["--temperature", "nan"], "--temperature", "finite"),
    (["--n-ctx", "-5"], "--n-ctx", "at least 1"),
]


@pytest.mark.parametrize("opts,names,says", OPTION_CASES, ids=[" ".join(c[0]) for c in
                                                               OPTION_CASES])
def test_bad_option(opts, names, says, tmp_path):
    data = _data(tmp_path)
    argv = ["run", str(data), "-o", str(tmp_path / "out"), "--quiet"]
    if "-m" not in opts:
        argv += ["-m", "mrr"]
    proc = cli(*argv, *opts)
    assert_one_message(proc, 2, names, says)
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_column_map_wins_over_the_files_own_column(tmp_path):
    """``--columns answer=mine`` scores ``mine``; the file's own ``answer`` is metadata."""
    p = tmp_path / "d.jsonl"
    p.write_text(jsonl([{"answer": "wrong words", "mine": "the cat sat", "reference":
                         "the cat sat"}]), encoding="utf-8")
    out = tmp_path / "out"
    proc = cli("run", str(p), "-m", "rougeL", "--columns", "answer=mine", "-o", str(out),
               "--quiet")
    assert proc.returncode == 0, proc.stderr
    (r,) = assert_run_data(out, 1)
    assert r["scores"]["rougeL"] == pytest.approx(1.0)


# -- the output folder's lock --------------------------------------------------------
def test_second_run_on_a_locked_folder_names_the_holder(tmp_path):
    from localeval.results.folder_lock import FolderLock

    data, out = _data(tmp_path), tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").write_text('{"id": "theirs"}\n')
    lock = FolderLock(out)
    assert lock.acquire() is None
    try:
        proc = cli("run", str(data), "-m", "mrr", "-o", str(out))
        assert_one_message(proc, 2, f"output folder {out} is in use", f"pid {os.getpid()}")
        assert (out / "results.jsonl").read_text() == '{"id": "theirs"}\n'
    finally:
        lock.release()
    # --overwrite: the folder's results.jsonl is not this data's (refused without it)
    proc = cli("run", str(data), "-m", "mrr", "-o", str(out), "--quiet", "--overwrite")
    assert proc.returncode == 0, proc.stderr
    assert_run_data(out, 2)
    assert not (out / ".localeval.lock").exists(), "a finished run leaves no lock behind"


def test_stale_lock_of_a_dead_run_is_taken_over_and_said(tmp_path):
    data, out = _data(tmp_path), tmp_path / "out"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / ".localeval.lock").write_text(f"{dead.pid} somehost 2026-01-01 00:00:00\n")
    proc = cli("run", str(data), "-m", "mrr", "-o", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert f"took over the lock {out / '.localeval.lock'}" in proc.stderr
    assert f"pid {dead.pid}, no longer running" in proc.stderr
    assert_run_data(out, 2)


# -- SIGTERM is handled as SIGINT ----------------------------------------------------
# A child started from a background job inherits SIGINT ignored (CI runners, `cmd &` in a
# script), and Python then installs no KeyboardInterrupt handler: the driver restores it,
# as an interactive terminal would have it.
_DRIVER = ("import json, os, signal, sys, localeval; "
           "signal.signal(signal.SIGINT, signal.default_int_handler); "
           "localeval.configure(logit_bias={int(k): v for k, v in "
           "json.loads(os.environ['TEST_BIAS']).items()}); "
           "from localeval.cli.app import main; sys.exit(main(sys.argv[1:]))")


def _wait_for_first_result(proc: subprocess.Popen, out: Path, timeout: float = 300) -> None:
    """Until the run in ``proc`` has written one results line to ``out`` (or has ended)."""
    results = out / "results.jsonl"
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        if results.exists() and results.read_text(encoding="utf-8").count("\n") >= 1:
            return
        time.sleep(0.05)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_sigterm_like_sigint_keeps_finished_samples(sig, tiny_gguf, bias, tmp_path):
    from localeval.cli.app import example_path

    # enough samples that the run is still scoring when the signal comes (the tiny judge
    # with drafting scores a sample in a fraction of a second)
    rows = [json.loads(x) for x in example_path().read_text(encoding="utf-8").splitlines()]
    rows = [{**r, "id": f"{r['id']}-{k}"} for k in range(4) for r in rows]
    data = tmp_path / "many.jsonl"
    data.write_text(jsonl(rows), encoding="utf-8")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONUNBUFFERED="1", TEST_BIAS=json.dumps(bias))
    proc = subprocess.Popen([sys.executable, "-c", _DRIVER, "run", str(data), "-m",
                             "faithfulness,mrr", "--judge", str(tiny_gguf), "--n-ctx", "4096",
                             "-o", str(out), "--quiet"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    _wait_for_first_result(proc, out)
    assert proc.poll() is None, "the run finished before the signal; test data too small"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    summary = strict_loads((out / "summary.json").read_text(encoding="utf-8"))
    finished = summary["interrupted"]["finished"]
    assert 1 <= finished < len(rows) and summary["interrupted"]["total"] == len(rows)
    assert_run_data(out, finished)
    assert not (out / ".localeval.lock").exists()


def test_second_real_run_while_the_first_is_scoring(tiny_gguf, bias, tmp_path):
    """Run B starts on A's -o while A is writing: B is refused naming A's pid, A's
    results.jsonl stays A's alone (before the lock: B truncated it, A kept appending at
    its offset: NUL bytes and samples of both datasets mixed, both exit 0)."""
    from localeval.cli.app import example_path

    rows = [json.loads(x) for x in example_path().read_text(encoding="utf-8").splitlines()]
    a, b, out = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "out"
    a.write_text(jsonl([{**r, "id": f"a{i}"} for i, r in enumerate(rows * 4)]), encoding="utf-8")
    b.write_text(jsonl([{"id": f"b{i}", **R} for i in range(50)]), encoding="utf-8")
    env = dict(os.environ, PYTHONUNBUFFERED="1", TEST_BIAS=json.dumps(bias))
    first = subprocess.Popen([sys.executable, "-c", _DRIVER, "run", str(a), "-m",
                              "faithfulness,context_precision,mrr", "--judge", str(tiny_gguf),
                              "--n-ctx", "4096", "-o", str(out), "--quiet"], env=env,
                             stderr=subprocess.PIPE, text=True)
    _wait_for_first_result(first, out)
    second = cli("run", str(b), "-m", "mrr", "-o", str(out), "--quiet")
    assert first.poll() is None, "run A finished before run B; test data too small"
    first.send_signal(signal.SIGINT)  # no need to wait for A's 160 samples
    _, err = first.communicate(timeout=120)
    assert first.returncode == 130, err
    assert_one_message(second, 2, f"output folder {out} is in use", f"pid {first.pid}")
    records = assert_run_data(out, strict_loads((out / "summary.json").read_text())
                              ["interrupted"]["finished"])
    assert records and all(r["id"].startswith("a") for r in records)


# -- memory at scale: the loader streams, long texts are hashed in pieces -------------------
def test_jsonl_is_read_line_by_line(tmp_path):
    """The first record comes before the rest of the file is read (before: the whole file's
    bytes, its text and its list of lines were held at once, 19 times a long line's size)."""
    from localeval.dataset.formats import read_file

    p = tmp_path / "d.jsonl"
    p.write_bytes(b'{"id": "a", "answer": "x"}\n' + b"\xff" * 10 + b"\n")
    rows = read_file(p, None)
    assert next(rows) == (1, {"id": "a", "answer": "x"})
    with pytest.raises(DataError, match="not valid UTF-8") as e:
        next(rows)
    assert e.value.row == 2


def test_a_line_too_large_for_memory_is_one_message(tmp_path, monkeypatch):
    import localeval.dataset.formats as formats
    from localeval.dataset import load_dataset

    p = tmp_path / "d.jsonl"
    p.write_text('{"id": "a", "answer": "x"}\n{"id": "b", "answer": "' + "y" * 1000 + '"}\n')
    real = formats.loads_strict

    def short_of_memory(text: str, *a):
        if len(text) > 500:
            raise MemoryError
        return real(text, *a)

    monkeypatch.setattr(formats, "loads_strict", short_of_memory)
    with pytest.raises(DataError, match="line too large to read") as e:
        load_dataset(p)
    assert e.value.row == 2 and str(p) in str(e.value)


def test_content_hash_of_a_long_text_holds_no_copy_per_word():
    """A 4 MB context is hashed in pieces: memory bounded by the piece, not the text (before:
    the white space collapse of the whole text made one string per word, about 70 MB here)."""
    import tracemalloc

    from localeval.lang import normalise, normalised_pieces
    from localeval.results import content_hash

    text = "Ünïcode  words and\tmore, ＦＵＬＬ width. " * 100_000
    tracemalloc.start()
    try:
        content_hash([text])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, peak
    small = text[:5000] + "  !!  "
    assert "".join(normalised_pieces(small, size=7)) == normalise(small)
    assert content_hash([text]) == content_hash([text + " "])  # outer space is stripped
