#!/usr/bin/env python3
"""Download localeval's models on a machine WITH internet, for copying to an air-gapped one.

    python scripts/fetch_models.py qwen2.5-7b-instruct-q4_k_m multilingual-e5-base --to models/
    python scripts/fetch_models.py --list

Reads models/manifest.toml (and models/local.toml), downloads each file over
HTTP(S) with the standard library, resumes a broken download from its
``.part`` file with a Range request, checks the sha256 when the manifest has
one (a wrong file is deleted, never installed: exit 3), and records every
installed file's sha256/size/mtime in ``models.lock.json``. Copy the whole
folder (lock included) to the air-gapped machine and run
``localeval models verify`` there.

Needs Python 3.11+ only (rich or tqdm draw a progress bar when installed): from
this checkout it imports only the standard-library part of localeval (the
catalog's manifest, lock and file hash), so localeval's own dependencies need
not be installed here. localeval itself never downloads anything.

Hugging Face token: set HF_TOKEN for gated repositories; it is sent to
huggingface.co only, never to the CDN a download redirects to.

Exit codes: 0 all installed; 2 usage (unknown name, bad option); 3 a file
failed its hash or could not be downloaded.
"""

from __future__ import annotations

import argparse
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
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
CHUNK = 1024 * 1024
USER_AGENT = "localeval-fetch_models/1"


# The checkout's localeval, not another installed copy. These modules and the
# package faces they pass through use the standard library only (a test checks it).
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from localeval.catalog.entry import ManifestError, human_size  # noqa: E402
from localeval.catalog.hashing import CHUNK_BYTES, file_sha256  # noqa: E402
from localeval.catalog.lock import Lock  # noqa: E402
from localeval.catalog.manifest import load_manifest  # noqa: E402


class FetchError(Exception):
    """A file could not be installed; the message says why."""


# -- progress -----------------------------------------------------------------------
class _Bar:
    """rich, else tqdm, else nothing; only on a terminal unless forced."""

    def __init__(self, name: str, total: int | None, done: int, enabled: bool) -> None:
        self._rich = self._tqdm = None
        if not enabled:
            return
        try:
            from rich.console import Console
            from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                                       TimeRemainingColumn, TransferSpeedColumn)

            self._rich = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                  DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                                  console=Console(stderr=True))
            self._rich.start()
            self._task = self._rich.add_task(name, total=total, completed=done)
            return
        except ImportError:
            pass
        try:
            from tqdm import tqdm

            self._tqdm = tqdm(total=total, initial=done, unit="B", unit_scale=True, desc=name,
                              file=sys.stderr)
        except ImportError:
            pass

    def set_total(self, total: int | None) -> None:
        if self._rich is not None:
            self._rich.update(self._task, total=total)
        elif self._tqdm is not None:
            self._tqdm.total = total

    def advance(self, n: int) -> None:
        if self._rich is not None:
            self._rich.advance(self._task, n)
        elif self._tqdm is not None:
            self._tqdm.update(n)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
        elif self._tqdm is not None:
            self._tqdm.close()


