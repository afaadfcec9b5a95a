#!/usr/bin/env bash
# embsim rl end to end on 3 ranks (1 simulator x 2 environments, 1 generator, 1 trainer) from a
# tiny SFT checkpoint: every mode runs its updates and writes summary.json and a checkpoint, and
# so does a GRPO run (rl.advantage = grpo); the
# policy learns a reward its actions alone decide (rl.reward = action_probe); a run resumes from that checkpoint's version; a simulator that dies takes the job down with one
# line, never a hang; bad decks fail with one line naming the key or the ranks.
# Usage: embsim_rl_test.sh BUILD_DIR
set -uo pipefail
build=$1
source "$(dirname "$0")/sim_test_lib.sh"
sft_checkpoint
small=(--set rl.simulators=1 --set rl.generators=1 --set rl.trainers=1 --set rl.envs_per_simulator=2
       --set rl.update_chunks=8 --set rl.micro_chunks=4 --set rl.updates=2 --set rl.critic_warmup=1
       --set train.watchdog_s=60 --set run.output_dir="$out/runs")

for mode in sync async_rollout async; do
  timeout 300 mpirun -np 3 --oversubscribe "$build/embsim" rl inputs/rl_push.in --set rl.init="$out/sft" "${small[@]}" \
    --set rl.mode=$mode --set run.name=$mode >"$out/$mode.log" 2>&1 || fail "$mode: $(tail -5 "$out/$mode.log")"
  summary="$out/runs/$mode/summary.json"
  [ "$(json "$summary" "s['mode']")" = "$mode" ] || fail "$mode: summary mode"
  [ "$(json "$summary" "s['env_steps'] >= 16")" = True ] || fail "$mode: env steps $(json "$summary" "s['env_steps']")"
  [ "$(json "$summary" "[r['version'] for r in s['ranks'] if r['role'] == 'trainer'][0]")" = 2 ] || fail "$mode: version"
  [ "$(json "$summary" "s['trained_transitions'] + s['dropped_stale'] >= 16")" = True ] || fail "$mode: trained"
  [ -f "$out/runs/$mode/ckpt/step_00000002.h5" ] && [ -f "$out/runs/$mode/ckpt/rl_00000002.h5" ] \
    || fail "$mode: no checkpoint"
  grep -q "rl update   2/2" "$out/$mode.log" || fail "$mode: no progress line"
  echo "ok: $mode"
done

# GRPO: 2 environments reset together as one group; whole episodes reach the trainer, which
# trains on the group's advantages (no critic warm-up) and reports the uniform groups it skipped.
timeout 300 mpirun -np 3 --oversubscribe "$build/embsim" rl inputs/rl_push.in --set rl.init="$out/sft" "${small[@]}" \
  --set rl.advantage=grpo --set rl.group_size=2 --set run.name=grpo >"$out/grpo.log" 2>&1 \
  || fail "grpo: $(tail -5 "$out/grpo.log")"
summary="$out/runs/grpo/summary.json"
[ "$(json "$summary" "s['advantage']")" = grpo ] || fail "grpo: summary advantage"
[ "$(json "$summary" "s['trained_transitions'] + s['dropped_stale'] >= 16")" = True ] || fail "grpo: trained"
[ "$(json "$summary" "s['uniform_groups'] >= 0")" = True ] || fail "grpo: no uniform_groups"
echo "ok: grpo"

# The machinery learns: with rl.reward = action_probe (the chunk's mean first action, nothing
# else) the reward per chunk of the last 6 updates beats the first 6's by probe_gain. The SFT
# policy here is 2 steps old, so x0 decides most of a chunk: every denoising step stochastic
# (rl.sde_steps = all) at noise 1 makes the credited noise dominate, and lr 3e-4 makes it quick.
probe_updates=24 probe_gain=0.05
timeout 300 mpirun -np 3 --oversubscribe -x OMP_NUM_THREADS=1 "$build/embsim" rl inputs/rl_push.in --set rl.init="$out/sft" \
  "${small[@]}" --set rl.envs_per_simulator=8 --set rl.update_chunks=64 --set rl.micro_chunks=32 \
  --set rl.updates=$probe_updates --set rl.critic_warmup=2 --set rl.reward=action_probe --set rl.sde_steps=all \
  --set rl.noise_level=1 --set rl.lr=3e-4 --set run.name=probe >"$out/probe.log" 2>&1 || fail "probe: $(tail -5 "$out/probe.log")"
