"""The package's shape, checked from source with ``ast`` (nothing is imported or run).

Rules (docs/architecture.md): no module over 400 lines; no import cycles; no
private name imported from another module; a subpackage is entered only
through its face (``localeval.judge``, never ``localeval.judge.llama`` from
outside ``judge/``); no package imports a package of a higher layer; every
exception class is defined in ``localeval/errors.py`` (one tree); no
``isinstance`` of a concrete judge class outside ``judge/`` (code decides from
the capabilities the ``Judge`` protocol declares); no package
but ``metrics`` (the judge door's own) assigns an attribute of a ``Judging``
door (a name annotated ``Judging`` or bound to ``Judging(...)`` or
``.for_sample(...)``): a caller asks ``for_sample`` for another door; in
``judge/llama`` only the compatibility module (``compat.py``) imports
``llama_cpp`` or touches its low-level and private parts (``llama_*`` C
functions, ``._ctx``, ``._model``, ``._batch``, ``.ctx``, ``.input_ids``,
``.n_tokens``), and no module of the whole package but that one imports ``llama_cpp``,
so one module says which llama-cpp-python it was written for; no package above
the results layer (layer 5: ``results``, ``report``, ``judge_check``) parses a
run's summary or signature by hand: it names no ``"summary.json"`` and reads
no record key (``signature``, ``judge_check``, ``judge_fingerprint``, ...) with
a subscript or ``.get`` (it asks ``results.read_record`` and the record's typed
parts; ``generate``, whose summary.json is a test set's, is not a run's). Each rule
is also run on a small synthetic tree that breaks it, so the checker is shown
to fail where it should.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "localeval"
MAX_LINES = 400
#: The one module that may define exception classes (relative to the package root).
ERRORS_MODULE = "errors.py"
#: Base names that make a class an exception (or warning) class.
_EXCEPTION_BASES = {"Exception", "BaseException", "Warning", "UserWarning", "ValueError",
                    "TypeError", "RuntimeError", "OSError", "KeyError", "LookupError"}

#: The judge package, and its module that may be named in ``isinstance`` anywhere
#: (the ``Judge`` protocol and its request/reply value types).
JUDGE_PACKAGE, JUDGE_PROTOCOL = "judge", "base.py"

#: Lower layers never import higher ones. Top-level modules count as units too.
LAYERS: dict[str, int] = {
    "version": 0, "lazy": 0, "types": 0, "errors": 0, "config": 0, "concurrency": 0,
    "strict_json": 0,
    "lang": 1, "cache": 1, "stats": 1, "output": 1, "toolcheck": 1,
    "dataset": 2, "catalog": 2, "prompts": 2, "corpus": 2,
    "judge": 3, "embed": 3, "checker": 3,
    "metrics": 4,
    "results": 5, "report": 5,
    "run": 6, "resultsets": 6, "pipeline": 6, "generate": 6, "simulate": 6,
    "agreement": 7, "estimate": 7, "versions": 7, "history": 7, "pairwise": 7,
    "judge_check": 5,
    "ragas": 8, "testing": 8, "cli": 9, "": 9,  # "" is localeval/__init__.py, the public face
}


def module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def unit_of(module: str) -> str:
    """The layer unit of a module: its subpackage or top-level module ('' for the root face)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def package_of(root: Path, path: Path) -> str:
    """The module's own package (for resolving relative imports)."""
    name = module_name(root, path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def imports_of(root: Path, path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, absolute module, imported names) for every import in the file, lazy ones included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, []) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level:
                base = package_of(root, path).split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([mod] if mod else []))
            names = [a.name for a in node.names]
            out.append((node.lineno, mod, names))
            # `from pkg import submodule` imports the submodule too
            out.extend((node.lineno, f"{mod}.{n}", []) for n in names
                       if (root.parent / Path(*f"{mod}.{n}".split("."))).with_suffix(".py").exists()
                       or (root.parent / Path(*f"{mod}.{n}".split(".")) / "__init__.py").exists())
    return out


