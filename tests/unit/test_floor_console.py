"""One console: every line that quotes data reaches the terminal through ``cli.console``.

Control characters (ESC sequences, BEL, U+202E, U+2028) and lone surrogates in ids, file
and folder names, version names and a pipeline's exception text go through run, answer,
diff, rank, runs, history and explain: nothing raw reaches stdout or stderr, the escaped
forms do. The architecture rule (the cli prints only through the console; a package below
it prints only ``printable`` text) is checked from source with ``ast`` and shown to fail
on a small tree that breaks it. Metric names stay whole in an 80-column CI log.
"""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from test_architecture import ROOT, _tree

from localeval.cli.app import main
from localeval.cli.console import json_text, say, shown

#: What a hostile name holds: a colour escape, a bell, a right-to-left override, a line
#: separator.
HOSTILE = "x\x1b[31m\x07\u202e\u2028y"
RAW = ("\x1b", "\x07", "\u202e", "\u2028")


def assert_clean(*texts: str) -> None:
    for text in texts:
        for c in RAW:
            assert c not in text, f"raw {c!r} reached the terminal: {text[:300]!r}"


# -- the one escape ------------------------------------------------------------------------
def test_shown_makes_every_control_character_visible():
    assert shown(HOSTILE) == "x\\x1b[31m\\x07\\u202e\\u2028y"
    assert shown("a\udc80b") == "a\\udc80b"  # a lone surrogate: its escape, no raise
    assert shown("naïve 日本語 ⚠") == "naïve 日本語 ⚠"  # printable text is kept
    assert shown(shown(HOSTILE)) == shown(HOSTILE)  # idempotent: escaped twice is the same


def test_say_escapes_each_line_and_never_raises_on_a_lone_surrogate(capsys):
    say(f"first {HOSTILE}\nsecond \udc80")
    out = capsys.readouterr().out
    assert out == "first x\\x1b[31m\\x07\\u202e\\u2028y\nsecond \\udc80\n"


def test_say_writes_what_an_ascii_stream_cannot_encode_as_escapes(monkeypatch):
    buf = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr("sys.stdout", buf)
    say("caf\u00e9 日本")
    buf.flush()
    assert buf.buffer.getvalue().decode("ascii") == "caf\\xe9 \\u65e5\\u672c\n"


def test_json_text_is_the_same_json_with_nothing_raw():
    text = json.dumps({"id": HOSTILE + "\udc80\U000e0001"}, ensure_ascii=False)
    safe = json_text(text)
    assert_clean(safe)
    assert json.loads(safe) == json.loads(text)


# -- through the verbs ---------------------------------------------------------------------
def _rows(ids: list[str]) -> str:
    return "".join(json.dumps({"id": i, "question": f"q {n}?", "answer": "a b c",
                               "reference": "x y z", "contexts": ["c"]}) + "\n"
                   for n, i in enumerate(ids))


def test_an_error_naming_a_hostile_file_is_escaped(tmp_path, capsys):
    code = main(["run", str(tmp_path / f"{HOSTILE}.jsonl"), "-m", "bleu", "--quiet"])
    cap = capsys.readouterr()
    assert code == 2
    assert_clean(cap.out, cap.err)
    assert "x\\x1b[31m" in cap.err


