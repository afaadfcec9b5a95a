#!/usr/bin/env bash
# The device check of a lent GPU (../shared/BACKENDS.md, "When a GPU is lent"), prepared so a
# session spends its few device minutes in one call of its `run` tool, from the repository root:
#   bash scripts/gpu_session.sh [MINUTES]     (default 9: leaves a 10-minute call a margin)
# Everything goes under $OUT (the run tool's folder that comes back), else outputs/gpu_session.
# The GPU machine has CUDA and PyTorch but probably no MPI or HDF5, so this builds only the
# standalone kernels/cuda (nvcc and the CUDA libraries; sm_90a only: the lent GPUs are H100 and
# H200) and runs, each step time-boxed so a slow one leaves the later ones their turn:
#   machine.txt        nvidia-smi, the driver, nvcc
#   build.log          make -C kernels/cuda (the tests and the benchmark)
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
  "${CUDA:-/usr/local/cuda}/bin/nvcc" --version
  nproc
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

arch="-gencode=arch=compute_90a,code=sm_90a"
step build 60 "$out/build.log" make -C kernels/cuda -j"$(nproc)" BUILD="$build" ARCH="$arch" \
  "$build/test_kernels" "$build/bench_kernels" || { tail -20 "$out/build.log"; exit 1; }
step test_kernels 25 "$out/test_kernels.log" "$build/test_kernels"
grep -E "FAIL|passed|failed" "$out/test_kernels.log" | tail -5
sanitizer=$(command -v compute-sanitizer || echo "${CUDA:-/usr/local/cuda}/bin/compute-sanitizer")
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