def exception_classes(root: Path, path: Path) -> list[str]:
    """``file:line: defines exception X`` for each exception class defined outside the error module.

    A class is an exception if a base is a builtin exception, ends in Error,
    Exception or Warning, or is another exception class of the same file.
    """
    if path == root / ERRORS_MODULE:
        return []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    known: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                 for b in node.bases}
        if any(b in _EXCEPTION_BASES or b in known or b.endswith(("Error", "Exception", "Warning"))
               for b in bases):
            known.add(node.name)
            found.append(f"{path.relative_to(root.parent)}:{node.lineno}: defines exception "
                         f"{node.name} outside localeval/{ERRORS_MODULE}")
    return found


#: The package that owns the judge door; only it may change a door's attributes.
DOOR_PACKAGE = "metrics"


#: What code outside the door's package may call to change a door's parts: the run adds a
#: sample's or a worker's cost to the run's door (``Accounting.merge``). A door's own methods
#: (``begin_sample``, which clears its per-sample memo; ``ask``, ``embed``, ``map``) are its own.
DOOR_CHANGES_ALLOWED = {"accounting.merge"}
#: Methods that change the object they are called on (a door's accounting, usage, prompt versions).
_MUTATORS = {"add", "add_usage", "record_prompt", "merge", "update", "clear", "pop", "popitem",
             "setdefault", "append", "extend", "insert", "remove", "discard", "__setitem__"}


def door_mutations(root: Path, fpath: Path) -> list[str]:
    """``file:line: ...`` for each change of a judge door outside its package: an attribute
    assigned on a door or on one of its parts (``ctx.seed =``, ``ctx.usage.calls +=``,
    ``ctx.prompt_versions[k] =``), or a part changed by a call (``ctx.usage.add(u)``) other
    than ``DOOR_CHANGES_ALLOWED``.

    A door is an expression (``ctx``, ``self.ctx``) annotated with ``Judging`` or
    bound to ``Judging(...)`` / ``x.for_sample(...)`` in the same file.
    """
    tree = ast.parse(fpath.read_text(encoding="utf-8"))

    def is_door_call(v: ast.AST | None) -> bool:
        if not isinstance(v, ast.Call):
            return False
        f = v.func
        return (isinstance(f, ast.Name) and f.id == "Judging") or (
            isinstance(f, ast.Attribute) and f.attr in ("Judging", "for_sample"))

    doors: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None \
                and "Judging" in ast.unparse(node.annotation):
            doors.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and ("Judging" in ast.unparse(node.annotation)
                                                  or is_door_call(node.value)):
            doors.add(ast.unparse(node.target))
        elif isinstance(node, ast.Assign) and is_door_call(node.value):
            doors.update(ast.unparse(t) for t in node.targets)
    found: list[str] = []
    where = f"on the judge door outside localeval/{DOOR_PACKAGE}"
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "setattr" and node.args):
            targets = [ast.Attribute(value=node.args[0], attr="?")]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in _MUTATORS):
            # a door's own method is its own business; a change reached through one of
            # its parts (ctx.usage.add, ctx.prompt_versions.update) is not, save the run's
            # adding of a sample's or a worker's cost
            path = _door_path(node.func.value, doors)
            if path and ".".join([*path, node.func.attr]) not in DOOR_CHANGES_ALLOWED:
                found.append(f"{rel_of(root, fpath)}:{node.lineno}: calls "
                             f"{ast.unparse(node.func)}() {where}")
            continue
        for t in targets:
            if isinstance(t, (ast.Attribute, ast.Subscript)) and _door_path(t.value, doors) is not None:
                what = (f"{ast.unparse(t.value)}.{t.attr}" if isinstance(t, ast.Attribute)
                        else ast.unparse(t))
                found.append(f"{rel_of(root, fpath)}:{node.lineno}: assigns {what} {where}")
    return found