def test_answer_shows_hostile_ids_and_exception_text_escaped(tmp_path, capsys):
    data = tmp_path / "data.jsonl"
    data.write_text(_rows([f"id{HOSTILE}", "ok"]), encoding="utf-8")
    rag = tmp_path / "rag.py"
    rag.write_text("def answer(question):\n"
                   "    if question.startswith('q 0'):\n"
                   f"        raise RuntimeError({HOSTILE + chr(0xdc80)!r})\n"
                   "    return 'fine'\n", encoding="utf-8")
    code = main(["answer", str(data), "--pipeline", f"{rag}:answer",
                 "-o", str(tmp_path / "out.jsonl"), "--quiet"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    assert_clean(cap.out, cap.err)
    assert "idx\\x1b[31m" in cap.out and "\\u202e" in cap.out and "\\udc80" in cap.out


def test_answer_json_is_json_with_nothing_raw(tmp_path, capsys):
    data = tmp_path / "data.jsonl"
    data.write_text(_rows([f"id{HOSTILE}"]), encoding="utf-8")
    rag = tmp_path / "rag.py"
    rag.write_text(f"def answer(question):\n    raise RuntimeError({HOSTILE!r})\n",
                   encoding="utf-8")
    code = main(["answer", str(data), "--pipeline", f"{rag}:answer",
                 "-o", str(tmp_path / "out.jsonl"), "--json"])
    cap = capsys.readouterr()
    assert code == 3  # every row failed
    assert_clean(cap.out)
    doc = json.loads(cap.out)
    assert doc["failed"] == 1 and doc["failures"][0]["id"] == f"id{HOSTILE}"


@pytest.fixture
def hostile_runs(tmp_path, capsys):
    """Two runs of bleu in folders with hostile names, over ids with hostile names."""
    data = tmp_path / "data.jsonl"
    data.write_text(_rows([f"s{HOSTILE}{i}" for i in range(6)]), encoding="utf-8")
    folders = []
    for k in ("a", "b"):
        out = tmp_path / "runs" / f"{k}{HOSTILE}"
        assert main(["run", str(data), "-m", "bleu", "-o", str(out), "--quiet"]) == 0
        folders.append(out)
    capsys.readouterr()
    return data, folders


def test_run_gate_lines_show_hostile_sample_ids_escaped(tmp_path, hostile_runs, capsys):
    data, _ = hostile_runs
    code = main(["run", str(data), "-m", "bleu", "-o", str(tmp_path / "g"),
                 "--fail-under-each", "bleu=0.99"])
    cap = capsys.readouterr()
    assert code == 1
    assert_clean(cap.out, cap.err)
    assert "gate failed" in cap.err and "ss\\x1b[31m" not in cap.err
    assert "sx\\x1b[31m\\x07\\u202e\\u2028y0" in cap.err


def test_runs_history_and_diff_show_hostile_folder_names_escaped(tmp_path, hostile_runs,
                                                                 capsys):
    _, (a, b) = hostile_runs
    assert main(["runs", str(tmp_path / "runs")]) == 0
    assert main(["history", str(tmp_path / "runs"), "-o", str(tmp_path / "h.html")]) == 0
    assert main(["diff", str(a), str(b), "-o", str(tmp_path / "d")]) == 0
    cap = capsys.readouterr()
    assert_clean(cap.out, cap.err)
    assert "\\x1b[31m" in cap.out


def test_explain_shows_a_hostile_id_escaped(hostile_runs, capsys):
    data, (a, _) = hostile_runs
    code = main(["explain", str(a), "--data", str(data), "--ids", f"nope{HOSTILE}",
                 "--no-cache", "--quiet"])
    cap = capsys.readouterr()
    assert code == 2
    assert_clean(cap.out, cap.err)


def test_rank_shows_hostile_version_names_escaped(tmp_path, capsys):
    from localeval.judge import register_judge_backend, unregister_judge_backend
    from localeval.testing import ScriptedJudge

    paths = []
    for k in ("a", "b", "c"):
        path = tmp_path / f"{k}{HOSTILE}.jsonl"
        path.write_text("".join(json.dumps({"id": f"q{i}", "question": f"q{i}?",
                                            "answer": f"{k} {i}", "bleu": 0.5}) + "\n"
                                for i in range(6)), encoding="utf-8")
        paths.append(str(path))
    judge = ScriptedJudge({"pairwise_preference": {"reason": "r", "verdict": "A"}})
    register_judge_backend("floor-rank", lambda spec: spec == "floor-rank",
                           lambda spec, **kw: judge)
    try:
        code = main(["rank", *paths, "--judge", "floor-rank", "--verdicts", "hard",
                     "--no-judge-check", "--no-cache", "--quiet", "--resamples", "200",
                     "-o", str(tmp_path / "r")])
    finally:
        unregister_judge_backend("floor-rank")
    cap = capsys.readouterr()
    assert code == 0, cap.err
    assert_clean(cap.out, cap.err)
    assert "a\\x1b" in cap.out or "ax\\x1b" in cap.out


def test_a_loading_stage_shows_a_model_label_as_written(capsys):
    from localeval.run import loading_stage

    with loading_stage(f"loading [red]{HOSTILE}", enabled=True):
        pass
    err = capsys.readouterr().err
    assert_clean(err.replace("\x1b[2m", "").replace("\x1b[0m", "").replace("\x1b[?25l", "")
                 .replace("\x1b[?25h", ""))
    assert "[red]x\\x1b" in err


def test_the_judge_check_table_title_is_text_not_markup(capsys):
    from types import SimpleNamespace

    from localeval.cli.judge import _print_table

    m = SimpleNamespace(passed=3, pairs=4, pass_rate=0.75, unscored=0, verdict="doubtful")
    result = SimpleNamespace(judge=f"[bold]{HOSTILE}[/x]", metrics={"tool_call_accuracy": m},
                             skipped={}, copied_calls=0,
                             summary_line=lambda: f"judge {HOSTILE}: doubtful")
    _print_table(result)  # "[/x]" parsed as markup would raise MarkupError
    out = capsys.readouterr().out
    assert_clean(out)
    assert "[bold]x\\x1b" in out


# -- narrow terminal tables ----------------------------------------------------------------
LONG = ["tool_call_accuracy", "nv_response_groundedness", "context_entity_recall",
        "noise_sensitivity:mode=irrelevant"]


def _summary(keys: list[str]) -> dict:
    return {"n_samples": 40, "signature_line": "localeval | judge x",
            "metrics": {k: {"mean": 0.5, "ci95": [0.4, 0.6], "n": 40, "unscored": 3,
                            "lower_is_better": k.startswith("noise"),
                            "unscored_reasons": {"the judge returned no parseable verdict "
                                                 "after two attempts": 3}} for k in keys}}


@pytest.mark.parametrize("width", [80, 72, 60, 40])
def test_the_summary_table_keeps_metric_names_whole(width):
    from localeval.report import summary_table

    buf = io.StringIO()
    Console(file=buf, width=width).print(summary_table(_summary(LONG)), crop=False)
    out = buf.getvalue()
    for key in LONG:
        assert key in out, f"{key} cut at {width} columns:\n{out}"
    if width >= 80:  # the table itself, not the list, and no wider than the log
        assert "┃ metric" in out
        assert max(len(line) for line in out.splitlines()[:-1]) <= width


def test_run_in_an_80_column_ci_log_keeps_names_whole(monkeypatch, capsys):
    from types import SimpleNamespace

    from localeval.cli.run import _print_summary

    monkeypatch.setenv("COLUMNS", "80")  # a CI log: not a terminal, 80 columns
    _print_summary(_summary(LONG), SimpleNamespace(json=False, quiet=False, out=None))
    out = capsys.readouterr().out
    assert all(key in out for key in LONG), out
    assert "accur…" not in out and max(len(line) for line in out.splitlines()[:-1]) <= 80


# -- the architecture rule -----------------------------------------------------------------
#: The cli's one printer.
CONSOLE = "cli/console.py"
#: Writes that put text on the terminal.
_STREAMS = {"sys.stdout.write", "sys.stderr.write"}
#: Files below the cli that build a rich Console, and why (their texts are Text of
#: ``printable``, never markup read from data): the run's progress bar and stage spinner,
#: and the download and hashing bars of ``localeval models`` (a manifest file name as their
#: label), draw on stderr; ``localeval models`` (catalog, layer 2, under the cli) prints its
#: tables itself.
CONSOLE_ALLOWED = {"run/progress.py", "catalog/command.py", "catalog/progress.py"}
#: Prints below the cli not through ``printable``: none (a new one fails the test).
PRINT_ALLOWED: dict[str, str] = {}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "?"


def _is_printable_call(node: ast.AST | None) -> bool:
    """``printable(...)``, or ``json.dumps(...)`` with its default ASCII output (every
    other character a JSON escape: nothing a terminal acts on)."""
    if not isinstance(node, ast.Call):
        return False
    name = _dotted(node.func)
    if name == "json.dumps":
        return not any(k.arg == "ensure_ascii" for k in node.keywords)
    return name.rsplit(".", 1)[-1] in ("printable", "shown")


def terminal_writes(root: Path) -> list[str]:
    """Every print to the terminal that bypasses the console: in ``cli/``, any ``print``,
    stream write or ``Console(...)`` outside ``cli/console.py``; below the cli, a print or
    stream write whose text is not ``printable(...)``, or a ``Console`` outside the
    allowed files."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == CONSOLE or rel in PRINT_ALLOWED:
            continue
        in_cli = rel.startswith("cli/")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = _dotted(node.func)
            where = f"localeval/{rel}:{node.lineno}"
            if name == "print" or name in _STREAMS:
                if in_cli:
                    problems.append(f"{where}: {name}() outside the console")
                elif not _is_printable_call(node.args[0] if node.args else None):
                    problems.append(f"{where}: {name}() of text not through printable()")
            elif name.rsplit(".", 1)[-1] == "Console" and (
                    in_cli or rel not in CONSOLE_ALLOWED):
                problems.append(f"{where}: a rich Console outside the console")
    return problems


def test_the_terminal_is_written_only_through_the_console():
    problems = terminal_writes(ROOT)
    assert not problems, "terminal writes that bypass the console:\n" + "\n".join(problems)


def test_the_rule_fails_where_it_should(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "cli/__init__.py": "",
        "cli/console.py": "import sys\ndef say(t):\n    print(t)\n",
        "cli/run.py": ("import sys\nfrom rich.console import Console\n"
                       "def f(x):\n    print(x)\n    sys.stderr.write(x)\n"
                       "    Console().print(x)\n"),
        "pipeline/__init__.py": "",
        "pipeline/rows.py": ("import sys\nfrom localeval.errors import printable\n"
                             "def g(x):\n    print(printable(x), file=sys.stderr)\n"
                             "    print(f'id {x}')\n"),
    })
    assert terminal_writes(root) == [
        "localeval/cli/run.py:4: print() outside the console",
        "localeval/cli/run.py:5: sys.stderr.write() outside the console",
        "localeval/cli/run.py:6: a rich Console outside the console",
        "localeval/pipeline/rows.py:5: print() of text not through printable()",
    ]
