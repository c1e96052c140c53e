"""Checkers on the command line and in the catalog: the shipped entries, ``models add`` of a
checker folder, ``localeval run --checker`` on the bundled example with a random-weight
checker built here (localeval.testing.tiny_checkers), and the refusals: a damaged folder
(exit 3, the folder named), a metric a checker cannot score, ``--checker`` with ``--judge``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Literal

import pytest

from localeval.catalog import load_models
from localeval.cli.app import main
from localeval.testing.tiny_checkers import build_tiny_checker

ROOT = Path(__file__).resolve().parents[2]
CHECKERS = {"minicheck-roberta-large", "minicheck-deberta-v3-large", "minicheck-flan-t5-large",
            "hhem-2.1-open", "lettucedetect-base", "lettucedetect-large"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return build_tiny_checker("roberta", tmp_path_factory.mktemp("chk") / "tiny-roberta",
                              plant="supported")


def test_shipped_checkers_parse_with_licences_and_files(tmp_path):
    m = load_models(tmp_path)  # the shipped manifest, an empty models folder
    checkers = {e.name: e for e in m if e.kind == "checker"}
    assert set(checkers) == CHECKERS
    for e in checkers.values():
        specs = e.file_specs()
        assert e.licence and e.architecture and e.parameters and e.note
        assert any(s.rel.endswith((".safetensors", ".bin")) for s in specs)
        assert any(s.rel.endswith("config.json") for s in specs)
        assert all(s.url.startswith("https://huggingface.co/") for s in specs)
        # pinned to a commit where one was found; else "main", said in hash_source
        assert (e.revision and e.revision in e.url) or (
            "/resolve/main/" in e.url and "no revision" in e.hash_source)
    # HHEM's tokenizer is its foundation's, fetched from that repository into foundation/
    hhem = {s.rel: s.url for s in checkers["hhem-2.1-open"].file_specs()}
    assert "google/flan-t5-base" in hhem["hhem-2.1-open/foundation/spiece.model"]
    assert m.find("minicheck").name == "minicheck-flan-t5-large"
    assert not any("bespoke" in e.name.lower() for e in m)  # generative, not a checker


def test_models_add_a_checker_folder_then_run_it_by_name(tmp_path, tiny, monkeypatch, capsys):
    models = tmp_path / "models"
    assert main(["models", "add", str(tiny), "--name", "my-checker",
                 "--models-dir", str(models)]) == 0
    assert "added checker 'my-checker'" in capsys.readouterr().out
    entry = load_models(models).find("my-checker")
    assert entry.kind == "checker" and entry.architecture == "RobertaForSequenceClassification"
    assert {f["path"] for f in entry.files} >= {"config.json", "model.safetensors"}
    assert "pair checker" in entry.note
    monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
    out = tmp_path / "run"
    assert main(["run", "example", "--checker", "my-checker", "--limit", "3", "-o", str(out),
                 "--no-judge-check", "--verdicts", "soft", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["signature"]["judge"] == "checker:my-checker"
    assert list(summary["metrics"]) == ["faithfulness"]
    first = json.loads((out / "results.jsonl").read_text("utf-8").splitlines()[0])
    verdicts = first["details"]["faithfulness"]["verdicts"]
    assert verdicts and all(0.0 <= v["p_verdict_1"] <= 1.0 for v in verdicts)


def test_judge_check_takes_a_checker(tmp_path, tiny, capsys):
    code = main(["judge", "check", "--checker", str(tiny), "--json", "--no-cache"])
    result = json.loads(capsys.readouterr().out)
    assert code == (0 if result["verdict"] == "fit" else 1)
    assert list(result["metrics"]) == ["faithfulness"]
    assert result["judge"] == "checker:tiny-roberta"


def test_a_damaged_checker_folder_exits_3_naming_it(tmp_path, tiny, capsys):
    broken = tmp_path / "broken-checker"
    shutil.copytree(tiny, broken)
    (broken / "model.safetensors").unlink()
    assert main(["models", "add", str(broken), "--models-dir", str(tmp_path / "m")]) == 3
    err = capsys.readouterr().err
    assert "broken-checker" in err and "no weights" in err
    assert main(["run", "example", "--checker", str(broken), "--limit", "1",
                 "-o", str(tmp_path / "r")]) == 3
    assert "broken-checker" in capsys.readouterr().err
    assert main(["run", "example", "--checker", "no-such-checker", "--limit", "1",
                 "-o", str(tmp_path / "r2")]) == 3
    assert "checker model not found: no-such-checker" in capsys.readouterr().err


def test_checker_refuses_metrics_it_cannot_score_and_a_second_judge(tmp_path, tiny, capsys):
    assert main(["run", "example", "--checker", str(tiny), "-m", "faithfulness,answer_relevancy",
                 "-o", str(tmp_path / "a")]) == 2
    assert "answer_relevancy needs a generative judge" in capsys.readouterr().err
    assert main(["run", "example", "--checker", str(tiny), "--judge", "demo",
                 "-o", str(tmp_path / "b")]) == 2
    assert "--checker and --judge" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize("kind", ["roberta", "deberta", "t5", "hhem", "modernbert"])
def test_each_family_scores_faithfulness_from_its_planted_verdict(tmp_path, kind):
    """Through the real loader and the judge spec: a folder planted "supported" scores every
    sentence supported, one planted "unsupported" none (pair, text-to-text, span)."""
    from localeval.run import evaluate

    rows = [{"id": "a", "question": "When?", "answer": "The library opens at 9. It has a cafe.",
             "contexts": ["The library opens at 9."]}]
    plants: tuple[tuple[Literal["supported", "unsupported"], float], ...] = (
        ("supported", 1.0), ("unsupported", 0.0))
    for plant, expected in plants:
        folder = build_tiny_checker(kind, tmp_path / f"{kind}-{plant}", plant=plant)
        res = evaluate(rows, "faithfulness", judge=f"checker:{folder}", embedder=False,
                       cache=False, judge_check=False, progress=False)
        score = res.scores[0]["faithfulness"]
        assert score.value == expected, (kind, plant, score)
        assert len(score.details["statements"]) == 2


def test_fetch_a_checker_whose_tokenizer_lives_in_another_repository(tmp_path, monkeypatch,
                                                                     capsys):
    """``models fetch`` of an HHEM-shaped checker from a local server: the folder's files from
    its base URL, ``foundation/`` from the files' own URLs; then it runs by name."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from localeval.catalog.entry import ModelEntry
    from localeval.catalog.manifest import entries_to_toml

    built = build_tiny_checker("hhem", tmp_path / "built", plant="supported")
    site = tmp_path / "site"
    for rel in [p.relative_to(built) for p in built.rglob("*") if p.is_file()]:
        repo = "flan" if rel.parts[0] == "foundation" else "vectara"
        dest = site / repo / (Path(*rel.parts[1:]) if repo == "flan" else rel)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(built / rel, dest)
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        files: list[dict[str, Any]] = [
            {"path": p.relative_to(built).as_posix(), "size_bytes": p.stat().st_size,
             "size_approx": False}
            for p in sorted(built.rglob("*")) if p.is_file() and p.suffix != ".py"]
        for f in files:
            name = str(f["path"])
            if name.startswith("foundation/"):
                f["url"] = f"{base}/flan/{name.split('/', 1)[1]}"
        entry = ModelEntry(name="tiny-hhem", kind="checker", file="tiny-hhem",
                           url=f"{base}/vectara/", files=files)
        mdir = tmp_path / "models"
        mdir.mkdir()
        (mdir / "manifest.toml").write_text(entries_to_toml([entry]))
        assert main(["models", "fetch", "tiny-hhem", "--to", str(mdir), "--retry-wait", "0",
                     "--progress", "never"]) == 0
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert (mdir / "tiny-hhem" / "foundation" / "tokenizer_config.json").is_file()
    assert main(["models", "verify", "--models-dir", str(mdir)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("LOCALEVAL_MODELS", str(mdir))
    assert main(["run", "example", "--checker", "tiny-hhem", "--limit", "2", "--json",
                 "--no-judge-check", "-o", str(tmp_path / "run")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["signature"]["judge"] == "checker:tiny-hhem"
    assert summary["metrics"]["faithfulness"]["mean"] == 1.0  # planted "supported"


def test_the_checker_runs_on_the_runs_device_from_the_environment_too(tmp_path, tiny,
                                                                      monkeypatch):
    """``--device`` or, without it, ``$LOCALEVAL_DEVICE`` places the checker, as it places the
    embedder; a GGUF judge is never handed the option."""
    import localeval.judge.checker_judge as cj
    from localeval.run import evaluate

    seen: list[Any] = []
    real = cj.build_checker_judge

    def spy(spec: str, **kw: Any):
        seen.append(kw.get("checker_device"))
        return real(spec, **kw)

    monkeypatch.setattr(cj, "build_checker_judge", spy)
    rows = [{"id": "a", "question": "When?", "answer": "It opens at 9.",
             "contexts": ["It opens at 9."]}]
    monkeypatch.setenv("LOCALEVAL_DEVICE", "cpu")
    evaluate(rows, "faithfulness", judge=f"checker:{tiny}", embedder=False, cache=False,
             judge_check=False, progress=False)
    monkeypatch.delenv("LOCALEVAL_DEVICE")
    assert main(["run", str(_write(tmp_path, rows)), "--checker", str(tiny), "--device", "cpu",
                 "--no-judge-check", "--no-cache", "-o", str(tmp_path / "out")]) == 0
    assert seen == ["cpu", "cpu"]


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
