"""The one output policy under every verb that writes (docs/failure-behaviour.md, "Outputs of
every verb"): an output into its own input, into or around an input folder, onto a folder that
cannot be made, onto a full disk (a small tmpfs), and over a finished result of other settings;
each is exit 2 with one message naming the file, nothing half written and no input changed.

Small data, text metrics and scripted judges (registered as judge backends) keep it fast."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
from generate_util import STEPS
from generate_util import statements as _statements
from generate_util import supported as _verdicts
from simulate_util import user as _user
from simulate_util import write_agent, write_scenarios

import localeval
from localeval.cli.app import main
from localeval.testing import ScriptedJudge
from localeval.testing.scripted import ScriptedReply

N = 15
EN = ["The river Aldmere floods every spring after the snow melts in the northern hills.",
      "Farmers near the river plant barley late, once the water has gone down again.",
      "The old mill on the east bank grinds barley and oats for three villages.",
      "A stone bridge built in 1820 carries the only road across the river.",
      "Every autumn the villages hold a market where the mill sells its flour.",
      "The northern hills are covered in pine forest and are home to red deer.",
      "Fishing is allowed from the bridge only outside the spawning season.",
      "The village school teaches the history of the floods to every pupil.",
      "A weather station on the hill measures rain and snow every hour of the day.",
      "The mill's water wheel was replaced by a turbine in the year 1952."]
ZH = ["这条河每年春天雪融化以后都会泛滥，农民因此推迟播种大麦。",
      "东岸的老磨坊为三个村庄磨大麦和燕麦，已经有两百年的历史。",
      "一八二零年建成的石桥是唯一一条过河的道路，至今仍在使用。",
      "北部山区覆盖着松树林，是红鹿的栖息地，每年吸引很多游客。"]


def _qa(request: Any) -> dict[str, str]:
    first = request.sample.contexts[0]
    return {"question": f"What does the text say about {first.split()[1]}?",
            "answer": first.split(". ")[0].rstrip(".") + "."}


def _prefer(request: Any) -> Any:
    return ScriptedReply({"reason": "r", "verdict": "A"}, [{"A": 0.6, "B": 0.3, "tie": 0.1}])


@pytest.fixture(scope="module", autouse=True)
def judges():
    from localeval.judge import register_judge_backend, unregister_judge_backend

    gen = ScriptedJudge({**{s: _qa for s in STEPS}, "statements": _statements,
                         "faithfulness_verdicts": _verdicts})
    pair = ScriptedJudge({"pairwise_preference": _prefer})
    sim = ScriptedJudge({"simulate_user": _user})
    register_judge_backend("floor-sim", lambda s: s == "floor-sim", lambda s, **kw: sim)
    register_judge_backend("floor-gen", lambda s: s == "floor-gen", lambda s, **kw: gen)
    register_judge_backend("floor-pair", lambda s: s == "floor-pair", lambda s, **kw: pair)
    yield
    unregister_judge_backend("floor-gen")
    unregister_judge_backend("floor-pair")
    unregister_judge_backend("floor-sim")


@dataclass
class World:
    """Every verb's inputs, made once; the tests check that none of them changes."""

    root: Path

    def __getattr__(self, name: str) -> Path:
        return self.root / {"data": "data/data.jsonl", "datadir": "data", "rag": "data/rag.py",
                            "docs": "docs", "runs": "runs", "run_a": "runs/a",
                            "run_b": "runs/b", "labels": "data/labels.csv",
                            "human": "data/human.jsonl", "versions": "versions",
                            "scenarios": "data/scenarios.jsonl", "agent": "data/agent.py",
                            "other": "other"}[name]

    def snapshot(self) -> dict[str, str]:
        return {str(p.relative_to(self.root)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(self.root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    w = World(tmp_path_factory.mktemp("world"))
    w.datadir.mkdir()
    rows = [{"id": f"q{i}", "question": f"What is item {i}?", "answer": f"Item {i} is blue.",
             "reference": f"Item {i} is {'blue' if i % 3 else 'red'}.",
             "contexts": [f"Item {i} is blue."]} for i in range(N)]
    w.data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    w.rag.write_text("def answer(q):\n    return 'an answer to ' + q\n", encoding="utf-8")
    write_scenarios(w.datadir)
    write_agent(w.datadir, "agent")
    for name, shift in (("a", 0), ("b", 1)):
        data = [dict(r, answer=f"Item {int(r['id'][1:]) + shift} is blue.") for r in rows]
        localeval.evaluate(data, ["rougeL"], judge=False, embedder=False, cache=False,
                           out_dir=w.runs / name, progress=False)
    w.labels.write_text("id,label_rougeL\n" + "".join(f"q{i},{i % 2}\n" for i in range(N)),
                        encoding="utf-8")
    w.human.write_text("".join(json.dumps({"id": f"q{i}", "label": "positive" if i % 2
                                           else "negative"}) + "\n" for i in range(N)),
                       encoding="utf-8")
    w.docs.mkdir()
    for i, text in enumerate(EN[:6]):
        (w.docs / f"d{i}.md").write_text(f"# Note {i}\n\n{text} {EN[(i + 1) % 10]}\n",
                                         encoding="utf-8")
    w.versions.mkdir()
    for v in ("v1", "v2", "v3"):
        (w.versions / f"{v}.jsonl").write_text("".join(json.dumps(
            {"id": r["id"], "question": r["question"], "answer": f"{v} says {r['answer']}"})
            + "\n" for r in rows), encoding="utf-8")
    w.other.mkdir()
    localeval.evaluate(rows[:5], ["rougeL"], judge=False, embedder=False, cache=False,
                       out_dir=w.other / "c", progress=False)
    return w


@dataclass(frozen=True)
class Verb:
    argv: Callable[[World, str], list[str]]
    #: "folder" or "file": what -o names
    kind: str
    #: an input given as -o
    own: Callable[[World], Path]
    #: an -o inside (or around) an input folder, None where the verb's inputs are files only
    near: Callable[[World], Path] | None = None
    #: (option flipped between two runs, the result file) for the settings check
    other: tuple[list[str], list[str]] | None = None


VERBS: dict[str, Verb] = {
    "run": Verb(lambda w, o: ["run", str(w.data), "-m", "rougeL", "--no-cache", "--quiet",
                              "-o", o], "folder", lambda w: w.data, lambda w: w.datadir),
    "answer": Verb(lambda w, o: ["answer", str(w.data), "--pipeline", f"{w.rag}:answer",
                                 "--quiet", "-o", o], "file", lambda w: w.rag),
    "generate": Verb(lambda w, o: ["generate", str(w.docs), "-n", "2", "--judge", "floor-gen",
                                   "--embedder", "none", "--no-cache", "--quiet", "-o", o],
                     "folder", lambda w: w.docs, lambda w: w.docs / "set",
                     (["--seed", "1"], ["--seed", "2"])),
    "simulate": Verb(lambda w, o: ["simulate", str(w.scenarios), "--agent", f"{w.agent}:reply",
                                   "--judge", "floor-sim", "--no-cache", "--quiet", "-o", o],
                     "folder", lambda w: w.scenarios, lambda w: w.datadir,
                     (["--max-turns", "2"], ["--max-turns", "3"])),
    "diff": Verb(lambda w, o: ["diff", str(w.run_a), str(w.run_b), "--resamples", "100",
                               "-o", o], "folder", lambda w: w.run_b, lambda w: w.run_a / "d",
                 (["--seed", "1"], ["--seed", "2"])),
    "rank": Verb(lambda w, o: ["rank", *(str(w.versions / f"v{i}.jsonl") for i in (1, 2, 3)),
                               "--judge", "floor-pair", "--no-judge-check", "--no-cache",
                               "--resamples", "100", "-o", o], "folder",
                 lambda w: w.versions / "v2.jsonl", lambda w: w.versions,
                 (["--seed", "1"], ["--seed", "2"])),
    "compare": Verb(lambda w, o: ["compare", str(w.run_a), str(w.run_b), "--n-boot", "0",
                                  "--align", "position",
                                  "-o", o], "folder", lambda w: w.run_a, lambda w: w.run_b / "c",
                    (["--threshold", "0.4"], ["--threshold", "0.6"])),
    "validate": Verb(lambda w, o: ["validate", str(w.run_a), str(w.human), "--n-boot", "0",
                                   "-o", o], "folder", lambda w: w.human,
                     lambda w: w.run_a / "v", (["--seed", "1"], ["--seed", "2"])),
    "estimate": Verb(lambda w, o: ["estimate", str(w.run_a), str(w.labels), "--random-draw",
                                   "-o", o], "folder", lambda w: w.labels,
                     lambda w: w.run_a / "e", ([], ["--labels-reference-interval"])),
    "label-sheet": Verb(lambda w, o: ["label-sheet", str(w.run_a), "-n", "5", "-o", o],
                        "file", lambda w: w.run_a / "results.jsonl"),
    "history": Verb(lambda w, o: ["history", str(w.runs), "-o", o], "file",
                    lambda w: w.run_a / "report.html", None,
                    ([], [str(Path("OTHER"))])),
}


def _argv(verb: str, w: World, out: Path, extra: list[str] = ()) -> list[str]:
    argv = VERBS[verb].argv(w, str(out))
    at = argv.index("-o")  # extras before -o: history's extra folder is a positional
    return [str(w.other) if a == "OTHER" else a for a in argv[:at] + list(extra) + argv[at:]]


def _refused(capsys, argv: list[str], *words: str) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and err.count("localeval: error:") == 1, err
    for word in words:
        assert word in err, (word, err)
    return err


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_an_output_into_its_own_input_is_refused(verb, world, capsys):
    before = world.snapshot()
    own = VERBS[verb].own(world)
    _refused(capsys, _argv(verb, world, own), str(own), "input")
    assert world.snapshot() == before


@pytest.mark.parametrize("verb", sorted(v for v in VERBS if VERBS[v].near is not None))
def test_an_output_in_or_around_an_input_folder_is_refused(verb, world, capsys):
    before = world.snapshot()
    near = VERBS[verb].near(world)  # type: ignore[misc]
    _refused(capsys, _argv(verb, world, near), str(near), "input")
    assert world.snapshot() == before
    assert near.is_dir() == (near in (world.datadir, world.versions))  # nothing made


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_file_in_the_way_of_the_output_is_one_message(verb, world, tmp_path, capsys):
    """As root a read-only folder is writable, so the folder that cannot be made is one
    whose parent is a file: the message names that file."""
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    out = blocker / ("out" if VERBS[verb].kind == "folder" else "out.x")
    _refused(capsys, _argv(verb, world, out), str(blocker))
    assert blocker.read_text() == "x" and list(tmp_path.iterdir()) == [blocker]


def _tmpfs(where: Path) -> Path:
    """A 64 KiB tmpfs at ``where`` (skip where mounting is not permitted)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"mount -t tmpfs is not permitted here: {done.stderr.decode().strip()}")
    return where


def _fill(where: Path) -> None:
    """Fill the tmpfs: every later write fails with ENOSPC, as on a full disk."""
    try:
        with open(where / "ballast", "wb") as f:
            f.write(b"x" * (1 << 20))
    except OSError:
        pass


@pytest.fixture(scope="module")
def full_disk(tmp_path_factory):
    where = _tmpfs(tmp_path_factory.mktemp("full"))
    _fill(where)
    yield where
    subprocess.run(["umount", str(where)], check=False)


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_full_disk_is_exit_2_naming_the_file(verb, world, full_disk, capsys):
    out = full_disk / (verb + ("" if VERBS[verb].kind == "folder" else ".out"))
    before = world.snapshot()
    err = _refused(capsys, _argv(verb, world, out), str(out), "no space left")
    assert world.snapshot() == before
    left = [p.name for p in full_disk.rglob("*.tmp") if not p.name.endswith(".out.tmp")]
    assert not left, left  # the one .tmp that may stay is answer's checkpoint, named in err
    assert not list(full_disk.rglob("*.tmp.tmp")), err


@pytest.mark.parametrize("verb", sorted(v for v in VERBS if VERBS[v].other is not None))
def test_a_result_of_other_settings_is_kept_unless_overwrite(verb, world, tmp_path, capsys):
    first, second = VERBS[verb].other  # type: ignore[misc]
    out = tmp_path / ("out" if VERBS[verb].kind == "folder" else "page.html")
    assert main(_argv(verb, world, out, first)) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(_argv(verb, world, out, first)) == 0, capsys.readouterr().err  # a rerun
    capsys.readouterr()
    kept = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} if out.is_dir() \
        else {out: out.read_bytes()}
    err = _refused(capsys, _argv(verb, world, out, second), "--overwrite", "other settings")
    assert kept == ({p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
                    if out.is_dir() else {out: out.read_bytes()}), err
    assert main(_argv(verb, world, out, [*second, "--overwrite"])) == 0, capsys.readouterr().err


def test_report_onto_a_full_disk_is_exit_2(world, tmp_path, capsys):
    """report writes into the run folder by design: atomically, naming the file."""
    (tmp_path / "disk").mkdir()
    where = _tmpfs(tmp_path / "disk")
    try:
        run = where / "run"
        run.mkdir()
        for name in ("results.jsonl", "summary.json"):
            (run / name).write_bytes((world.run_a / name).read_bytes())
        _fill(where)
        err = _refused(capsys, ["report", str(run)], "no space left")
        assert "report.html" in err or "summary.md" in err
        assert not list(run.glob("*.tmp"))
    finally:
        subprocess.run(["umount", str(where)], check=False)
