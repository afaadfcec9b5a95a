#!/usr/bin/env bash
# Weak and strong scaling of the training step on 1/2/4 CPU ranks, from the phase timers.
#   regression/run_scaling.sh [BUILD_DIR] [DECK]
# strong: fixed global batch (32 samples) on 1, 2, 4 ranks; weak: 8 samples per rank. Ranks
# are bound to cores (two per core at 4 ranks here), as a launcher binds one rank per GPU.
# Writes outputs/bench/scaling.json and scaling.png (per-phase times and samples/s).
set -euo pipefail
build=${1:-build}
deck=${2:-inputs/tiny_gr00t.in}
cd "$(dirname "$0")/.."
bash scripts/make_datasets.sh "$build"
mkdir -p outputs/bench
source scripts/mpi_env.sh
runs=()
for kind in strong weak; do
  for np in 1 2 4; do
    batch=$([ $kind = strong ] && echo 32 || echo $((8 * np)))
    name="scaling-$kind-np$np"
    rm -rf "outputs/$name"
    mpirun -np "$np" --oversubscribe --bind-to core:overload-allowed -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 \
      "$build/embtrain" "$deck" \
      --set run.name="$name" --set train.steps=40 --set train.global_batch="$batch" --set train.shard=full \
      --set train.warmup_steps=5 --set run.log_every=20 >/dev/null
    runs+=("$kind:$np:outputs/$name/summary.json")
  done
done
/usr/bin/python3 regression/summarize_scaling.py outputs/bench/scaling "${runs[@]}"
