"""Prepare what the GPU check carries to a bare GPU machine that has no network.

    python scripts/gpu/prepare.py [--dest .gpu] [--sdist PATH]

Writes into ``--dest`` (ignored by git, carried with the working tree):

- the llama-cpp-python source archive of the version this checkout supports,
  pruned to what a CUDA build needs: the published sdist is 77 MB, over the
  64 MiB a call may carry, because it ships llama.cpp's git objects and its
  vocabulary test models (``vendor/llama.cpp/models/*.gguf``) and op tables
  (``docs/``); without them it is about 15 MB;
- the wheels of the Python packages a localeval run imports that the GPU
  machine's image lacks (``WHEELS``: its image has torch, transformers,
  sentence-transformers, numpy, jinja2, rich and the rest), at the versions
  installed here, for CPython 3.12 on manylinux x86-64.

The GPU side, ``scripts/gpu_check.sh``, installs both and measures.
"""

from __future__ import annotations

import argparse
import fnmatch
import subprocess
import sys
import tarfile
from importlib import metadata
from pathlib import Path

#: Distributions ``localeval run`` imports (with a judge, without BLEU/ROUGE of
#: Japanese) that the GPU image does not hold; read off ``sys.modules`` after a run.
WHEELS = ("pydantic", "pydantic-core", "annotated-types", "typing-inspection",
          "diskcache", "gguf", "pysbd")

#: Members of the sdist a build never reads (patterns on the path inside the archive).
PRUNE = ("*/.git/*", "*/.git", "*/vendor/llama.cpp/models/*.gguf",
         "*/vendor/llama.cpp/docs/*", "*/vendor/llama.cpp/.github/*")

#: What one call may carry in all (the device's limit), less room for the checkout.
CARRY_LIMIT = 64 * 2**20
CHECKOUT_ROOM = 12 * 2**20


def pruned(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pat) for pat in PRUNE)


def prune_sdist(src: Path, dst: Path) -> tuple[int, int]:
    """Copy the gzip'd tar ``src`` to ``dst`` without the ``PRUNE`` members.

    Returns (members kept, members dropped). Members keep their order, names,
    modes and times, so the build sees the same tree less what it never reads.
    """
    kept = dropped = 0
    tmp = dst.with_name(dst.name + ".part")
    with tarfile.open(src, "r:gz") as tin, tarfile.open(tmp, "w:gz") as tout:
        for member in tin:
            if pruned(member.name):
                dropped += 1
                continue
            data = tin.extractfile(member) if member.isfile() else None
            tout.addfile(member, data)
            kept += 1
    tmp.replace(dst)
    return kept, dropped


def wheel_pins(names: tuple[str, ...] = WHEELS) -> list[str]:
    """``name==version`` of each distribution as installed here."""
    return [f"{n}=={metadata.version(n)}" for n in names]


def download(cmd_tail: list[str], dest: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(dest), *cmd_tail]
    subprocess.run(cmd, check=True)


def wheel_args() -> list[str]:
    plats = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64"]
    args = ["--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp"]
    for p in plats:
        args += ["--platform", p]
    return args


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", default=".gpu", type=Path)
    ap.add_argument("--sdist", type=Path, help="a downloaded llama-cpp-python sdist "
                    "(default: download the installed version's)")
    a = ap.parse_args()
    dest: Path = a.dest
    (dest / "wheels").mkdir(parents=True, exist_ok=True)
    version = metadata.version("llama-cpp-python")
    sdist = a.sdist
    if sdist is None:
        download(["--no-binary", ":all:", f"llama-cpp-python=={version}"], dest / "dl")
        sdist = next((dest / "dl").glob("llama_cpp_python-*.tar.gz"))
    out = dest / f"llama_cpp_python-{version}-pruned.tar.gz"
    kept, dropped = prune_sdist(sdist, out)
    print(f"{out}: {out.stat().st_size / 2**20:.1f} MiB ({kept} members, {dropped} pruned)")
    download(wheel_args() + wheel_pins(), dest / "wheels")
    carried = out.stat().st_size + sum(p.stat().st_size for p in (dest / "wheels").glob("*.whl"))
    print(f"carried: {carried / 2**20:.1f} MiB")
    if carried + CHECKOUT_ROOM > CARRY_LIMIT:
        print("over the carry limit with the checkout", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
