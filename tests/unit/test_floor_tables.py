"""One table reader, one CSV writer, the shared token cuts and the one bounded thread map.

- every table localeval reads (datasets, result exports, label tables and sheets) goes
  through ``dataset``'s reader: a 200,000-character cell reads in every verb that
  reads tables, and a malformed line is one DataError naming file, line and column;
- every CSV localeval writes goes through ``results.write_csv`` in one dialect (BOM,
  CRLF, minimal quoting, formula-safe cells) and reads back exactly;
- the source holds no other ``csv.reader`` / ``csv.writer`` (the duplicates are gone);
- ``concurrency.ordered_map``: order, window, stop-on-failure, Ctrl-C keeps what finished.
"""

from __future__ import annotations

import ast
import csv
import json
import threading
import time
from pathlib import Path

import pytest
from test_architecture import ROOT

from localeval.cli.app import main
from localeval.concurrency import ordered_map
from localeval.dataset import load_dataset, read_table
from localeval.dataset.csv_text import raise_field_limit
from localeval.errors import DataError
from localeval.results import unquote_cell, write_csv
from localeval.resultsets import load_result_set, read_label_table

LONG = 200_000
SCORES = [0.1, 0.9, 0.4, 0.8, 0.3, 0.7, 0.2, 0.6, 0.5, 1.0]


