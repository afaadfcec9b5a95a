#!/usr/bin/env bash
# `make rl-bench`: asynchronous RL (issue 16, CLOSED_LOOP.md) on the push task, end to end:
#   1. a deliberately weak SFT checkpoint (push demos, 400 steps of inputs/closed_loop_gr00t.in)
#   2. throughput: sync, async_rollout, async on the same ranks, with the stage-cost model
#      (rl.cost_model = on, rl.cost_time_scale so real compute stays hidden) and raw
#   3. learning: sync and async from the SFT checkpoint, every checkpoint evaluated with
#      `embsim eval` on the eval split beside the SFT checkpoint
#   4. the GRPO recipe (inputs/rl_push_grpo.in, async) from the 600-step SFT checkpoint of a
#      1200-step run, its checkpoints evaluated the same way: issue 16's learning target
#   5. report.md (the table, the learning results) and plots
# Usage: scripts/rl_bench.sh BUILD_DIR
#   RL_BENCH_DIR        output directory (default outputs/rl_bench; emptied first)
#   NP                  ranks (default 8 = inputs/rl_push.in's 4 simulators, 2 generators, 2 trainers)
#   THROUGHPUT_UPDATES  updates of each throughput run (default 4: 32 rounds of 32 environments)
#   LEARN_UPDATES       updates of each learning run (default 100), checkpoints every LEARN_UPDATES/5
#   GRPO_UPDATES        updates of the GRPO run (default: the deck's 100, about 670k env steps), checkpoints
#                       every GRPO_UPDATES/5
#   EVAL_EPISODES       evaluation episodes per checkpoint of the GAE runs (default 100)
#   GRPO_EVAL_EPISODES  evaluation episodes per checkpoint of the GRPO run and its SFT start (default 400:
#                       the learning target is judged on them; 100 episodes are +-9 points at 95%)
#   TIME_SCALE          rl.cost_time_scale of the modelled runs (default 40: no stage overruns here)
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
source scripts/mpi_env.sh
root=${RL_BENCH_DIR:-outputs/rl_bench}
np=${NP:-8}
throughput_updates=${THROUGHPUT_UPDATES:-4}
learn_updates=${LEARN_UPDATES:-100}
grpo_updates=${GRPO_UPDATES:-100}
episodes=${EVAL_EPISODES:-100}
grpo_episodes=${GRPO_EVAL_EPISODES:-400}
scale=${TIME_SCALE:-40}
deck=inputs/rl_push.in
# Every rank one thread: the groups share the machine's cores.
run() { mpirun -np "$1" --oversubscribe -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "${@:2}"; }
# A checkpoint (or every checkpoint of a directory) on the eval split, seed 2: TARGET EPISODES OUT.
evaluate() { run 2 "$build/embsim" eval "$1" --task push --episodes "$2" --seed 2 --videos 0 --out "$3" | grep success; }
start=$(date +%s)
rm -rf "$root"
mkdir -p "$root"

echo "== 1/5 SFT checkpoints (push demos): 400 steps (weak), the middle of a 1200-step run (600)"
run 2 "$build/embsim" collect push --episodes 150 --seed 1 -o "$root/push.h5"
sft_run() {  # NAME STEPS CKPT_EVERY
  run 2 "$build/embtrain" inputs/closed_loop_gr00t.in --set run.name="$1" --set run.output_dir="$root" \
    --set data.paths="$root/push.h5" --set train.steps="$2" --set train.ckpt_every="$3" --set train.ckpt_dir="$root/$1_ckpt"
}
sft_run sft 400 400
sft_run sft600 1200 600
sft="$root/sft_ckpt/step_00000400.h5"
sft600="$root/sft600_ckpt/step_00000600.h5"

echo "== 2/5 throughput: sync, async_rollout, async on $np ranks ($throughput_updates updates each)"
for cost in on off; do
  for mode in sync async_rollout async; do
    run "$np" "$build/embsim" rl "$deck" --set rl.init="$sft" --set rl.mode=$mode --set rl.updates="$throughput_updates" \
      --set rl.cost_model=$cost --set rl.cost_time_scale="$scale" --set run.output_dir="$root/throughput" \
      --set run.name="${mode}_cost_$cost" | grep -E "^rl done|^embsim"
  done
done

echo "== 3/5 learning: sync and async, $learn_updates updates each, evaluated on $episodes eval episodes"
evaluate "$sft" "$episodes" "$root/learn/sft_eval"
for mode in sync async; do
  run "$np" "$build/embsim" rl "$deck" --set rl.init="$sft" --set rl.mode=$mode --set rl.updates="$learn_updates" \
    --set rl.ckpt_every=$((learn_updates / 5)) --set run.output_dir="$root/learn" --set run.name="$mode" \
    | grep -E "^rl (update +[0-9]*0/|done)|^embsim"
  evaluate "$root/learn/$mode/ckpt" "$episodes" "$root/learn/${mode}_eval"
done

echo "== 4/5 learning: the GRPO recipe (inputs/rl_push_grpo.in), $grpo_updates updates from the 600-step SFT"
evaluate "$sft600" "$grpo_episodes" "$root/learn/sft600_eval"
run "$np" "$build/embsim" rl inputs/rl_push_grpo.in --set rl.init="$sft600" --set rl.updates="$grpo_updates" \
  --set rl.ckpt_every=$((grpo_updates / 5)) --set run.output_dir="$root/learn" --set run.name=grpo \
  | grep -E "^rl (update +[0-9]*0/|done)|^embsim"
evaluate "$root/learn/grpo/ckpt" "$grpo_episodes" "$root/learn/grpo_eval"

echo "== 5/5 report"
/usr/bin/python3 scripts/rl_report.py "$root" | tee "$root/report.md"
echo
echo "rl bench done in $(( $(date +%s) - start )) s: report $root/report.md, plots $root/*.png, runs in $root/throughput, $root/learn"
