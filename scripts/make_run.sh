#!/usr/bin/env bash
# `make run`: a small synthetic dataset, then a tiny model trained on NP MPI ranks.
# Usage: scripts/make_run.sh BUILD_DIR NP DECK
set -euo pipefail
build=${1:-build}
np=${2:-2}
deck=${3:-inputs/tiny_gr00t.in}
cd "$(dirname "$0")/.."
source scripts/mpi_env.sh

bash scripts/make_datasets.sh "$build"

stem=$(basename "$deck" .in)
mpirun -np "$np" --oversubscribe -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 \
  "$build/embtrain" "$deck"
run_dir=$(ls -td outputs/"$stem"-*/ | head -n 1)
run_dir=${run_dir%/}
/usr/bin/python3 scripts/plot_loss.py "$run_dir" || echo "(loss plot skipped: matplotlib missing)"
echo
echo "outputs of this run: $run_dir/"
ls -1 "$run_dir" | sed 's/^/  /'