# -- HTTP ---------------------------------------------------------------------------------
class _NoAuthAcrossHosts(urllib.request.HTTPRedirectHandler):
    """Follow redirects, but never carry the Authorization header to another host."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[override]
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
    dest.parent.mkdir(parents=True, exist_ok=True)
    attempt = 0
    restarted = False
    while True:
        h = hashlib.sha256()
        have = _hash_existing(part, h) if part.exists() else 0
        try:
            resp = _OPENER.open(_request(url, have), timeout=timeout)
        except urllib.error.HTTPError as e:
            if e.code == 416 and have:  # asked past the end: the .part is already whole
                resp = None
            elif e.code in (401, 403):
                raise FetchError(f"{url}: HTTP {e.code} (gated or private repository? accept "
                                 "its licence on huggingface.co and set HF_TOKEN)") from None
            elif e.code == 404:
                raise FetchError(f"{url}: HTTP 404 (file or revision no longer published; "
                                 "see hash_source in the manifest)") from None
            elif attempt < retries and e.code >= 500:
                attempt += 1
                log(f"  {dest.name}: HTTP {e.code}, retrying ({attempt}/{retries})")
                time.sleep(retry_wait * attempt)
                continue
            else:
                raise FetchError(f"{url}: HTTP {e.code} {e.reason}") from None
        except (urllib.error.URLError, OSError) as e:
            if attempt < retries:
                attempt += 1
                log(f"  {dest.name}: {getattr(e, 'reason', e)}, retrying ({attempt}/{retries})")
                time.sleep(retry_wait * attempt)
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
                        raise FetchError(f"{url}: server resumed at byte {start}, "
                                         f"not {have}")
                    total = total_cr or total
                length = resp.headers.get("Content-Length")
                if status == 200 and length and length.isdigit():
                    total = int(length)
                if have:
                    log(f"  {dest.name}: resuming at {human_size(have)}")
                bar = _Bar(dest.name, total, have, progress)
                try:
                    with open(part, "ab") as out:
                        while chunk := resp.read(CHUNK):
                            out.write(chunk)
                            h.update(chunk)
                            have += len(chunk)
                            bar.advance(len(chunk))
                except (OSError, http.client.HTTPException, socket.timeout) as e:
                    bar.close()
                    if attempt < retries:
                        attempt += 1
                        log(f"  {dest.name}: connection broke at {human_size(have)} "
                            f"({e.__class__.__name__}), resuming ({attempt}/{retries})")
                        time.sleep(retry_wait * attempt)
                        continue
                    raise FetchError(f"{url}: connection broke at byte {have}; run again to "
                                     f"resume from {part}") from None
                bar.close()
            if total is not None and have < total:  # closed early without an error
                if attempt < retries:
                    attempt += 1
                    log(f"  {dest.name}: got {have} of {total} bytes, resuming "
                        f"({attempt}/{retries})")
                    time.sleep(retry_wait * attempt)
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
        os.replace(part, dest)
        return digest


# -- the command --------------------------------------------------------------------------
def _parse_overrides(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, url = item.partition("=")
        if not sep or not name or not url:
            raise SystemExit(f"fetch_models: --url-override wants NAME=URL, got {item!r}")
        out[name.strip().lower()] = url.strip()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="fetch_models.py",
        description="Download localeval models on a connected machine (see docs/air-gap.md).")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="model names from the manifest ('default' = the default judge and "
                        "embedder)")
    p.add_argument("--to", type=Path, default=ROOT / "models",
                   help="target folder (default: the checkout's models/)")
    p.add_argument("--manifest", type=Path, default=None,
                   help="manifest to read (default: TO/manifest.toml, else the checkout's)")
    p.add_argument("--url-override", action="append", default=[], metavar="NAME=URL",
                   help="download NAME from URL instead (a mirror; for embedders the folder's "
                        "base URL). Repeatable")
    p.add_argument("--force", action="store_true", help="download again even if present")
    p.add_argument("--retries", type=int, default=5, help="resume attempts per file "
                                                          "(default: %(default)s)")
    p.add_argument("--retry-wait", type=float, default=2.0, help=argparse.SUPPRESS)
    p.add_argument("--timeout", type=float, default=60.0, help="socket timeout in seconds")
    p.add_argument("--list", action="store_true", help="list the manifest's models and exit")
    p.add_argument("--progress", choices=["auto", "always", "never"], default="auto")
    args = p.parse_args(argv)

    to: Path = args.to
    try:
        manifest = load_manifest(to, shipped=args.manifest)
        lock = Lock.load(to)
    except ManifestError as e:
        print(f"fetch_models: {e}", file=sys.stderr)
        return 2
    if args.list or not args.names:
        for e in manifest:
            size, approx = e.expected_size()
            flag = " (default)" if e.default else ""
            print(f"{e.name:34} {e.kind:9} {human_size(size, approx):>10}  {e.licence}{flag}")
        return 0 if args.list else 2
    overrides = _parse_overrides(args.url_override)
    wanted: list[Any] = []
    for name in args.names:
        found = ([x for x in (manifest.default("judge"), manifest.default("embedder")) if x]
                 if name.lower() == "default" else [manifest.find(name)])
        if not found or found[0] is None:
            print(f"fetch_models: unknown model '{name}'; known: "
                  f"{', '.join(manifest.names())}", file=sys.stderr)
            return 2
        wanted += [x for x in found if x not in wanted]

    progress = {"always": True, "never": False}.get(args.progress, sys.stderr.isatty())
    failures = 0
    for entry in wanted:
        base = overrides.get(entry.name.lower())
        size, approx = entry.expected_size()
        print(f"{entry.name}: {len(entry.file_specs())} file(s), {human_size(size, approx)}"
              f" -> {entry.root(to)}")
        if entry.path:
            print(f"  skipped: registered from {entry.path} (local.toml), nothing to download")
            continue
        for spec in entry.file_specs():
            dest = entry.file_path(spec, to)
            url = spec.url
            if base:
                url = base if entry.kind == "judge" else base.rstrip("/") + "/" + \
                    spec.rel.split("/", 1)[1]
            if not url:
                print(f"  {spec.rel}: no URL in the manifest; skipped", file=sys.stderr)
                failures += 1
                continue
            if dest.exists() and not args.force:
                rec = lock.valid(dest, to)
                digest = rec.sha256 if rec else file_sha256(dest, fresh=True)
                if not spec.sha256 or digest == spec.sha256:
                    lock.record(dest, to, name=entry.name, sha256=digest,
                                how=rec.how if rec else "verify",
                                matches_manifest=(digest == spec.sha256) if spec.sha256 else None,
                                url=rec.url if rec else url,
                                fetched_at=rec.fetched_at if rec else "")
                    print(f"  {spec.rel}: already present")
                    continue
                print(f"  {spec.rel}: present but its sha256 does not match; downloading again")
            try:
                digest = download(url, dest, expected_sha256=spec.sha256,
                                  expected_size=0 if spec.size_approx else spec.size_bytes,
                                  magic=b"GGUF" if dest.suffix == ".gguf" else b"",
                                  retries=args.retries, retry_wait=args.retry_wait,
                                  timeout=args.timeout, progress=progress)
            except FetchError as e:
                print(f"  {spec.rel}: FAILED: {e}", file=sys.stderr)
                failures += 1
                continue
            lock.record(dest, to, name=entry.name, sha256=digest, how="fetch",
                        matches_manifest=(digest == spec.sha256) if spec.sha256 else None,
                        url=url)
            lock.save()  # after each file, so an interrupted run keeps what it finished
            note = ("sha256 matches the manifest" if spec.sha256 else
                    "no published hash in manifest: recorded local hash")
            print(f"  {spec.rel}: done ({note})")
    lock.save()
    if failures:
        print(f"fetch_models: {failures} file(s) not installed", file=sys.stderr)
        return 3
    print(f"done. Copy {to} to the air-gapped machine and run `localeval models verify` there.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