def rel_of(root: Path, path: Path) -> Path:
    return path.relative_to(root.parent)


def _door_path(node: ast.AST, doors: set[str]) -> list[str] | None:
    """The attributes from a door down to ``node`` (``ctx.usage`` -> ["usage"], ``ctx`` -> []),
    or None when ``node`` is not reached through a door."""
    path: list[str] = []
    while True:
        if ast.unparse(node) in doors:
            return path[::-1]
        if isinstance(node, ast.Attribute):
            path.append(node.attr)
        elif isinstance(node, ast.Subscript):
            path.append("[]")
        else:
            return None
        node = node.value


def concrete_judge_classes(root: Path) -> set[str]:
    """Names of the classes defined in ``judge/`` outside its protocol module."""
    pkg = root / JUDGE_PACKAGE
    return {node.name for path in sorted(pkg.rglob("*.py")) if path != pkg / JUDGE_PROTOCOL
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.ClassDef)}


def judge_isinstance(root: Path, path: Path, concrete: set[str]) -> list[str]:
    """``file:line: isinstance of judge class X`` for each such check outside ``judge/``."""
    if path.is_relative_to(root / JUDGE_PACKAGE):
        return []
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance"
                and len(node.args) == 2):
            continue
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        for k in kinds:
            name = k.id if isinstance(k, ast.Name) else k.attr if isinstance(k, ast.Attribute) else ""
            if name in concrete:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}: isinstance of "
                             f"judge class {name} outside {JUDGE_PACKAGE}/ (use the Judge "
                             f"protocol's capabilities)")
    return found


#: The in-process judge's package, and its one module allowed to touch llama-cpp-python's
#: low-level and private parts (it checks the installed version).
LLAMA_PACKAGE, LLAMA_FENCE = "judge/llama", "compat.py"
#: Attributes of ``llama_cpp.Llama`` and of its C objects that llama-cpp-python does not
#: promise to keep (besides every ``llama_*`` C function).
_LLAMA_PRIVATE = {"_ctx", "_model", "_batch", "ctx", "input_ids", "n_tokens"}


def llama_fence(root: Path, path: Path) -> list[str]:
    """``file:line: ...`` for each ``llama_cpp`` import anywhere in the package outside the
    compatibility module, and each low-level use in ``judge/llama`` outside it."""
    pkg = root / LLAMA_PACKAGE
    if path == pkg / LLAMA_FENCE:
        return []
    inside = path.is_relative_to(pkg)
    rel = path.relative_to(root.parent)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                 else [])
        if any(n == "llama_cpp" or n.startswith("llama_cpp.") for n in names):
            found.append(f"{rel}:{node.lineno}: imports llama_cpp outside "
                         f"localeval/{LLAMA_PACKAGE}/{LLAMA_FENCE}")
        if inside and isinstance(node, ast.Attribute) and (node.attr.startswith("llama_")
                                                           or node.attr in _LLAMA_PRIVATE):
            found.append(f"{rel}:{node.lineno}: uses llama-cpp-python's .{node.attr} outside "
                         f"localeval/{LLAMA_PACKAGE}/{LLAMA_FENCE}")
    return found


#: The results layer's packages: they alone read a run's summary.json and its signature.
RESULTS_LAYER = 5
#: A package above the results layer that writes a summary.json of its own (a test set's).
OWN_SUMMARY = {"generate"}
#: Keys of a run's summary and signature that only the results layer reads.
RECORD_KEYS = {"signature", "signature_line", "judge_check", "judge_health", "judge_self_test",
               "judge_fingerprint", "embedder_fingerprint", "prompts_hash", "dataset_hash",
               "testset_hash", "dataset_rows"}


