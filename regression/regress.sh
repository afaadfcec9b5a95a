#!/usr/bin/env bash
# `make regress`: the scaling sweep (run_scaling.sh), the tiny 2-rank reference run, collected
# into outputs/bench/regression.json and compared with this machine kind's baseline
# (regression/baselines/$EMBTRAIN_MACHINE.json, default cpu_dev); exits non-zero on a slowdown
# beyond the baseline's tolerances.
#   regression/regress.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
machine=${EMBTRAIN_MACHINE:-cpu_dev}
cd "$(dirname "$0")/.."
bash regression/run_scaling.sh "$build"
source scripts/mpi_env.sh
rm -rf outputs/regress-tiny
mpirun --oversubscribe -np 2 --bind-to core:overload-allowed -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 \
  "$build/embtrain" inputs/tiny_gr00t.in --set train.steps=40 --set train.global_batch=16 --set run.log_every=40 \
  --set run.name=regress-tiny >/dev/null
/usr/bin/python3 regression/collect.py outputs/bench/regression.json "$machine" \
  --run tiny=outputs/regress-tiny/summary.json --scaling outputs/bench/scaling.json
regression/compare "regression/baselines/$machine.json" outputs/bench/regression.json
