"""The ``localeval ...`` commands shown in README.md and docs/ stay accurate.

Every command in a fenced shell block (and in a CI file's YAML block) is parsed by the real command-line
parser (a renamed option or subcommand fails here, naming the file and line);
each distinct subcommand's ``--help`` and the commands that need no model and
no user file (``localeval metrics``, ``models list``, ``cache stats``) run as
real processes, exactly as written. Bounded: a handful of short processes.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from localeval.cli.app import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Commands that touch no model and no file of the reader's: run as written.
CHEAP = {("metrics",), ("models", "list"), ("cache", "stats")}
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


def doc_commands() -> list[tuple[str, list[str]]]:
    """``("README.md:120", argv)`` for every ``localeval`` command in a shell code block."""
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            if m.group(1) not in ("", "bash", "sh", "shell", "console", "yaml", "yml"):
                continue
            ci = m.group(1) in ("yaml", "yml")  # CI files: `- localeval ...`, `run: localeval ...`
            first = text.count("\n", 0, m.start(2)) + 1
            lines = m.group(2).splitlines()
            i = 0
            while i < len(lines):
                start, cmd = i, lines[i]
                while cmd.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    cmd = cmd.rstrip()[:-1] + " " + lines[i]
                i += 1
                cmd = cmd.strip().removeprefix("$ ")
                if ci:
                    cmd = cmd.removeprefix("- ").removeprefix("run: ").strip()
                if not cmd.startswith("localeval "):
                    continue
                argv = shlex.split(cmd, comments=True)
                out.append((f"{path.relative_to(ROOT)}:{first + start}", argv))
    return out


COMMANDS = doc_commands()


def test_the_docs_show_commands():
    """The scan is not blind: the README and the guides show many commands."""
    assert len(COMMANDS) >= 20
    assert {a[1] for _, a in COMMANDS} >= {"run", "compare", "validate", "models", "metrics"}


@pytest.mark.parametrize("where,argv", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_every_documented_command_parses(where, argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            build_parser().parse_args(argv[1:])
        except SystemExit as e:
            pytest.fail(f"{where}: `{shlex.join(argv)}` does not parse (exit {e.code}): "
                        f"{err.getvalue().strip()[-400:]}")


def _cli(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "localeval.cli", *argv], capture_output=True,
                          text=True, timeout=90, env=env, cwd=cwd)


def test_documented_subcommands_have_help_and_cheap_commands_run(tmp_path):
    paths = sorted({tuple(a[1:3]) if a[1] in ("models", "judge", "cache") else (a[1],)
                    for _, a in COMMANDS})
    for path in paths:
        p = _cli([*path, "--help"], tmp_path)
        assert p.returncode == 0, f"localeval {' '.join(path)} --help: {p.stderr[-400:]}"
        assert "usage:" in p.stdout
    ran = 0
    for where, argv in COMMANDS:
        if tuple(argv[1:]) in CHEAP:
            p = _cli(argv[1:], tmp_path)
            assert p.returncode == 0, f"{where}: `{shlex.join(argv)}`: {p.stderr[-400:]}"
            ran += 1
    assert ran >= 3


#: A repository path as the docs write it: tests/..., scripts/... or docs/..., ending
#: in a file name or a slash. Backticks, brackets and spaces end it.
REPO_PATH = re.compile(r"(?<![\w./-])((?:tests|scripts|docs)/[\w./-]*[\w/])")


def named_paths() -> list[tuple[str, str]]:
    """``("README.md:12", "tests/unit/x.py")`` for every repository path the docs name."""
    out = []
    for doc in DOCS:
        for i, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for m in REPO_PATH.finditer(line):
                path = m.group(1).split("::")[0].rstrip(".")
                out.append((f"{doc.relative_to(ROOT)}:{i}", path))
    return out


def test_the_path_scan_is_not_blind():
    assert len(named_paths()) > 20


@pytest.mark.parametrize("where, path", named_paths())
def test_every_named_path_exists(where, path):
    """A reader must be able to open every tests/, scripts/ and docs/ path the docs name."""
    target = ROOT / path
    hit = target.exists() or any(ROOT.glob(path)) if "*" in path else target.exists()
    assert hit, f"{where} names {path}, which is not in the repository"