gain=$(json "$out/runs/probe/summary.json" \
  "round(sum(c['reward_per_chunk'] for c in s['curve'][-6:]) / 6 - sum(c['reward_per_chunk'] for c in s['curve'][:6]) / 6, 3)")
[ "$(/usr/bin/python3 -c "print($gain >= $probe_gain)")" = True ] || fail "probe: reward per chunk rose by $gain < $probe_gain"
echo "ok: probe learns (reward per chunk +$gain)"

# The rollouts' sampler evaluates too (sim.sde_noise), recorded in eval.json.
run 2 "$build/embsim" eval "$out/sft" --task push --episodes 2 --seed 2 --videos 0 --set sim.sde_noise=0.5 \
  --out "$out/eval_sde" >/dev/null || fail "eval with sim.sde_noise"
[ "$(json "$out/eval_sde/eval.json" "s['sde_noise']")" = 0.5 ] || fail "eval: sde_noise not in eval.json"
echo "ok: eval with the rollouts' sampler"

# Resume: the version counter continues from the checkpoint's (2 -> 4).
timeout 300 mpirun -np 3 --oversubscribe "$build/embsim" rl inputs/rl_push.in --set rl.init="$out/runs/async/ckpt" \
  "${small[@]}" --set run.name=resumed >"$out/resumed.log" 2>&1 || fail "resume: $(tail -5 "$out/resumed.log")"
grep -q "(version 2)" "$out/resumed.log" || fail "resume: did not start at version 2"
[ -f "$out/runs/resumed/ckpt/step_00000004.h5" ] || fail "resume: no checkpoint of version 4"
echo "ok: resume"

# A simulator that dies: one line naming it, every rank gone, well before the watchdog.
start=$(date +%s)
timeout 120 mpirun -np 3 --oversubscribe "$build/embsim" rl inputs/rl_push.in --set rl.init="$out/sft" "${small[@]}" \
  --set run.name=dies --set debug.fail_rank=2 --set debug.fail_step=3 >"$out/dies.log" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "dying simulator: exit $rc"
grep -q "embsim rl: simulator rank 2: debug.fail_rank: simulator rank 2 fails at chunk 3" "$out/dies.log" \
  || fail "dying simulator: $(cat "$out/dies.log")"
[ $(( $(date +%s) - start )) -lt 60 ] || fail "dying simulator: took $(( $(date +%s) - start )) s"
echo "ok: dying simulator"

# expect_error NAME NP PATTERN ARGS...: one 'embsim: error:' line matching PATTERN, non-zero exit.
expect_error() {
  local name=$1 np=$2 pattern=$3
  shift 3
  timeout 120 mpirun -np "$np" --oversubscribe "$build/embsim" rl inputs/rl_push.in "$@" >"$out/$name.out" 2>"$out/$name.err"
  local rc=$?
  [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "$name: exit code $rc"
  [ "$(grep -c '^embsim: error:' "$out/$name.err")" = 1 ] || fail "$name: $(cat "$out/$name.err")"
  grep -q "$pattern" "$out/$name.err" || fail "$name: no '$pattern' in: $(cat "$out/$name.err")"
  echo "ok: $name"
}
expect_error ranks 3 "simulators = 2, generators = 1, trainers = 1 need 4 ranks; mpirun started 3" \
  --set rl.init="$out/sft" "${small[@]}" --set rl.simulators=2
expect_error no_init 3 "rl.init must name the SFT checkpoint" "${small[@]}" --set rl.init=
expect_error missing_init 3 "no such checkpoint" "${small[@]}" --set rl.init="$out/none.h5"
expect_error micro 3 "rl.update_chunks = 8 is not a multiple of rl.micro_chunks = 3" \
  --set rl.init="$out/sft" "${small[@]}" --set rl.micro_chunks=3
expect_error grpo_sync 3 "rl.advantage = grpo needs rl.mode = async" \
  --set rl.init="$out/sft" "${small[@]}" --set rl.mode=sync --set rl.advantage=grpo --set rl.group_size=2
expect_error grpo_group 3 "rl.group_size = 4 does not divide rl.envs_per_simulator = 2" \
  --set rl.init="$out/sft" "${small[@]}" --set rl.advantage=grpo --set rl.group_size=4
expect_error round 3 "make it a multiple of simulators x envs_per_simulator" \
  --set rl.init="$out/sft" "${small[@]}" --set rl.mode=sync --set rl.envs_per_simulator=3
