#!/usr/bin/env bash
# `make closed-loop`: collect expert demonstrations in simulation, train a small gr00t action
# head on them, evaluate it in closed loop beside the expert and two baselines, and print
# where the report is (CLOSED_LOOP.md). Usage: scripts/closed_loop.sh BUILD_DIR NP
#   CLOSED_LOOP_DIR   where everything goes (default outputs/closed_loop; emptied first)
#   EPISODES          evaluation episodes per task and checkpoint (default 40)
set -euo pipefail
build=${1:-build}
np=${2:-2}
cd "$(dirname "$0")/.."
source scripts/mpi_env.sh
root=${CLOSED_LOOP_DIR:-outputs/closed_loop}
episodes=${EPISODES:-40}
deck=inputs/closed_loop_gr00t.in
run() { mpirun -np "$np" --oversubscribe -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$@"; }
start=$(date +%s)
rm -rf "$root"
mkdir -p "$root/data"

echo "== 1/4 expert demonstrations (collect seed 1)"
declare -A demos=([reach]=100 [push]=150 [pick_place]=60)
for task in reach push pick_place; do
  run "$build/embsim" collect "$task" --episodes "${demos[$task]}" --seed 1 -o "$root/data/$task.h5"
done

echo "== 2/4 training $deck"
run "$build/embtrain" "$deck" --set run.name=closed_loop_train --set run.output_dir="$root" \
  --set data.paths="$root/data/reach.h5,$root/data/push.h5,$root/data/pick_place.h5" \
  --set train.ckpt_dir="$root/ckpt"
/usr/bin/python3 scripts/plot_loss.py "$root/closed_loop_train" || echo "(loss plot skipped)"

echo "== 3/4 closed-loop evaluation of every checkpoint (eval seed 2, $episodes episodes per task)"
run "$build/embsim" eval "$root/closed_loop_train" --task all --episodes "$episodes" --seed 2 --out "$root/eval"
for baseline in expert zero random; do
  run "$build/embsim" eval "$baseline" --task all --episodes "$episodes" --seed 2 --videos 0 --out "$root/eval_$baseline"
done

echo "== 4/4 report"
/usr/bin/python3 scripts/closed_loop_report.py "$root" | tee "$root/report.md"
echo
echo "closed loop done in $(( $(date +%s) - start )) s: report $root/report.md, success plot $root/eval/success_vs_step.png,"
echo "rollout videos in $root/eval/videos/, eval.json files in $root/eval*/"
