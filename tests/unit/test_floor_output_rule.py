"""The floor, checked from source with ``ast``: the verbs' write sites go through the output
policy (``localeval.output``). In the modules below no file is opened for writing, no folder
made, nothing renamed or copied, except through an ``OutputPolicy`` (a name ``policy``) or
the output package's own writers; a synthetic module that breaks the rule is caught."""

from __future__ import annotations

import ast
from pathlib import Path

from test_architecture import ROOT

#: The verbs' modules that write (their outputs go through ``localeval.output``).
CHECKED = ["pipeline", "generate/run.py", "generate/checkpoint.py", "versions/pages.py",
           "agreement/pages.py", "estimate/pages.py", "estimate/sheet.py", "history/page.py",
           "run/explaining.py", "cli"]
_RAW_METHODS = {"write_text", "write_bytes", "mkdir", "touch", "rename", "replace",
                "symlink_to", "hardlink_to"}
_RAW_FUNCS = {("os", "replace"), ("os", "rename"), ("os", "makedirs"), ("os", "mkdir"),
              ("shutil", "copy"), ("shutil", "copy2"), ("shutil", "copyfile"),
              ("shutil", "copytree"), ("shutil", "move")}


def raw_writes(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, call) of each write that does not go through the output policy."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            if isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wax+"):
                found.append((node.lineno, "open(..., write mode)"))
        elif isinstance(f, ast.Attribute):
            owner = f.value.id if isinstance(f.value, ast.Name) else None
            if (owner, f.attr) in _RAW_FUNCS:
                found.append((node.lineno, f"{owner}.{f.attr}"))
            elif f.attr in _RAW_METHODS and owner not in ("policy", "os", "shutil", "str") \
                    and not (f.attr == "replace" and node.args and isinstance(
                        node.args[0], ast.Constant)):  # str.replace("a", "b") is no write
                found.append((node.lineno, f".{f.attr}()"))
    return found


def _modules() -> list[Path]:
    out: list[Path] = []
    for name in CHECKED:
        p = ROOT / name
        out += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    return out


def test_the_verbs_write_only_through_the_output_policy():
    broken = [f"{p.relative_to(ROOT.parent)}:{line}: {what}" for p in _modules()
              for line, what in raw_writes(ast.parse(p.read_text(encoding="utf-8")))]
    assert not broken, "writes outside the output policy:\n" + "\n".join(broken)


def test_the_rule_catches_a_raw_write():
    src = ("import os\nfrom pathlib import Path\n"
           "def f(p, policy):\n"
           "    open(p, 'w')\n    Path(p).write_text('x')\n    Path(p).mkdir()\n"
           "    os.replace(p, p)\n    policy.write_text(p, 'x')\n    open(p)\n"
           "    'a'.replace('a', 'b')\n")
    assert [line for line, _ in raw_writes(ast.parse(src))] == [4, 5, 6, 7]
