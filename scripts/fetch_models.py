#!/usr/bin/env python3
"""Download localeval's models on a machine WITH internet, for copying to an air-gapped one.

    python scripts/fetch_models.py qwen2.5-7b-instruct-q4_k_m multilingual-e5-base --to models/
    python scripts/fetch_models.py --list

The same command as ``localeval models fetch`` (one implementation:
``localeval/catalog/fetch.py``), for a connected machine that has this checkout
but not localeval installed. Reads the manifest shipped in the package
(``localeval/catalog/manifest.toml``, or ``TO/manifest.toml`` when present) and
``TO/local.toml``, downloads each file over HTTP(S), resumes a broken download
from its ``.part`` file, checks the sha256 when the manifest has one (a wrong
file is deleted, never installed: exit 3), and records every installed file in
``models.lock.json``. Copy the whole folder (lock included) to the air-gapped
machine and run ``localeval models verify`` there.

Needs Python 3.11+ only (rich or tqdm draw a progress bar when installed): it
imports only the standard-library part of this checkout's localeval (the
catalog's manifest, lock, file hash and fetch modules; a test runs it with
``python -S``), so localeval's own dependencies need not be installed here.
localeval itself downloads nothing except through ``localeval models fetch``.

Exit codes: 0 all installed; 2 usage (unknown name, bad option); 3 a file
failed its hash or could not be downloaded.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The checkout's localeval, not another installed copy. These modules and the
# package faces they pass through use the standard library only (a test checks it).
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from localeval.catalog.entry import ManifestError, human_size  # noqa: E402
from localeval.catalog.args import add_fetch_arguments  # noqa: E402
from localeval.catalog.fetch import FetchError, download, fetch_main  # noqa: E402,F401
from localeval.catalog.manifest import load_manifest  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="fetch_models.py",
        description="Download localeval models on a connected machine (see docs/air-gap.md). "
                    "Same as `localeval models fetch` where localeval is installed.")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="model names from the manifest ('default' = the default judge and "
                        "embedder)")
    p.add_argument("--to", type=Path, default=ROOT / "models",
                   help="target folder (default: the checkout's models/)")
    p.add_argument("--list", action="store_true", help="list the manifest's models and exit")
    add_fetch_arguments(p)
    args = p.parse_args(argv)
    if args.list or not args.names:
        try:
            manifest = load_manifest(args.to, shipped=args.manifest)
        except ManifestError as e:
            print(f"fetch_models: {e}", file=sys.stderr)
            return 2
        for e in manifest:
            size, approx = e.expected_size()
            flag = " (default)" if e.default else ""
            print(f"{e.name:34} {e.kind:9} {human_size(size, approx):>10}  {e.licence}{flag}")
        return 0 if args.list else 2
    return fetch_main(args, args.to, "fetch_models")


if __name__ == "__main__":
    sys.exit(main())
