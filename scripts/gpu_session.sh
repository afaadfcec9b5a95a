#!/usr/bin/env bash
# The device check of a lent GPU (../shared/BACKENDS.md, "When a GPU is lent"), prepared so a
# session spends its few device minutes in one call of its `run` tool, from the repository root:
#   bash scripts/gpu_session.sh prebuild      here, before the call (no GPU needed): builds the
#                                             test and benchmark into gpu_prebuilt/ (git-ignored)
#   bash scripts/gpu_session.sh [MINUTES]     on the GPU machine (default 9: leaves a 10-minute
#                                             call a margin); run tool: carry ["gpu_prebuilt"]
# Prebuilt binaries save the build's minutes of device time; they are used only when they were
# built from the same kernel sources (a hash of them) and every library they need resolves,
# else the script builds. Everything goes under $OUT (the run tool's folder that comes back),
# else outputs/gpu_session.
# The GPU machine has CUDA and PyTorch but probably no MPI or HDF5, so this builds only the
# standalone kernels/cuda and its tests/kernels/cuda (nvcc and the CUDA libraries; sm_90a only:
# the lent GPUs are H100 and H200; cuDNN from the toolkit, else from PyTorch's pip wheel
# nvidia-cudnn-cu13) and runs, each step time-boxed so a slow one leaves the later ones their turn:
#   machine.txt        nvidia-smi, the driver, nvcc, cuDNN, which binaries
#   build.log          make -C kernels/cuda (the tests and the benchmark), unless prebuilt
#   test_kernels.log   every kernel against its CPU reference on the GPU
#   sanitizer_*.log    compute-sanitizer memcheck, racecheck, synccheck on a cheap subset
#   cuda_kernels.json  bench_kernels: TFLOP/s and GB/s per kernel and shape, cuDNN's SDPA (forward,
#                      backward, both; checked against ours first) and cuBLASLt beside them on
#                      the same GPU (bench.log: its output); cuda_kernels_without_wgmma.json
#                      when the first run failed (EMBTRAIN_CUDA_WGMMA=0)
#   summary.txt        each step's exit status and seconds
# Then copy cuda_kernels.json to regression/ and every figure, with the GPU's name, into the
# closing note and kernels/cuda/README.md's table.
set -uo pipefail
cuda=${CUDA:-/usr/local/cuda}
arch="-gencode=arch=compute_90a,code=sm_90a"
prebuilt=gpu_prebuilt
binaries=(test_kernels bench_kernels)

# What the binaries are built from: the Makefile's sources and headers.
sources_hash() {
  cat kernels/cuda/Makefile kernels/cuda/*.cu kernels/cuda/*.cuh kernels/cuda/*.hpp kernels/*.hpp kernels/*.cpp \
    tests/kernels/cuda/*.cu tests/kernels/cuda/*.hpp src/core/*.hpp src/core/activity.cpp tests/error_of.hpp |
    sha256sum | cut -d' ' -f1
}

# cuDNN: the toolkit's, else the pip wheel's (include/, lib/) of the python3 that has PyTorch.
if [ -z "${CUDNN:-}" ] && [ ! -f "$cuda/include/cudnn.h" ]; then
  CUDNN=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null || true)
fi
if [ -n "${CUDNN:-}" ]; then
  export CUDNN
  export LD_LIBRARY_PATH="$CUDNN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

if [ "${1:-}" = prebuild ]; then
  objects=build-gpu-prebuild  # git-ignored (/build*/); kept for the next prebuild
  make -C kernels/cuda -j"$(nproc)" BUILD="../../$objects" ARCH="$arch" "${binaries[@]/#/../../$objects/}" || exit 1
  mkdir -p "$prebuilt"
  for b in "${binaries[@]}"; do cp "$objects/$b" "$prebuilt/$b"; done
  sources_hash >"$prebuilt/sources.sha256"
  du -sh "$prebuilt"
  echo "prebuilt: carry [\"$prebuilt\"] in the run tool's call"
  exit 0
fi

minutes=${1:-9}
out=${OUT:-outputs/gpu_session}
mkdir -p "$out"
deadline=$(( $(date +%s) + minutes * 60 ))
build=/tmp/emb_kernels_cuda
summary="$out/summary.txt"
: >"$summary"

# step NAME SHARE LOG COMMAND...: runs COMMAND into LOG for at most SHARE of the time left.
step() {
  local name=$1 share=$2 log=$3
  shift 3
  local left=$(( deadline - $(date +%s) ))
  local limit=$(( left * share / 100 ))
  if [ "$limit" -lt 10 ]; then
    echo "$name: skipped, ${left} s left" | tee -a "$summary"
    return 1
  fi
  local start=$SECONDS
  timeout "$limit" "$@" >"$log" 2>&1
  local code=$?
  echo "$name: exit $code in $(( SECONDS - start )) s (limit $limit s)" | tee -a "$summary"
  return $code
}

{
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  "$cuda/bin/nvcc" --version
  nproc
  echo "cuDNN: ${CUDNN:-$cuda}"
} >"$out/machine.txt" 2>&1

# prebuilt_usable: the carried binaries match these sources and every library they need resolves.
prebuilt_usable() {
  [ -f "$prebuilt/sources.sha256" ] && [ "$(cat "$prebuilt/sources.sha256")" = "$(sources_hash)" ] || return 1
  local b
  for b in "${binaries[@]}"; do
    [ -x "$prebuilt/$b" ] && ! ldd "$prebuilt/$b" | grep -q "not found" || return 1
  done
}
if prebuilt_usable; then
  build=$prebuilt
  echo "binaries: prebuilt ($prebuilt, sources $(cat "$prebuilt/sources.sha256"))" >>"$out/machine.txt"
else
  echo "binaries: built here (no usable $prebuilt/)" >>"$out/machine.txt"
  step build 60 "$out/build.log" make -C kernels/cuda -j"$(nproc)" BUILD="$build" ARCH="$arch" \
    "${binaries[@]/#/$build/}" || { tail -20 "$out/build.log"; exit 1; }
fi
ldd "$build/bench_kernels" | grep -E "cudnn|cublas|cudart" >>"$out/machine.txt"
cat "$out/machine.txt"
step test_kernels 25 "$out/test_kernels.log" "$build/test_kernels"
grep -E "FAIL|passed|failed" "$out/test_kernels.log" | tail -5
sanitizer=$(command -v compute-sanitizer || echo "$cuda/bin/compute-sanitizer")
for tool in memcheck racecheck synccheck; do
  [ -x "$sanitizer" ] || { echo "sanitizer $tool: skipped, no compute-sanitizer" | tee -a "$summary"; continue; }
  # The norm kernels (shared memory, warp shuffles, the column sums' two passes), small enough
  # for the sanitizer's slowdown.
  step "sanitizer $tool" 20 "$out/sanitizer_$tool.log" "$sanitizer" --tool "$tool" --error-exitcode 3 \
    "$build/test_kernels" "norm_modulate"
done
# The JSON is rewritten after each benchmark section. Should the run fail or hang (the Hopper
# kernels' first run: a wrong setmaxnreg split or mbarrier phase hangs), what it finished stays,
# and a second run without them uses what is left.
if ! step bench 70 "$out/bench.log" "$build/bench_kernels" "$out/cuda_kernels.json"; then
  tail -5 "$out/bench.log"
  EMBTRAIN_CUDA_WGMMA=0 step "bench without wgmma" 90 "$out/bench_without_wgmma.log" "$build/bench_kernels" \
    "$out/cuda_kernels_without_wgmma.json"
fi
tail -40 "$out/bench.log"
cat "$summary"