def record_by_hand(root: Path, path: Path) -> list[str]:
    """``file:line: ...`` for each place above the results layer that parses a run's
    summary or signature by hand: a ``"summary.json"`` literal, or a record key read with
    ``x["key"]`` or ``x.get("key")``."""
    unit = unit_of(module_name(root, path))
    if LAYERS.get(unit, 9) <= RESULTS_LAYER or unit in OWN_SUMMARY:
        return []
    rel = path.relative_to(root.parent)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        key = None
        if isinstance(node, ast.Constant) and node.value == "summary.json":
            found.append(f"{rel}:{node.lineno}: names summary.json outside the results layer "
                         "(use results.read_record / results.SUMMARY_FILE)")
            continue
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "get" and node.args
              and isinstance(node.args[0], ast.Constant)):
            key = node.args[0].value
        if isinstance(key, str) and key in RECORD_KEYS:
            found.append(f"{rel}:{node.lineno}: reads a run record's '{key}' by hand outside "
                         "the results layer (use results.read_record's typed parts)")
    return found


def check_tree(root: Path) -> list[str]:
    """Every rule violation in the package at ``root``, one line each."""
    problems: list[str] = []
    files = sorted(root.rglob("*.py"))
    modules = {module_name(root, f): f for f in files}
    top = root.name
    concrete = concrete_judge_classes(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        rel = path.relative_to(root.parent)
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            problems.append(f"{rel}: {n} lines (max {MAX_LINES})")
        problems.extend(exception_classes(root, path))
        problems.extend(judge_isinstance(root, path, concrete))
        problems.extend(llama_fence(root, path))
        problems.extend(record_by_hand(root, path))
        me = unit_of(mod)
        if me != DOOR_PACKAGE:
            problems.extend(door_mutations(root, path))
        for line, target, names in imports_of(root, path):
            if not (target == top or target.startswith(top + ".")):
                continue
            if target in modules:
                graph[mod].add(target)
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    problems.append(f"{rel}:{line}: imports private name {name} from {target}")
            them = unit_of(target)
            if them and them != me and len(target.split(".")) > 2:
                problems.append(f"{rel}:{line}: imports {target} past the face of {top}.{them}")
            if me in LAYERS and them in LAYERS and them != me and LAYERS[them] > LAYERS[me]:
                problems.append(f"{rel}:{line}: {me or top} (layer {LAYERS[me]}) imports "
                                f"{them} (layer {LAYERS[them]}), a higher layer")
            for unit in (me, them):
                if unit not in LAYERS:
                    problems.append(f"{rel}:{line}: {unit} has no layer in LAYERS")
    problems.extend(f"import cycle: {' -> '.join(c)}" for c in cycles(graph))
    return sorted(set(problems))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One representative cycle per strongly connected component (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1 or v in graph[v]:
                        found.append(sorted(comp) + [sorted(comp)[0]])
    return found


def test_localeval_package_follows_the_rules():
    problems = check_tree(ROOT)
    assert not problems, "architecture rules broken:\n" + "\n".join(problems)


def test_every_subpackage_has_a_face_with_all():
    for init in sorted(ROOT.glob("*/__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{init} has no docstring saying what the package is for"
        names = {t.id for node in tree.body if isinstance(node, ast.Assign)
                 for t in node.targets if isinstance(t, ast.Name)}
        assert "__all__" in names, f"{init} defines no __all__"


def test_no_face_name_is_shadowed_by_a_submodule():
    # Importing localeval.x.main binds the attribute `main` of localeval.x to the
    # module, hiding a lazily exported function of that name.
    for init in sorted(ROOT.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        exported = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_WHERE" for t in node.targets):
                exported = {k.value for k in node.value.keys}  # type: ignore[attr-defined]
        subs = {p.stem for p in init.parent.glob("*.py")} | {p.parent.name for p in init.parent.glob("*/__init__.py")}
        clash = exported & subs
        assert not clash, f"{init.parent}: face names {sorted(clash)} are also submodule names"


# -- the checker fails where it should ----------------------------------------------
def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "localeval"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def test_checker_catches_a_cycle(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "judge/__init__.py": "", "judge/a.py": "from localeval.judge import b\n",
        "judge/b.py": "def f():\n    from localeval.judge.a import x\n",
    })
    assert any(p.startswith("import cycle: localeval.judge.a -> localeval.judge.b")
               for p in check_tree(root))


def test_checker_catches_a_private_import(tmp_path):
    root = _tree(tmp_path, {"__init__.py": "", "judge/__init__.py": "",
                            "judge/a.py": "_x = 1\n", "judge/b.py": "from .a import _x\n"})
    assert check_tree(root) == ["localeval/judge/b.py:1: imports private name _x from localeval.judge.a"]


def test_checker_catches_a_long_module(tmp_path):
    root = _tree(tmp_path, {"__init__.py": "", "types.py": "x = 1\n" * (MAX_LINES + 1)})
    assert check_tree(root) == [f"localeval/types.py: {MAX_LINES + 1} lines (max {MAX_LINES})"]


def test_checker_catches_an_import_past_a_face_and_an_upward_import(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "", "judge/__init__.py": "", "judge/llama.py": "",
        "metrics/__init__.py": "", "metrics/base.py": "from localeval.judge.llama import X\n",
        "dataset/__init__.py": "", "dataset/load.py": "from localeval.metrics import Y\n",
    })
    problems = check_tree(root)
    assert "localeval/metrics/base.py:1: imports localeval.judge.llama past the face of localeval.judge" in problems
    assert ("localeval/dataset/load.py:1: dataset (layer 2) imports metrics (layer 4), a higher layer"
            in problems)


def test_checker_catches_an_exception_class_outside_the_error_module(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "", "errors.py": "class JudgeCallError(Exception):\n    pass\n",
        "judge/__init__.py": "",
        "judge/http.py": ("from localeval.errors import JudgeCallError\n"
                          "class _Failure(Exception):\n    pass\n"
                          "class BadReply(JudgeCallError):\n    pass\n"
                          "class Worse(_Failure):\n    pass\n"
                          "class Reply:\n    pass\n"),
    })
    assert check_tree(root) == [
        f"localeval/judge/http.py:{line}: defines exception {name} outside localeval/errors.py"
        for line, name in ((2, "_Failure"), (4, "BadReply"), (6, "Worse"))]


def test_checker_catches_a_mutation_of_the_door_from_another_package(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "", "errors.py": "", "metrics/__init__.py": "",
        # the door's own package may set its attributes
        "metrics/model_access.py": "class Judging:\n    def set(self, ctx: 'Judging'):\n"
                                   "        ctx.seed = 1\n",
        "run/__init__.py": "",
        "run/sample_scoring.py": ("from localeval.metrics import Judging\n"
                           "def one(ctx: Judging, c: Judging | None):\n"
                           "    ctx.seed = 3\n"
                           "    c.usage += 1\n"
                           "    ok = ctx.for_sample(seed=3)\n"
                           "    ctx.accounting.merge(1)\n"
                           "class Worker:\n"
                           "    def __init__(self):\n"
                           "        self.ctx = Judging()\n"
                           "    def score(self):\n"
                           "        self.ctx.judge = None\n"
                           "        setattr(self.ctx, 'lang', 'en')\n"),
    })
    msg = "on the judge door outside localeval/metrics"
    assert check_tree(root) == sorted([
        f"localeval/run/sample_scoring.py:3: assigns ctx.seed {msg}",
        f"localeval/run/sample_scoring.py:4: assigns c.usage {msg}",
        f"localeval/run/sample_scoring.py:11: assigns self.ctx.judge {msg}",
        f"localeval/run/sample_scoring.py:12: assigns self.ctx.? {msg}",
    ])


def test_checker_catches_a_door_changed_through_its_parts(tmp_path):
    # The door's parts (its accounting, usage, prompt versions) are changed only by the
    # door's own methods, save the run's adding of a sample's or a worker's cost.
    root = _tree(tmp_path, {
        "__init__.py": "", "errors.py": "", "metrics/__init__.py": "",
        "run/__init__.py": "",
        "run/strategies.py": ("from localeval.metrics import Judging\n"
                              "def merge(ctx: Judging, c: Judging, u):\n"
                              "    ctx.accounting.merge(c.usage, c.prompt_versions)\n"
                              "    ctx.begin_sample()\n"
                              "    done = ctx.usage.to_dict()\n"
                              "    ctx.usage.add(u)\n"
                              "    ctx.accounting.record_prompt('step', 'v1')\n"
                              "    ctx.prompt_versions['step'] = 'v2'\n"
                              "    ctx.usage.calls += 1\n"
                              "    ctx.prompt_versions.update({})\n"
                              "    return done\n"),
    })
    msg = "on the judge door outside localeval/metrics"
    assert check_tree(root) == sorted([
        f"localeval/run/strategies.py:6: calls ctx.usage.add() {msg}",
        f"localeval/run/strategies.py:7: calls ctx.accounting.record_prompt() {msg}",
        f"localeval/run/strategies.py:8: assigns ctx.prompt_versions['step'] {msg}",
        f"localeval/run/strategies.py:9: assigns ctx.usage.calls {msg}",
        f"localeval/run/strategies.py:10: calls ctx.prompt_versions.update() {msg}",
    ])


def test_the_architecture_page_says_how_a_door_is_changed():
    page = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for allowed in (*DOOR_CHANGES_ALLOWED, "begin_sample", "for_sample"):
        assert f"`{allowed}" in page, f"docs/architecture.md does not name {allowed}"


def test_checker_catches_an_isinstance_of_a_concrete_judge_outside_judge(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "",
        "judge/__init__.py": "",
        "judge/base.py": "class Judge:\n    pass\n",
        "judge/pool.py": "class JudgePool:\n    pass\n",
        "judge/llama/__init__.py": "", "judge/llama/judge.py": "class LlamaJudge:\n    pass\n",
        "judge/cached.py": ("from localeval.judge.pool import JudgePool\n"
                            "def f(j):\n    return isinstance(j, JudgePool)\n"),  # inside: fine
        "run/__init__.py": "",
        "run/strategies.py": ("import localeval.judge as judge\n"
                              "from localeval.judge import Judge, JudgePool, LlamaJudge\n"
                              "def f(j):\n"
                              "    return (isinstance(j, (JudgePool, judge.LlamaJudge)),\n"
                              "            isinstance(j, Judge))\n"),  # the protocol: fine
    })
    assert check_tree(root) == [
        f"localeval/run/strategies.py:4: isinstance of judge class {name} outside judge/ "
        f"(use the Judge protocol's capabilities)" for name in ("JudgePool", "LlamaJudge")]


