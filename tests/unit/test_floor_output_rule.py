"""The floor, checked from source with ``ast``: every package of localeval writes through the
output policy (``localeval.output``).

Outside ``localeval/output/`` no file is opened for writing, no folder made, nothing renamed,
linked or copied, except through an ``OutputPolicy`` (a name ``policy``) or the output
package's own writers (``atomic_file``, ``write_text``, ``write_json``, ``AppendFile``,
``make_folder``, ``move_into_place``). The few files that must write by themselves are
listed in ``WRITES_THEMSELVES`` with the raw writes each may make and why; any other write
in them is caught, and a listed write no longer made fails too, so the list stays true. A
synthetic tree that breaks the rule is caught.
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_architecture import ROOT, _tree

#: The package that holds the writers everything else calls.
OUTPUT = "output"

#: Files that write without the output policy: the raw writes each may make, and why. Every
#: other write of localeval goes through ``localeval.output``.
WRITES_THEMSELVES: dict[str, tuple[frozenset[str], str]] = {
    "cache.py": (frozenset({".mkdir()", "sqlite3.connect", "os.replace"}),
                 "the SQLite cache: sqlite3 creates and writes its own file, journal and "
                 "locks; the cache makes the folder the file lives in and moves a damaged "
                 "file (with its -wal and -shm) aside as one unit, reporting its own faults "
                 "(CacheError, exit 3) because it is a cache, not an output"),
    "results/folder_lock.py": (frozenset({"os.open(..., write flags)"}),
                               "the run folder's lock file: created and opened read-write "
                               "for an fcntl lock on its descriptor (not a text output), "
                               "the owner's pid written into it"),
    "results/writer.py": (frozenset({"os.open(..., write flags)"}),
                          "results.jsonl, appended unbuffered one line per sample while the "
                          "run holds the folder lock, on its own descriptor; its OSErrors "
                          "become OutputError naming the file, as output.AppendFile's do"),
    "run/run_folders.py": (frozenset({"os.symlink", "os.replace"}),
                           "the `latest` symbolic link of the default run folders: a link "
                           "made beside it and renamed over it (output writes files, not "
                           "links); where no link can be made, LATEST is written through "
                           "the atomic writer"),
    "run/ray.py": (frozenset({"os.open(..., write flags)"}),
                   "the tests' crash hook of a Ray worker: the marker is created with O_EXCL "
                   "so that exactly one of several workers claims it and crashes (an atomic "
                   "replace would let every one of them win); no output of the run"),
    "catalog/fetch.py": (frozenset({"open(..., write mode)"}),
                         "a download's NAME.part: raw bytes appended as they arrive so that "
                         "a broken download resumes where it stopped (output appends whole "
                         "text lines); its write faults are output.cannot_write (exit 2 "
                         "naming the file), its folder and its rename into place go "
                         "through output"),
    "catalog/add.py": (frozenset({"shutil.copy2", "shutil.copytree"}),
                       "`models add --copy`: gigabytes of a GGUF file, or an embedder's "
                       "folder tree, copied with shutil under a hidden temporary name and "
                       "renamed into place with output.move_into_place; a fault removes the "
                       "partial copy and is an OutputError naming the file"),
}

_WRITE_METHODS = {"write_text", "write_bytes", "mkdir", "touch", "rename", "symlink_to",
                  "hardlink_to"}
#: ``module.function`` names that write, whether called or passed around.
_WRITE_FUNCS = {
    "os": {"replace", "rename", "renames", "makedirs", "mkdir", "symlink", "link",
           "truncate", "mkfifo"},
    "shutil": {"copy", "copy2", "copyfile", "copytree", "copyfileobj", "move"},
    "tempfile": {"mkstemp", "mkdtemp"},
    "sqlite3": {"connect"},
}
#: ``os.open`` flags that open for writing.
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
#: Names under which a call is the output policy's (``policy.folder(...)``).
_POLICY_NAMES = {"policy", "_policy"}


def _mode(node: ast.Call, position: int) -> ast.expr | None:
    if len(node.args) > position:
        return node.args[position]
    return next((k.value for k in node.keywords if k.arg == "mode"), None)


def _writes_mode(mode: ast.expr | None) -> bool:
    return isinstance(mode, ast.Constant) and any(c in str(mode.value) for c in "wax+")


def _owner(node: ast.Attribute) -> str | None:
    """The last name of what the attribute is taken of (``self.policy.x`` -> ``policy``)."""
    v = node.value
    return v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else None


def raw_writes(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of each write that does not go through the output policy."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in _WRITE_FUNCS:
            for a in node.names:
                if a.name in _WRITE_FUNCS[node.module]:
                    found.add((node.lineno, f"from {node.module} import {a.name}"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.attr in _WRITE_FUNCS.get(node.value.id, ()):
            found.add((node.lineno, f"{node.value.id}.{node.attr}"))  # called or passed on
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open" and _writes_mode(_mode(node, 1)):
            found.add((node.lineno, "open(..., write mode)"))
        if not isinstance(f, ast.Attribute):
            continue
        owner = _owner(f)
        if owner in _POLICY_NAMES:
            continue
        if owner == "os" and f.attr == "open" and len(node.args) > 1 and \
                {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)} \
                & _WRITE_FLAGS:
            found.add((node.lineno, "os.open(..., write flags)"))
        elif f.attr == "open" and owner not in ("os", "io") and _writes_mode(_mode(node, 0)):
            found.add((node.lineno, ".open(write mode)"))  # Path.open("w")
        elif f.attr == "open" and owner == "io" and _writes_mode(_mode(node, 1)):
            found.add((node.lineno, "io.open(..., write mode)"))
        elif f.attr in _WRITE_METHODS and owner not in ("os", "shutil", "str"):
            found.add((node.lineno, f".{f.attr}()"))
        elif f.attr == "replace" and owner not in ("os", "str") and len(node.args) == 1 \
                and not node.keywords:  # Path.replace(target); str.replace takes two
            found.add((node.lineno, ".replace()"))
    return sorted(found)


def raw_writes_under(root: Path) -> dict[str, list[str]]:
    """``{module: ["line: what", ...]}`` for every module outside ``output/`` that writes."""
    out: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.split("/", 1)[0] == OUTPUT:
            continue
        hits = raw_writes(ast.parse(path.read_text(encoding="utf-8")))
        if hits:
            out[rel] = [f"{line}: {what}" for line, what in hits]
    return out


def floor_breaks(root: Path, allowed: dict[str, tuple[frozenset[str], str]]) -> list[str]:
    """Raw writes not in ``allowed`` (file -> the writes it may make), and allowed writes
    that are no longer made (the list stays true)."""
    found = raw_writes_under(root)
    broken = []
    for rel, hits in found.items():
        may = allowed.get(rel, (frozenset(), ""))[0]
        broken += [f"localeval/{rel}:{hit}" for hit in hits
                   if hit.split(": ", 1)[1] not in may]
    for rel, (may, _) in allowed.items():
        made = {hit.split(": ", 1)[1] for hit in found.get(rel, [])}
        broken += [f"localeval/{rel}: listed as making {what} by itself, but no longer does; "
                   "take it off the list" for what in sorted(may - made)]
    return broken


def test_every_package_writes_only_through_the_output_policy():
    broken = floor_breaks(ROOT, WRITES_THEMSELVES)
    assert not broken, "writes outside the output policy:\n" + "\n".join(broken)


def test_each_exception_says_why():
    for rel, (may, why) in WRITES_THEMSELVES.items():
        assert (ROOT / rel).is_file(), rel
        assert may and len(why.split()) >= 8, f"{rel}: say which writes and why"


def test_the_rule_catches_a_raw_write():
    src = ("import os, shutil, io\nfrom pathlib import Path\n"
           "def f(p, policy, big):\n"
           "    open(p, 'w')\n    Path(p).write_text('x')\n    Path(p).mkdir()\n"
           "    os.replace(p, p)\n    policy.write_text(p, 'x')\n    open(p)\n"
           "    'a'.replace('a', 'b')\n"
           "    (shutil.copy2 if big else shutil.copytree)(p, p)\n"
           "    Path(p).open('ab')\n    os.open(p, os.O_WRONLY | os.O_CREAT)\n"
           "    os.open(p, os.O_RDONLY)\n    Path(p).replace(p)\n    Path(p).open('rb')\n"
           "    self.policy.folder(p)\n    os.symlink(p, p)\n    io.open(p, mode='a')\n"
           "from shutil import move\n")
    lines = [line for line, _ in raw_writes(ast.parse(src))]
    assert lines == [4, 5, 6, 7, 11, 11, 12, 13, 15, 18, 19, 20]


def test_the_rule_covers_every_package_and_keeps_its_list_true(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "output/files.py": "def w(p):\n    open(p, 'w')\n",  # the writers themselves
        "catalog/add.py": "import shutil\ndef a(s, t):\n    shutil.copytree(s, t)\n",
        "report/html.py": "def h(d):\n    d.mkdir(parents=True)\n",
        "cache.py": "import os\ndef c(p):\n    os.replace(p, p)\n    p.write_text('x')\n",
    })
    allowed = {"cache.py": (frozenset({"os.replace", "sqlite3.connect"}), "the SQLite cache")}
    assert floor_breaks(root, allowed) == [
        "localeval/cache.py:4: .write_text()",  # a listed file may make only its listed writes
        "localeval/catalog/add.py:3: shutil.copytree",
        "localeval/report/html.py:2: .mkdir()",
        "localeval/cache.py: listed as making sqlite3.connect by itself, but no longer does; "
        "take it off the list",
    ]
