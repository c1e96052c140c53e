"""Downloading manifest models on a connected machine: ``localeval models fetch`` and
``scripts/fetch_models.py``, one implementation.

Each file is downloaded over HTTP(S) with the standard library to ``NAME.part``,
resumed with a Range request when the connection breaks (or from a ``.part``
left by an earlier run), checked against the manifest's sha256 when it has one
(a wrong file is deleted, never installed), and recorded in ``models.lock.json``
after each file, so an interrupted fetch keeps what it finished. The air-gapped
side then runs ``localeval models verify``.

This is the only module of localeval that opens a connection, and only the
explicit ``models fetch`` command reaches it: a run never downloads (a test
checks both). Standard library only (rich or tqdm draw a bar when installed):
``scripts/fetch_models.py`` imports it from a checkout on a machine where
localeval's dependencies are not installed. urllib rather than requests or
huggingface_hub for that reason: neither may be there.

Hugging Face token: HF_TOKEN is sent to huggingface.co only, never to the CDN
a download redirects to.

No network (the host name does not resolve, the network is unreachable, the
connection is refused) is not retried: retrying cannot help, and five waits per
file made an air-gapped machine wait minutes to be told nothing. The fetch stops
at the first such failure with one line of air-gap advice (``NoNetwork``), and a
fetch that installed nothing leaves nothing behind: folders are made and the lock
written only once a file arrives.
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import http.client
import os
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable, Sequence

from localeval.catalog.entry import ManifestError, ModelEntry, human_size
from localeval.catalog.hashing import CHUNK_BYTES, file_sha256
from localeval.catalog.ledger import Lock
from localeval.catalog.manifest import Manifest, load_manifest
from localeval.catalog.progress import DownloadProgress
from localeval.errors import FetchError, NoNetwork, OutputError, printable
from localeval.output import cannot_write, make_folder, move_into_place

__all__ = ["FetchError", "NoNetwork", "download", "fetch_models", "fetch_main", "AIR_GAP_ADVICE"]

CHUNK = 1024 * 1024
USER_AGENT = "localeval-fetch/1"


AIR_GAP_ADVICE = "run this on a connected machine and copy models/ (see docs/air-gap.md)"
#: Connection errors that mean "no route to anything", not a server's hiccup.
_UNREACHABLE = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, errno.ECONNREFUSED}


def _no_network(err: BaseException, url: str) -> NoNetwork | None:
    """A NoNetwork for a failed connection that no retry can mend, else None."""
    reason = getattr(err, "reason", err)  # urllib wraps the socket's OSError in a URLError
    host = urllib.parse.urlsplit(url).hostname or url
    if isinstance(reason, socket.gaierror):
        what = f"cannot resolve {host}"
    elif isinstance(reason, OSError) and reason.errno in _UNREACHABLE:
        what = f"cannot connect to {host}"
    else:
        return None
    why = str(reason.strerror or reason)
    return NoNetwork(f"no network: {what} ({why[:1].lower()}{why[1:]}); {AIR_GAP_ADVICE}")


# -- HTTP ---------------------------------------------------------------------------------
class _NoAuthAcrossHosts(urllib.request.HTTPRedirectHandler):
    """Follow redirects, but never carry the Authorization header to another host."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None:
            old_host = urllib.parse.urlsplit(req.full_url).hostname
            if urllib.parse.urlsplit(newurl).hostname != old_host:
                new.remove_header("Authorization")
        return new


_OPENER = urllib.request.build_opener(_NoAuthAcrossHosts)


def _request(url: str, start: int) -> urllib.request.Request:
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if start:
        req.add_header("Range", f"bytes={start}-")
    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    host = urllib.parse.urlsplit(url).hostname or ""
    if token and (host == "huggingface.co" or host.endswith(".huggingface.co")):
        req.add_header("Authorization", f"Bearer {token}")
    return req