def _export(path: Path, scores: list[float], long_row: int = 3) -> Path:
    """A ragas ``to_pandas().to_csv()`` export whose row ``long_row`` has a 200,000-char context."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["", "id", "user_input", "retrieved_contexts", "response", "reference",
                    "faithfulness"])
        for i, s in enumerate(scores):
            ctx = ("x" * LONG) if i == long_row else f"context {i}"
            w.writerow([i, f"q{i}", f"question {i}?", repr([ctx]), f"answer {i}", f"ref {i}",
                        s])
    return path


def test_a_ragas_export_with_a_200k_character_cell_goes_through_every_table_verb(
        tmp_path, capsys):
    a = _export(tmp_path / "a.csv", SCORES)
    b = _export(tmp_path / "b.csv", [1 - s for s in SCORES])
    labels = tmp_path / "labels.csv"
    with labels.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "human_faithfulness", "note"])
        for i, s in enumerate(SCORES):
            w.writerow([f"q{i}", round(s), "n" * LONG if i == 0 else ""])
    assert main(["compare", str(a), str(b), "-o", str(tmp_path / "cmp"), "--n-boot",
                 "0"]) == 0
    assert main(["validate", str(a), str(labels), "-o", str(tmp_path / "val"), "--n-boot",
                 "0"]) == 0
    assert main(["diff", str(a), str(b), "-o", str(tmp_path / "diff")]) == 0
    (tmp_path / "runs").mkdir()
    assert main(["history", str(tmp_path / "runs"), "--add", f"ragas={a}", "-o",
                 str(tmp_path / "h.html")]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "field limit" not in err
    rs = load_result_set(a)
    assert rs.scores["q3"]["faithfulness"] == pytest.approx(0.8)


def test_the_field_limit_is_raised_once_to_the_largest_the_platform_takes(monkeypatch):
    assert raise_field_limit() >= 2**31 - 1
    # a platform whose C long is 32 bits refuses sys.maxsize with OverflowError

    class Narrow:
        limit = 131072

        def field_size_limit(self, new=None):
            old = self.limit
            if new is not None:
                if new > 2**31 - 1:
                    raise OverflowError("Python int too large to convert to C long")
                self.limit = new
            return old

    narrow = Narrow()
    monkeypatch.setattr("localeval.dataset.csv_text.csv", narrow)
    assert raise_field_limit.__wrapped__() == narrow.limit > 2**30
    narrow.limit = 2**31 - 1  # never lowered
    assert raise_field_limit.__wrapped__() == 2**31 - 1


@pytest.mark.parametrize("reader", ["dataset", "result set", "labels"])
def test_a_malformed_csv_line_is_one_data_error_naming_file_line_and_column(tmp_path, reader):
    p = tmp_path / "t.csv"
    p.write_text('id,question,answer,human_faithfulness\nq1,fine,fine,1\n'
                 'q2,"so-called" question,a,0\nq3,x,y,1\n', encoding="utf-8")
    read = {"dataset": lambda: load_dataset(p), "result set": lambda: load_result_set(p),
            "labels": lambda: read_label_table(p)}[reader]
    with pytest.raises(DataError) as e:
        read()
    msg = str(e.value)
    assert msg.startswith(f"{p}, line 3, column 'question': a quote in the wrong place"), msg
    # a quote never closed names the line it opens on, whatever follows
    p.write_text('id,question,answer,human_faithfulness\nq1,fine,fine,1\n'
                 'q2,x,"never closed,0\nq3,x,y,1\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"t\.csv, line 3, column 'answer': a quoted cell is "
                                        r"never closed"):
        read()


def test_label_tables_keep_their_leniency_and_their_row_numbers(tmp_path):
    p = tmp_path / "labels.csv"
    # a spreadsheet's ";" save with a decimal comma, a short row and nameless trailing columns
    p.write_text("id;label_faithfulness;;\r\nq1;0,5;;\r\nq2;1\r\nq3;x;;\r\n",
                 encoding="utf-8-sig")
    t = read_label_table(p)
    assert t.separator == ";" and t.unit == "row" and [n for n, _ in t.rows] == [1, 2, 3]
    assert t.number(t.rows[0][1]["label_faithfulness"], 1, "label_faithfulness") == 0.5
    assert t.rows[1][1]["label_faithfulness"] == "1"
    with pytest.raises(DataError, match=r"row 3, column 'label_faithfulness'"):
        t.number(t.rows[2][1]["label_faithfulness"], 3, "label_faithfulness")
    # a dataset is stricter: a short row is refused, naming its line
    d = tmp_path / "d.csv"
    d.write_text("question,answer\nq,a\nq2\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 3: 1 cell, but the header has 2 columns"):
        load_dataset(d)


CELLS = ["=1+2", "'=quoted", "-0.5 text", "+", "@x", "\ttab", "日本語の質問、中文问题",
         "two\nlines", 'say "yes", then', "'", "plain", ""]


def test_the_one_csv_dialect_and_an_exact_round_trip_through_the_labels_reader(tmp_path):
    p = write_csv(tmp_path / "s.csv", ["id", "question", "score", "label_x"],
                  [[f"r{i}", c, -0.25 if i % 2 else 3, None] for i, c in enumerate(CELLS)])
    raw = p.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 with a byte-order mark
    assert raw.count(b"\r\n") == len(CELLS) + 1 and b"two\nlines" in raw  # CRLF rows
    assert b'"say ""yes"", then"' in raw and b"plain" in raw and b'"plain"' not in raw
    assert b"\r\nr0,'=1+2,3,\r\n" in raw and b",-0.25," in raw  # numbers stay numbers
    t = read_label_table(p)
    assert [t.text(r["question"]) for _, r in t.rows] == CELLS
    assert [float(r["score"]) for _, r in t.rows][:2] == [3, -0.25]
    assert all(unquote_cell(r["label_x"]) == "" for _, r in t.rows)
    assert not list(tmp_path.glob("*.tmp"))


def test_results_csv_is_written_in_the_one_dialect(tmp_path):
    from localeval.results import write_results_csv

    records = [{"id": "=a", "question": "日本語", "scores": {"m": -0.5, "n": None},
                "errors": {"n": "judge failed"}}]
    r = write_results_csv(tmp_path / "results.csv", records).read_bytes()
    assert r == ("\ufeffid,question,m,n,m_reason,n_reason\r\n"
                 "'=a,日本語,-0.5,,,judge failed\r\n").encode("utf-8")


def _csv_calls(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == "csv"
                and node.attr in ("reader", "writer", "DictReader", "DictWriter")):
            found.append((node.lineno, node.attr))
    return found


def test_one_csv_reader_and_one_csv_writer_in_the_source():
    """Only dataset/csv_text.py reads CSV and only results/table.py writes it."""
    allowed = {"reader": {"dataset/csv_text.py"}, "DictReader": set(),
               "writer": {"results/table.py"}, "DictWriter": set()}
    stray = [f"{p.relative_to(ROOT)}:{line}: csv.{attr}"
             for p in sorted(ROOT.rglob("*.py"))
             for line, attr in _csv_calls(p)
             if str(p.relative_to(ROOT)) not in allowed[attr]]
    assert not stray, "\n".join(stray)


def test_a_json_table_reads_every_pandas_orient_and_nan_as_unscored(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"id": {"0": "a", "1": "b"}, "m": {"0": 0.5, "1": NaN}}', encoding="utf-8")
    t = read_table(p)
    assert t.unit == "row" and [r for _, r in t.rows][0] == {"id": "a", "m": 0.5}
    assert t.rows[1][1]["m"] != t.rows[1][1]["m"]  # NaN: unscored in a result export
    with pytest.raises(DataError, match="NaN is not a number JSON allows"):
        list(load_dataset(p))  # a dataset stays strict


# -- the shared token cuts ----------------------------------------------------------------
def test_the_token_cuts_live_in_lang_and_keep_their_outputs():
    from localeval.lang import char_words, copy_tokens, diff_pieces, lexical_tokens

    assert copy_tokens("Paris is 42 km from Lyon; 東京タワー", distinctive=True) == {
        "paris", "42", "lyon", "東京", "京タ", "タワ", "ワー"}
    assert char_words("Loop 東京 loop") == ["loop", "東", "京", "loop"]
    assert lexical_tokens("ＡＢＣ Straße 東京都 42") == ["東京", "京都", "abc", "strasse", "42"]
    text = "It's  a\tnew—answer!"
    assert "".join(diff_pieces(text)) == text and diff_pieces("a, b") == ["a", ",", " ", "b"]
    for path, name in [("prompts/examples.py", "_tokens"), ("generate/filters_text.py", "_tokens"),
                       ("generate/filters_rank.py", "lexical_tokens"),
                       ("versions/view.py", "_TOKENS")]:
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        defined |= {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign)
                    for t in n.targets if isinstance(t, ast.Name)}
        assert name not in defined, f"{path} keeps its own {name}"


# -- the one bounded thread map ------------------------------------------------------------
def test_ordered_map_keeps_order_and_reads_only_a_window_ahead():
    read = []

    def items():
        for i in range(100):
            read.append(i)
            yield i

    def slow_first(i):
        time.sleep(0.05 if i == 0 else 0)
        return i * i

    it = ordered_map(slow_first, items(), workers=4, window=6)
    assert next(it) == 0 and len(read) <= 7  # six submitted, one read past them at most
    assert list(it) == [i * i for i in range(1, 100)]


def test_ordered_map_stops_starting_items_after_a_failure_and_raises_the_first_in_order():
    started = []
    lock = threading.Lock()

    def fn(i):
        with lock:
            started.append(i)
        if i in (2, 3):
            time.sleep(0.02 if i == 2 else 0)
            raise ValueError(f"item {i}")
        time.sleep(0.01)
        return i

    got = []
    with pytest.raises(ValueError, match="item 2"):  # 3 fails first in time, 2 first in order
        for x in ordered_map(fn, range(50), workers=2, window=50, stop_on_failure=True):
            got.append(x)
    assert got == [0, 1] and len(started) < 10


def test_ordered_map_keeps_finished_results_on_ctrl_c_and_cuts_running_ones_short():
    entered = []

    class Abandon:
        def __enter__(self):
            entered.append("cut")

        def __exit__(self, *exc):
            entered.append("resumed")

    release = threading.Event()

    def fn(i):
        if i == 2:
            release.wait(5)
        return i

    it = ordered_map(fn, range(10), workers=3, window=3, abandon=Abandon, inline=False)
    assert next(it) == 0
    time.sleep(0.05)  # item 1 is done, item 2 is blocked

    def ctrl_c():
        time.sleep(0.05)
        release.set()

    # Ctrl-C while item 2 runs: item 1, finished, still comes out; item 2 is cut short
    # (the abandon context is entered around the wait); then KeyboardInterrupt again
    threading.Thread(target=ctrl_c).start()
    assert it.throw(KeyboardInterrupt) == 1
    with pytest.raises(KeyboardInterrupt):
        next(it)
    assert entered == ["cut", "resumed"]


def test_ordered_map_single_worker_runs_inline():
    names = list(ordered_map(lambda _: threading.current_thread().name, range(3), workers=1))
    assert names == [threading.current_thread().name] * 3
    names = list(ordered_map(lambda _: threading.current_thread().name, range(3), workers=1,
                             inline=False, name="pool"))
    assert all(n.startswith("pool") for n in names)


def test_json_of_a_sheet_companion_is_kept_in_its_cell(tmp_path):
    work = json.dumps({"verdicts": ["=SUM(A1)"]})
    p = write_csv(tmp_path / "j.csv", ["id", "working"], [["a", work]])
    t = read_label_table(p)
    assert json.loads(t.text(t.rows[0][1]["working"])) == {"verdicts": ["=SUM(A1)"]}
