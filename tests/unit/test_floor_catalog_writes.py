"""``localeval models`` under the output rules (docs/failure-behaviour.md, "Rules for every
verb"): ``add --copy`` copies under a temporary name and renames it into place, ``fetch``
appends a download's ``.part`` and resumes it, the lock is written atomically; a full disk
is exit 2 naming the file with nothing half installed, and the download bar shows a
manifest file name as written (no markup read from it, no control character raw).

No network: the download's HTTP response is a stand-in (``fetch._open``)."""

from __future__ import annotations

import hashlib
import io
import subprocess

import pytest
from test_floor_outputs import _fill
from test_floor_outputs_explain import mounted  # noqa: F401 - the tmpfs fixture

from localeval.catalog import fetch as fetching
from localeval.catalog.command import models_main
from localeval.catalog.entry import ModelEntry
from localeval.catalog.manifest import entries_to_toml
from localeval.errors import OutputError
from localeval.testing import TinyModelSpec, build_tiny_gguf

BODY = bytes(range(256)) * 800  # 200 KiB: more than the small disk holds


@pytest.fixture
def disk(mounted):  # noqa: F811 - the imported fixture, by the name these tests use
    return mounted


class _Response:
    """What urllib's response gives ``download``: the body from ``start``, 206 when resumed."""

    def __init__(self, body: bytes, start: int) -> None:
        self.status = 206 if start else 200
        self.headers = {"Content-Length": str(len(body) - start)}
        if start:
            self.headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
        self._f = io.BytesIO(body[start:])

    def read(self, n: int) -> bytes:
        return self._f.read(n)

    def __enter__(self) -> _Response:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.fixture
def served(monkeypatch):
    """``fetch._open`` answering from BODY; records each request's start byte."""
    starts: list[int] = []

    def fake_open(url: str, have: int, timeout: float) -> _Response:
        starts.append(have)
        return _Response(BODY, have)

    monkeypatch.setattr(fetching, "_open", fake_open)
    return starts


def test_a_download_onto_a_full_disk_is_exit_2_and_resumes_from_its_part(disk, served):
    dest = disk / "models" / "m.gguf"
    part = dest.with_name("m.gguf.part")
    sha = hashlib.sha256(BODY).hexdigest()
    with pytest.raises(OutputError) as e:
        fetching.download("https://example.org/m.gguf", dest, expected_sha256=sha, retries=0,
                          retry_wait=0, log=lambda _m: None)
    msg = str(e.value)
    assert str(part) in msg and "no space left" in msg and "resume" in msg
    kept = part.stat().st_size
    assert 0 < kept < len(BODY) and part.read_bytes() == BODY[:kept]  # whole bytes, in order
    assert not dest.exists()
    # more room: the same download resumes at the byte the .part ends, and is whole
    subprocess.run(["mount", "-o", "remount,size=1m", str(disk)], check=True)
    got = fetching.download("https://example.org/m.gguf", dest, expected_sha256=sha,
                            retries=0, retry_wait=0, log=lambda _m: None)
    assert got == sha and dest.read_bytes() == BODY and not part.exists()
    assert served == [0, kept]


def test_models_fetch_onto_a_full_disk_is_exit_2_naming_the_file(disk, served, capsys):
    mdir = disk / "models"
    mdir.mkdir()
    entry = ModelEntry(name="m", kind="judge", file="m.gguf", url="https://example.org/m.gguf",
                       sha256=hashlib.sha256(BODY).hexdigest(), size_approx=True)
    (mdir / "manifest.toml").write_text(entries_to_toml([entry]), "utf-8")
    _fill(disk)
    code = models_main(["--models-dir", str(mdir), "fetch", "m", "--retries", "0",
                        "--progress", "never"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert str(mdir / "m.gguf.part") in err and "no space left" in err
    assert "Traceback" not in err and not (mdir / "m.gguf").exists()
    assert not (mdir / "models.lock.json").exists()


def test_models_add_copy_onto_a_full_disk_leaves_nothing(tmp_path, disk, capsys):
    src = build_tiny_gguf(tmp_path / "tiny.gguf", TinyModelSpec(dtype="f16", ctx=1024))
    mdir = disk / "models"
    mdir.mkdir()
    _fill(disk)
    code = models_main(["--models-dir", str(mdir), "add", str(src), "--copy"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert str(mdir / "tiny.gguf") in err and "no space left" in err and "nothing was added" in err
    assert list(mdir.iterdir()) == []  # no half model, no temporary copy, no local.toml
    assert src.stat().st_size > 0


def test_models_add_copy_renames_a_whole_copy_into_place(tmp_path, capsys):
    src = build_tiny_gguf(tmp_path / "tiny.gguf", TinyModelSpec(dtype="f16", ctx=1024))
    mdir = tmp_path / "models"
    assert models_main(["--models-dir", str(mdir), "add", str(src), "--copy"]) == 0
    assert (mdir / "tiny.gguf").read_bytes() == src.read_bytes()
    assert sorted(p.name for p in mdir.iterdir()) == ["local.toml", "models.lock.json",
                                                      "tiny.gguf"]
    capsys.readouterr()


def test_the_download_bar_shows_a_file_name_as_written(capsys):
    from localeval.catalog.progress import DownloadProgress, HashProgress

    name = "[bold red]m\x1b[31m[/x].gguf"  # "[/x]" read as markup would raise
    bar = DownloadProgress(name, 10, 0, True)
    bar.advance(5)
    bar.close()
    hashing = HashProgress(10, "hashing", True)
    hashing.describe("[/y]\x07")
    hashing.close()
    err = capsys.readouterr().err
    assert "[bold red]m\\x1b[31m[/x].gguf" in err
    assert "\x1b[31m" not in err.replace("\\x1b[31m", "") and "\x07" not in err


def test_a_lock_that_cannot_be_written_is_an_output_error(tmp_path):
    from localeval.catalog.ledger import Lock

    blocker = tmp_path / "afile"
    blocker.write_text("x")
    with pytest.raises(OutputError, match="afile"):
        Lock(blocker / "models" / "models.lock.json").save()
    assert blocker.read_text() == "x"


def test_the_hash_memo_is_written_whole_and_skipped_where_it_cannot_be(tmp_path):
    from localeval.catalog.hashing import file_sha256

    f = tmp_path / "f.bin"
    f.write_bytes(BODY)
    memo = tmp_path / "cache" / "file-hashes.json"
    assert file_sha256(f, memo_file=memo, fresh=True) == hashlib.sha256(BODY).hexdigest()
    assert str(f.resolve()) in memo.read_text(encoding="utf-8")
    assert [p.name for p in memo.parent.iterdir()] == ["file-hashes.json"]  # no temporary
    blocked = tmp_path / "afile"
    blocked.write_text("x")
    assert file_sha256(f, memo_file=blocked / "memo.json", fresh=True)  # an optimisation only
    assert blocked.read_text() == "x"