def _content_range_total(value: str | None) -> tuple[int | None, int | None]:
    """(start, total) from 'bytes 100-199/200'; Nones when absent or '*'."""
    if not value or not value.startswith("bytes "):
        return None, None
    rng, _, total = value[6:].partition("/")
    start = rng.partition("-")[0]
    return (int(start) if start.isdigit() else None, int(total) if total.isdigit() else None)


def _hash_existing(path: Path, h: Any) -> int:
    n = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK_BYTES):
            h.update(chunk)
            n += len(chunk)
    return n


def _open(url: str, have: int, timeout: float) -> Any:
    """The response, or None when a 416 says the ``.part`` is already whole; raises on others."""
    try:
        return _OPENER.open(_request(url, have), timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:  # asked past the end: the .part is already whole
            return None
        if e.code in (401, 403):
            raise FetchError(f"{url}: HTTP {e.code} (gated or private repository? accept "
                             "its licence on huggingface.co and set HF_TOKEN)") from None
        if e.code == 404:
            raise FetchError(f"{url}: HTTP 404 (file or revision no longer published; "
                             "see hash_source in the manifest)") from None
        raise


def download(url: str, dest: Path, *, expected_sha256: str = "", expected_size: int = 0,
             magic: bytes = b"", retries: int = 5, retry_wait: float = 2.0,
             timeout: float = 60.0, progress: bool = False,
             log: Callable[[str], None] = print) -> str:
    """Download ``url`` to ``dest`` via ``dest.part``, resuming; return the sha256.

    The file is moved into place only when complete and, if ``expected_sha256``
    is given, matching; otherwise the ``.part`` is deleted and FetchError raised.
    ``magic``: bytes the file must start with (b"GGUF"), which catches an HTML
    error page served with status 200 when the manifest has no hash to check.
    """
    part = dest.with_name(dest.name + ".part")
    attempt = 0
    restarted = False

    def retry(why: str) -> bool:
        nonlocal attempt
        if attempt >= retries:
            return False
        attempt += 1
        log(f"  {dest.name}: {why} ({attempt}/{retries})")
        time.sleep(retry_wait * attempt)
        return True

    while True:
        h = hashlib.sha256()
        have = _hash_existing(part, h) if part.exists() else 0
        try:
            resp = _open(url, have, timeout)
        except urllib.error.HTTPError as e:
            if e.code >= 500 and retry(f"HTTP {e.code}, retrying"):
                continue
            raise FetchError(f"{url}: HTTP {e.code} {e.reason}") from None
        except (urllib.error.URLError, OSError) as e:
            offline = _no_network(e, url)
            if offline is not None:
                raise offline from None
            if retry(f"{getattr(e, 'reason', e)}, retrying"):
                continue
            raise FetchError(f"{url}: {getattr(e, 'reason', e)}") from None

        total: int | None = expected_size or None
        if resp is not None:
            with resp:
                status = resp.status
                if have and status == 200:  # server ignored Range: start over
                    log(f"  {dest.name}: server does not resume; downloading from the start")
                    h, have = hashlib.sha256(), 0
                    part.unlink(missing_ok=True)
                elif status == 206:
                    start, total_cr = _content_range_total(resp.headers.get("Content-Range"))
                    if start is not None and start != have:
                        raise FetchError(f"{url}: server resumed at byte {start}, not {have}")
                    total = total_cr or total
                length = resp.headers.get("Content-Length")
                if status == 200 and length and length.isdigit():
                    total = int(length)
                if have:
                    log(f"  {dest.name}: resuming at {human_size(have)}")
                bar = DownloadProgress(dest.name, total, have, progress)
                broke: BaseException | None = None
                try:
                    make_folder(dest.parent, option="--to")  # only once bytes arrive
                    with _PartFile(part) as out:
                        while True:
                            try:  # a fault reading the connection is retried...
                                chunk = resp.read(CHUNK)
                            except (TimeoutError, OSError, http.client.HTTPException) as e:
                                broke = e
                                break
                            if not chunk:
                                break
                            out.append(chunk)  # ...one writing the disk is exit 2
                            h.update(chunk)
                            have += len(chunk)
                            bar.advance(len(chunk))
                finally:
                    bar.close()
                if broke is not None:
                    if retry(f"connection broke at {human_size(have)} "
                             f"({broke.__class__.__name__}), resuming"):
                        continue
                    raise FetchError(f"{url}: connection broke at byte {have}; run again to "
                                     f"resume from {part}") from None
            if total is not None and have < total:  # closed early without an error
                if retry(f"got {have} of {total} bytes, resuming"):
                    continue
                raise FetchError(f"{url}: incomplete ({have} of {total} bytes); run again to "
                                 f"resume from {part}")
        digest = h.hexdigest()
        if expected_sha256 and digest != expected_sha256:
            part.unlink(missing_ok=True)
            if resp is None and not restarted:  # a stale whole .part: fetch it once afresh
                restarted = True
                continue
            raise FetchError(f"{dest.name}: sha256 {digest} does not match the manifest's "
                             f"{expected_sha256}; the download was deleted, nothing installed")
        if magic:
            with open(part, "rb") as fh:
                head = fh.read(len(magic))
            if head != magic:
                part.unlink(missing_ok=True)
                raise FetchError(f"{dest.name}: the download does not start with {magic!r} "
                                 f"(got {head!r}: an error page from a proxy?); deleted, "
                                 "nothing installed")
        move_into_place(part, dest)
        return digest


class _PartFile:
    """A download's ``NAME.part``, appended to as bytes arrive (the one file of localeval
    written outside ``localeval.output``: raw bytes that a resumed download continues,
    not text lines). Unbuffered, so what ``append`` returned from is on disk and a resume
    starts after it; a fault writing (a full disk) is ``output.cannot_write`` naming the
    file (exit 2), the bytes before it kept for the next run to resume from."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._f = open(path, "ab", buffering=0)
        except OSError as e:
            raise cannot_write(path, e) from None

    def __enter__(self) -> _PartFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()  # unbuffered: nothing left to flush that could fail here

    def append(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:  # a raw write may take part of it (a disk filling up)
                view = view[self._f.write(view):]
        except OSError as e:
            raise cannot_write(self.path, e, "run again to resume from what it holds") \
                from None


# -- models -------------------------------------------------------------------------------
def _wanted(manifest: Manifest, names: Sequence[str]) -> list[ModelEntry]:
    """Manifest entries for ``names`` ('default' = the default judge and embedder)."""
    wanted: list[ModelEntry] = []
    for name in names:
        found = [x for x in ((manifest.default("judge"), manifest.default("embedder"))
                             if name.lower() == "default" else (manifest.find(name),)) if x]
        if not found:
            raise ManifestError(f"unknown model '{name}'; known: {', '.join(manifest.names())}")
        wanted += [x for x in found if x not in wanted]
    return wanted


def _install_entry(entry: ModelEntry, to: Path, lock: Lock, base: str | None, *, force: bool,
                   **dl: Any) -> int:
    """Download every missing or damaged file of ``entry``; returns how many failed."""
    failures = 0
    for spec in entry.file_specs():
        dest = entry.file_path(spec, to)
        url = spec.url
        if base:  # a mirror: the file itself for a judge, the folder's base URL for an embedder
            url = base if entry.kind == "judge" else \
                base.rstrip("/") + "/" + spec.rel.split("/", 1)[1]
        if not url:
            why = "no URL in the manifest" if entry.fetchable() else entry.restore_hint(to)
            print(printable(f"  {spec.rel}: FAILED: {why}"), file=sys.stderr)
            failures += 1
            continue
        if dest.exists() and not force:
            rec = lock.valid(dest, to)
            digest = rec.sha256 if rec else file_sha256(dest, fresh=True)
            if not spec.sha256 or digest == spec.sha256:
                lock.record(dest, to, name=entry.name, sha256=digest,
                            how=rec.how if rec else "verify",
                            matches_manifest=(digest == spec.sha256) if spec.sha256 else None,
                            url=rec.url if rec else url,
                            fetched_at=rec.fetched_at if rec else "")
                print(printable(f"  {spec.rel}: already present"))
                continue
            print(printable(f"  {spec.rel}: present but its sha256 does not match; downloading again"))
        try:
            digest = download(url, dest, expected_sha256=spec.sha256,
                              expected_size=0 if spec.size_approx else spec.size_bytes,
                              magic=b"GGUF" if dest.suffix == ".gguf" else b"", **dl)
        except NoNetwork:
            raise
        except FetchError as e:
            print(printable(f"  {spec.rel}: FAILED: {e}"), file=sys.stderr)
            failures += 1
            continue
        lock.record(dest, to, name=entry.name, sha256=digest, how="fetch",
                    matches_manifest=(digest == spec.sha256) if spec.sha256 else None, url=url)
        lock.save()  # after each file, so an interrupted run keeps what it finished
        note = ("sha256 matches the manifest" if spec.sha256 else
                "no published hash in manifest: recorded local hash")
        print(printable(f"  {spec.rel}: done ({note})"))
    return failures


def fetch_models(names: Sequence[str], to: Path, *, manifest: Path | None = None,
                 overrides: dict[str, str] | None = None, force: bool = False,
                 **dl: Any) -> int:
    """Install the named manifest models into ``to``; returns the number of files that failed.

    ``dl``: ``download`` options (retries, retry_wait, timeout, progress).
    Raises ManifestError for an unknown name or an unreadable manifest or lock.
    """
    found = load_manifest(to, shipped=manifest)
    lock = Lock.load(to)
    before = dict(lock.records)
    failures = 0
    for entry in _wanted(found, names):
        size, approx = entry.expected_size()
        print(printable(f"{entry.name}: {len(entry.file_specs())} file(s), {human_size(size, approx)}"
              f" -> {entry.root(to)}"))
        if entry.path:  # registered where it is: nothing to download, but it must be there
            if entry.root(to).exists():
                print(printable(f"  skipped: registered from {entry.path} (local.toml), nothing to "
                      "download"))
            else:
                print(printable(f"  FAILED: {entry.restore_hint(to)}"), file=sys.stderr)
                failures += 1
            continue
        failures += _install_entry(entry, to, lock, (overrides or {}).get(entry.name.lower()),
                                   force=force, **dl)
    if lock.records != before:  # a fetch that installed nothing writes no lock
        lock.save()
    return failures


# -- the command (shared by `localeval models fetch` and scripts/fetch_models.py) -----------
def _overrides(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, url = item.partition("=")
        if not sep or not name or not url:
            raise ManifestError(f"--url-override wants NAME=URL, got {item!r}")
        out[name.strip().lower()] = url.strip()
    return out


def fetch_main(args: argparse.Namespace, to: Path, prog: str) -> int:
    """Run a parsed fetch command: 0 all installed, 2 usage, 3 a file not installed."""
    try:
        failures = fetch_models(
            args.names, to, manifest=args.manifest, overrides=_overrides(args.url_override),
            force=args.force, retries=args.retries, retry_wait=args.retry_wait,
            timeout=args.timeout,
            progress={"always": True, "never": False}.get(args.progress, sys.stderr.isatty()))
    except ManifestError as e:
        print(printable(f"{prog}: error: {e}"), file=sys.stderr)
        return 2
    except NoNetwork as e:
        print(printable(f"{prog}: error: {e}"), file=sys.stderr)
        return 3
    except OutputError as e:  # the models folder cannot be written: the user's to fix
        print(printable(f"{prog}: error: {e}"), file=sys.stderr)
        return 2
    if failures:
        print(printable(f"{prog}: error: {failures} file(s) not installed"), file=sys.stderr)
        return 3
    print(printable(f"done. Copy {to} to the air-gapped machine and run `localeval models verify` there."))
    return 0