def test_checker_catches_a_summary_parsed_by_hand_above_the_results_layer(tmp_path):
    bad = _tree(tmp_path, {
        "history/__init__.py": "",
        "history/page.py": ("import json\n"
                            "def f(d):\n"
                            "    s = json.load(open(d / 'summary.json'))\n"
                            "    return s['signature'], s.get('judge_check')\n"),
        "report/__init__.py": "",
        "report/view.py": "def g(s):\n    return s.get('signature')\n",
    })
    problems = "\n".join(check_tree(bad))
    assert "history/page.py:3: names summary.json" in problems
    assert "history/page.py:4: reads a run record's 'signature' by hand" in problems
    assert "history/page.py:4: reads a run record's 'judge_check' by hand" in problems
    assert "report/view.py" not in problems  # the results layer reads it


def test_checker_catches_llama_cpp_used_outside_the_compatibility_module(tmp_path):
    root = _tree(tmp_path, {
        "__init__.py": "", "judge/__init__.py": "", "judge/llama/__init__.py": "",
        "judge/llama/compat.py": ("import llama_cpp\n"
                                  "def f(llm):\n    return llm._ctx, llama_cpp.llama_decode\n"),
        "judge/llama/sampler.py": ("import llama_cpp.llama_cpp as lc\n"
                                   "def g(llm):\n    return llm._model\n"),
        "judge/llama/batch.py": ("from llama_cpp import Llama\n"
                                 "def h(lc, llm):\n"
                                 "    return lc.llama_get_logits_ith(llm.ctx, -1)\n"),
        # outside judge/llama: an import is refused too (lazy ones included), but `.ctx`
        # and `llama_*` names mean other things there
        "judge/grammar.py": ("def conv(ctx):\n"
                             "    from llama_cpp.llama_grammar import SchemaConverter\n"
                             "    return ctx.n_tokens, SchemaConverter\n"),
        "testing/__init__.py": "",
        "testing/tiny_gguf.py": ("import gguf\n"  # the gguf package is not llama_cpp
                                 "def q():\n    import llama_cpp\n    return gguf, llama_cpp\n"),
    })
    assert check_tree(root) == sorted([
        "localeval/judge/grammar.py:2: imports llama_cpp outside "
        "localeval/judge/llama/compat.py",
        "localeval/judge/llama/batch.py:1: imports llama_cpp outside "
        "localeval/judge/llama/compat.py",
        "localeval/judge/llama/batch.py:3: uses llama-cpp-python's .ctx outside "
        "localeval/judge/llama/compat.py",
        "localeval/judge/llama/batch.py:3: uses llama-cpp-python's .llama_get_logits_ith outside "
        "localeval/judge/llama/compat.py",
        "localeval/judge/llama/sampler.py:1: imports llama_cpp outside "
        "localeval/judge/llama/compat.py",
        "localeval/judge/llama/sampler.py:3: uses llama-cpp-python's ._model outside "
        "localeval/judge/llama/compat.py",
        "localeval/testing/tiny_gguf.py:3: imports llama_cpp outside "
        "localeval/judge/llama/compat.py",
    ])


