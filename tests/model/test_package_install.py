"""A built wheel, installed into a fresh virtual environment, works away from the checkout.

What a `pip install localeval` user sees: from an empty folder, `localeval models list`
shows every manifest entry (the manifest is package data, not the checkout's
``models/``), a missing model's hint names a command the wheel has, and the bundled
example runs. The wheel is built and installed offline (``--no-deps --no-index
--no-build-isolation``); the fresh environment borrows this one's dependencies through
a ``.pth`` line, so nothing is downloaded. About 10 s (marker ``packaging``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from localeval.catalog.manifest import SHIPPED_MANIFEST, load_manifest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.packaging


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, f"{cmd}\n{run.stdout}\n{run.stderr}"
    return run.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with localeval installed from a wheel; returns its bin/ folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    # a copy, so the build writes nothing into the shared checkout
    shutil.copytree(ROOT / "localeval", src / "localeval",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index",
          "--no-build-isolation", "-w", str(tmp / "dist"), str(src)], cwd=tmp)
    wheel = next((tmp / "dist").glob("localeval-*.whl"))
    venv = tmp / "venv"
    _run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp)
    py = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
          "--no-index", str(wheel)], cwd=tmp)
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   cwd=tmp).strip()
    # dependencies from this environment, after the fresh site-packages (so its localeval wins)
    Path(purelib, "localeval-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


@pytest.fixture()
def empty(tmp_path) -> Path:
    d = tmp_path / "empty"
    d.mkdir()
    return d


def _env(empty: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LOCALEVAL_MODELS", "PYTHONPATH")}
    env["HF_HUB_OFFLINE"] = "1"
    env["LOCALEVAL_CACHE"] = str(empty / "cache.sqlite")
    return env


def test_wheel_lists_every_manifest_model_from_an_empty_folder(installed, empty):
    where = _run([str(installed / "python"), "-c", "import localeval; print(localeval.__file__)"],
                 cwd=empty, env=_env(empty))
    assert str(ROOT) not in where and "site-packages" in where
    rows = json.loads(_run([str(installed / "localeval"), "models", "list", "--json"], cwd=empty,
                           env=_env(empty)))
    shipped = load_manifest(empty / "models", shipped=SHIPPED_MANIFEST)
    assert [r["name"] for r in rows] == shipped.names() and len(rows) >= 8
    states = {r["name"]: r["state"] for r in rows}
    assert states["all-MiniLM-L6-v2"] == "bundled"
    # the hint names a command the wheel has, not a script it lacks
    qwen = next(r for r in rows if r["name"].startswith("qwen2.5-7b"))
    assert qwen["detail"].startswith("localeval models fetch qwen2.5-7b-instruct-q4_k_m")
    run = subprocess.run([str(installed / "localeval"), "models", "verify", "qwen2.5-7b"],
                         cwd=empty, capture_output=True, text=True, timeout=60, env=_env(empty))
    assert run.returncode == 3 and "unknown" not in run.stdout + run.stderr
    assert "localeval models fetch qwen2.5-7b-instruct-q4_k_m" in run.stdout
    fetch_help = _run([str(installed / "localeval"), "models", "fetch", "--help"], cwd=empty,
                      env=_env(empty))
    assert "--url-override" in fetch_help


def test_wheel_metadata_and_example_run(installed, empty):
    meta = json.loads(_run([str(installed / "python"), "-c",
                            "import importlib.metadata as m, json; d = m.metadata('localeval'); "
                            "print(json.dumps({'author': d['Author-email'], "
                            "'classifiers': d.get_all('Classifier'), "
                            "'requires': d.get_all('Requires-Dist')}))"], cwd=empty,
                           env=_env(empty)))
    assert meta["author"] and len(meta["classifiers"]) >= 5
    assert any(r.startswith(("pandas", "datasets")) for r in meta["requires"])
    _run([str(installed / "localeval"), "run", "example", "-m", "bleu,rougeL", "-o", "out"],
         cwd=empty, env=_env(empty))
    lines = (empty / "out" / "results.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 40 and all(json.loads(x)["scores"]["bleu"] is not None for x in lines)
    assert (empty / "out" / "report.html").is_file()
