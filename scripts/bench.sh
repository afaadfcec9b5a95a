#!/usr/bin/env bash
# `make bench`: every benchmark, results as JSON under outputs/bench/. Speed targets are
# checked here, never in unit tests. Thread settings are recorded in each JSON; this
# environment sets OPENBLAS_CORETYPE=Haswell (MACHINE.md), and PyTorch baselines run under
# the same setting.
#   scripts/bench.sh [BUILD_DIR]
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
mkdir -p outputs/bench
source scripts/mpi_env.sh
failed=()
run() {
  local name=$1
  shift
  echo "== $name: $*"
  "$@" || failed+=("$name")
}
run kernels env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$build/tests/kernels/bench_kernels"
run model_step env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 tests/model/bench_torch_step.py \
  --bench "$build/tests/model/bench_model_step"
# GR00T-N1.5's Eagle backbone at the released dimensions, CPU float32, against PyTorch 1.13 in
# one process on the same 2 threads (target: >= 2x; tests/encoders/bench_eagle_torch.py).
run eagle_backbone env OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 /usr/bin/python3 tests/encoders/bench_eagle_torch.py \
  --bench "$build/tests/encoders/bench_eagle_backbone"
# DreamZero's frozen encoders at the released dimensions, CPU float32, against PyTorch 1.13 in
# one process on the same 2 threads, back to back: Wan2.1 VAE frames/s (5 frames of a 176x320
# DROID tile), umT5-XXL tokens/s (2 of the 24 real-size blocks: all 24 do not fit here in fp32)
# and CLIP ViT-H/14 images/s (4 of its 31 blocks); target >= 2x (tests/encoders/bench_dreamzero_torch.py).
run dreamzero_encoders env OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 /usr/bin/python3 \
  tests/encoders/bench_dreamzero_torch.py --bench "$build/tests/encoders/bench_dreamzero_encoders"
run comm_overlap mpirun -np 2 --oversubscribe -x OPENBLAS_NUM_THREADS=1 "$build/tests/comm/bench_comm_overlap"
run data_loader bash tests/data/run_data_bench.sh "$build"
run lerobot_video_seek bash tests/data/run_video_seek_bench.sh "$build"
run zero3_overlap bash regression/bench_zero3_overlap.sh "$build"
run scaling bash regression/run_scaling.sh "$build"
run headline_ratios bash regression/bench_headline.sh "$build"
if [ -x "$build/tests/kernels/cuda/cuda_bench_kernels" ]; then
  run cuda_kernels "$build/tests/kernels/cuda/cuda_bench_kernels"
fi
echo
ls -1 outputs/bench/*.json
if [ ${#failed[@]} -gt 0 ]; then
  echo "benchmarks that failed: ${failed[*]}" >&2
  exit 1
fi
