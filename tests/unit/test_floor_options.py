"""One options module: the common options come from ``cli.options``' parent parsers.

Every verb's ``--help`` works; every verb with a progress display takes ``--quiet``; every
verb with a result takes ``--json`` and ``-o``; the choices of ``--reasons``,
``--verdicts`` and ``--lang`` are the settings' own; the first spellings (``answer
--no-cache``, ``compare --n-boot``) still work; ``localeval --help`` lists each verb under
one task. The architecture rule (no cli module but ``options.py`` declares a common
option by hand) is checked from source with ``ast`` and shown to fail on a small tree.
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

import pytest
from test_architecture import ROOT, _tree

from localeval.cli.app import build_parser, main
from localeval.cli.verb_groups import TASKS, grouped_help
from localeval.config import LANG_CHOICES, REASON_MODES, VERDICT_MODES


def _verbs(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


VERBS = _verbs(build_parser())
#: The verb's parser for "judge check" and the other two-word commands.
PARSERS = {**{v: p for v, p in VERBS.items() if v != "judge"},
           "judge check": _verbs(VERBS["judge"])["check"]}


def _options(verb: str) -> dict[str, argparse.Action]:
    return {s: a for a in PARSERS[verb]._actions for s in a.option_strings}


@pytest.mark.parametrize("verb", sorted(VERBS) + ["judge check", "models list"])
def test_every_verb_has_help(verb, capsys):
    with pytest.raises(SystemExit) as e:
        main([*verb.split(), "--help"])
    assert e.value.code == 0
    # the verb's own usage, not the top-level usage line with the verb after it
    assert capsys.readouterr().out.startswith(f"usage: localeval {verb} ")


@pytest.mark.parametrize("verb", ["run", "answer", "generate", "judge check", "diff", "rank",
                                  "explain"])
def test_every_verb_with_a_progress_display_takes_quiet(verb):
    assert "--quiet" in _options(verb)


@pytest.mark.parametrize("verb", ["run", "retrieval", "answer", "generate", "explain",
                                  "report", "history", "label-sheet", "estimate", "runs",
                                  "judge check", "diff", "rank", "compare", "validate"])
def test_every_verb_with_a_result_takes_json_and_out(verb):
    opts = _options(verb)
    assert {"--json", "-o", "--out"} <= set(opts)
    # one help text each: the same words wherever the option is
    assert opts["--json"].help.startswith("print ") and "as JSON on stdout" in opts["--json"].help


@pytest.mark.parametrize("option, choices", [("--reasons", REASON_MODES),
                                             ("--verdicts", VERDICT_MODES),
                                             ("--lang", LANG_CHOICES)])
def test_choices_come_from_the_settings(option, choices):
    having = [v for v in PARSERS if option in _options(v)]
    assert having, option
    for verb in having:
        assert tuple(_options(verb)[option].choices) == tuple(choices), verb


def test_the_first_spellings_still_work():
    p = build_parser()
    a = p.parse_args(["answer", "d.jsonl", "--pipeline", "m:f", "-o", "o.jsonl", "--no-cache"])
    assert a.no_resume is True
    a = p.parse_args(["answer", "d.jsonl", "--pipeline", "m:f", "-o", "o.jsonl",
                      "--no-resume"])
    assert a.no_resume is True
    for verb in ("compare", "validate"):
        a = p.parse_args([verb, "x", "y", "--n-boot", "0"])
        assert a.resamples == 0
        a = p.parse_args([verb, "x", "y", "--resamples", "300"])
        assert a.resamples == 300
    assert p.parse_args(["compare", "x", "y"]).resamples == 2000
    assert p.parse_args(["rank", "a", "b"]).out == "localeval-rank"
    assert p.parse_args(["diff", "a", "b"]).out == "localeval-diff"
    assert p.parse_args(["estimate", "a", "b"]).out == "estimate-out"
    assert p.parse_args(["history"]).out == "localeval-history.html"


def test_top_help_lists_every_verb_under_one_task(capsys):
    named = [v for _, verbs in TASKS for v in verbs]
    assert sorted(named) == sorted(VERBS), "a verb in no task, or in two"
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "usage: localeval [-h] [--version] [--debug] COMMAND ..." in out
    where = [out.index(f"\n  {task}:") for task, _ in TASKS]
    assert where == sorted(where)  # the tasks in their order
    for (_, verbs), start in zip(TASKS, where):
        block = out[start:]
        for verb in verbs:
            assert f"\n    {verb} " in block
    # a verb no task names is still listed
    assert "other:" in grouped_help({"run": "evaluate", "newverb": "something new"}, 80)


def test_report_and_explain_refuse_another_out_folder(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    for argv in (["report", str(run), "-o", str(tmp_path / "elsewhere")],
                 ["explain", str(run), "--data", "d.jsonl", "-o", str(tmp_path / "x")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "writes into the run folder" in err and "Traceback" not in err
    assert not (tmp_path / "elsewhere").exists()


def test_runs_json_and_out(tmp_path, capsys):
    out = tmp_path / "runs.json"
    assert main(["runs", str(tmp_path), "--json", "-o", str(out)]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out) == json.loads(out.read_text(encoding="utf-8")) == {"runs": []}


def test_diff_and_rank_take_quiet_without_a_progress_line(tmp_path, capsys):
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    for path, v in ((a, 0.2), (b, 0.8)):
        path.write_text("".join(json.dumps({"id": f"q{i}", "question": f"q{i}?",
                                            "answer": "x", "bleu": v}) + "\n"
                                for i in range(8)), encoding="utf-8")
    assert main(["diff", str(a), str(b), "--quiet", "-o", str(tmp_path / "d")]) == 0
    assert "bleu" in capsys.readouterr().out


# -- the architecture rule -----------------------------------------------------------------
#: The options a parent parser of ``cli/options.py`` provides.
COMMON = {"-o", "--out", "--json", "--seed", "--cache", "--no-cache", "--quiet", "--judge",
          "--embedder", "--overwrite", "--resamples", "--n-boot", "--verdicts", "--reasons",
          "--lang", "--no-resume"}
OPTIONS_MODULE = "cli/options.py"


def hand_made_options(root: Path) -> list[str]:
    """``add_argument`` calls in ``cli/`` (outside options.py) that declare a common option."""
    problems = []
    for path in sorted((root / "cli").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == OPTIONS_MODULE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument"):
                given = {a.value for a in node.args
                         if isinstance(a, ast.Constant) and isinstance(a.value, str)}
                for name in sorted(given & COMMON):
                    problems.append(f"localeval/{rel}:{node.lineno}: declares {name} by hand "
                                    "(a parent parser of cli/options.py provides it)")
    return problems


def test_no_cli_module_declares_a_common_option_by_hand():
    problems = hand_made_options(ROOT)
    assert not problems, "\n".join(problems)


def test_the_options_rule_fails_where_it_should(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "", "cli/__init__.py": "",
        "cli/options.py": "def out(p):\n    p.add_argument('-o', '--out')\n",
        "cli/rank.py": ("def add(p, g):\n    p.add_argument('--names')\n"
                        "    g.add_argument('--seed', type=int)\n"
                        "    p.add_argument('-o', '--out', default='x')\n"),
    })
    msg = "by hand (a parent parser of cli/options.py provides it)"
    assert hand_made_options(root) == [
        f"localeval/cli/rank.py:3: declares --seed {msg}",
        f"localeval/cli/rank.py:4: declares --out {msg}",
        f"localeval/cli/rank.py:4: declares -o {msg}",
    ]