@pytest.mark.parametrize("ok", [
    "from localeval.judge import Judge\n",         # through the face
    "from localeval.errors import ModelError\n",   # a lower top-level module
])
def test_checker_accepts_allowed_imports(tmp_path, ok):
    root = _tree(tmp_path, {"__init__.py": "", "errors.py": "", "judge/__init__.py": "",
                            "metrics/__init__.py": "", "metrics/base.py": ok})
    assert check_tree(root) == []


def _imported_packages(pkg: str) -> dict[str, set[str]]:
    """localeval package -> the names its modules import from that package's face."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / pkg).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("localeval."):
                top = node.module.split(".")[1]
                out.setdefault(top, set()).update(a.name for a in node.names)
    return out


def test_the_three_analyses_stand_on_one_floor():
    """compare/validate, estimate and diff read and pair finished runs through
    ``resultsets`` alone: none reads another's result sets, and the only crossings left
    are diff's corrected difference (estimate's face) and its scatter plot (agreement's)."""
    crossings = {}
    for pkg in ("agreement", "estimate", "versions"):
        imports = _imported_packages(pkg)
        assert "resultsets" in imports, f"{pkg} reads no result set through resultsets"
        crossings[pkg] = {other: names for other, names in imports.items()
                          if other in {"agreement", "estimate", "versions"} - {pkg}}
    assert crossings["agreement"] == {} and crossings["estimate"] == {}
    assert set(crossings["versions"]) <= {"agreement", "estimate"}
    assert crossings["versions"].get("agreement", set()) <= {"scatter_svg"}
    # none reads a file itself: runs, exports, labels and the summary beside a run (its
    # signature and recorded directions) come through resultsets' readers
    for pkg in ("agreement", "estimate", "versions"):
        for path in (ROOT / pkg).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "json.load" not in text and ".read_text(" not in text, path
