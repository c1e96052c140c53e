#!/usr/bin/env bash
# The GPU check: build llama-cpp-python with CUDA on a bare GPU machine with no
# network, then measure the judge, batched decoding, embeddings and checkers on
# the GPU against its CPU (scripts/gpu/measure.py says what each stage measures).
#
#   python scripts/gpu/prepare.py            # here, with network: fills .gpu/
#   bash scripts/gpu_check.sh OUT [STAGE...] # there: carry .gpu with the checkout
#
# Figures go to OUT/gpu_figures.json and OUT/gpu_figures.md (rewritten after every
# stage, so a check cut short still reports what it finished), the log to
# OUT/gpu_check.log. State kept in $GPU_WORK (default /tmp/gpucheck) lets a second
# call on the same machine skip the build and the stages already done.
# GPU_DEADLINE (seconds, default 540) ends the check before the caller's limit:
# a stage whose budget no longer fits is skipped and said so.
set -u
OUT=${1:?usage: gpu_check.sh OUT [STAGE...]}
shift
STAGES=${*:-env judge decode batched embed trace checkers}
WORK=${GPU_WORK:-/tmp/gpucheck}
DEADLINE=${GPU_DEADLINE:-540}
PY=${PYTHON:-python3}
# GPU_DEVICE=cpu GPU_SMALL=1: every stage on tiny models on the CPU (the tests' run)
DEVICE=${GPU_DEVICE:-cuda}
SMALL=${GPU_SMALL:+--small}
START=$(date +%s)
mkdir -p "$OUT" "$WORK/parts"
exec > >(tee -a "$OUT/gpu_check.log") 2>&1
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
elapsed() { echo $(( $(date +%s) - START )); }

# -- Python packages the image lacks, and this checkout ---------------------------------
if [ -z "${GPU_SKIP_WHEELS:-}" ]; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$WORK/site" .gpu/wheels/*.whl || { echo "wheels failed"; exit 3; }
fi

# -- llama-cpp-python with CUDA, for this GPU's architecture -----------------------------
if [ ! -f "$WORK/llama/llama_cpp/__init__.py" ]; then
    arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
    arch=${arch:-90}
    echo "building llama-cpp-python for sm_$arch at $(elapsed) s"
    rm -rf "$WORK/src" && mkdir -p "$WORK/src"
    tar xzf .gpu/llama_cpp_python-*-pruned.tar.gz -C "$WORK/src"
    t0=$(date +%s)
    # FlashAttention kernels for the f16 KV cache only (localeval's): the other
    # cache types' instances would double the build for no judge that uses them.
    CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$arch -DLLAVA_BUILD=off \
-DGGML_CUDA_NCCL=off -DGGML_CUDA_FA_QUANTS=f16-f16" \
    CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
    timeout $(( DEADLINE - $(elapsed) - 60 )) "$PY" -m pip install --no-deps \
        --no-build-isolation --no-index --no-cache-dir --target "$WORK/llama" \
        "$WORK"/src/llama_cpp_python-* > "$WORK/build.log" 2>&1
    rc=$?
    tail -5 "$WORK/build.log"
    build_s=$(( $(date +%s) - t0 ))
    echo "build exited $rc after $build_s s"
    printf '{"stage": "build", "title": "The CUDA build", "seconds": %s, "rows": [{"what": "pip install (CUDA, sm_%s, %s cores)", "value": %s, "unit": "s", "note": "exit %s"}]}\n' \
        "$build_s" "$arch" "$(nproc)" "$build_s" "$rc" > "$WORK/parts/build.json"
    [ $rc -eq 0 ] || { "$PY" scripts/gpu/figures.py "$WORK/parts" "$OUT"; grep -iE "error|fatal" "$WORK/build.log" | head -20; exit 3; }
fi
export PYTHONPATH="$PWD:$WORK/llama:$WORK/site"

# -- the stages, each under the time that is left ---------------------------------------
budget() { case $1 in env) echo 30;; judge) echo 120;; decode) echo 120;; batched) echo 180;;
           embed) echo 90;; trace) echo 60;; checkers) echo 200;; *) echo 120;; esac; }
for stage in $STAGES; do
    if [ -f "$WORK/parts/$stage.json" ] && ! grep -q '"error"' "$WORK/parts/$stage.json"; then
        echo "stage $stage: done in an earlier call"; continue
    fi
    left=$(( DEADLINE - $(elapsed) ))
    need=$(budget "$stage")
    if [ "$left" -lt 20 ]; then echo "stage $stage: skipped, ${left} s left"; continue; fi
    lim=$(( need < left ? need : left ))
    echo "stage $stage at $(elapsed) s (limit $lim s)"
    rm -f "$WORK/parts/$stage.json"
    timeout "$lim" "$PY" scripts/gpu/measure.py "$stage" --work "$WORK" --parts "$WORK/parts" \
        --out "$OUT" --device "$DEVICE" --timeout "$lim" $SMALL
    rc=$?
    if [ ! -f "$WORK/parts/$stage.json" ]; then  # killed at its limit: say so in the figures
        printf '{"stage": "%s", "title": "%s", "error": "stopped at its limit of %s s (exit %s)", "rows": []}\n' \
            "$stage" "$stage" "$lim" "$rc" > "$WORK/parts/$stage.json"
    fi
done
"$PY" scripts/gpu/figures.py "$WORK/parts" "$OUT" >/dev/null
echo "gpu check ended at $(elapsed) s"
cat "$OUT/gpu_figures.md"
