#!/usr/bin/env bash
# The closed loop and RL on run.device = cuda (issue 31): the policy of `embsim eval`, and the
# generators and trainer of `embsim rl`, come from the backend factory (kernels/make_ops.hpp)
# and compute on CudaOps: under the CUDA emulation in CI, on a GPU where the build has nvcc.
# From a tiny SFT checkpoint: eval on cuda gives the CPU's episodes (successes and lengths),
# and a sync RL run on cuda trains the policy as the CPU's does (the same updates, parameters
# equal within fp32 tolerance, both moved from the SFT start).
# Usage: embsim_cuda_test.sh BUILD_DIR emulated|hardware
set -uo pipefail
build=$1 backend=$2
if [ "$backend" = hardware ] && ! nvidia-smi -L >/dev/null 2>&1; then echo "skipped: no GPU"; exit 77; fi
source "$(dirname "$0")/sim_test_lib.sh"
sft_checkpoint

for device in cpu cuda; do
  run 1 "$build/embsim" eval "$out/sft" --task push --episodes 2 --seed 3 --videos 0 --out "$out/eval_$device" \
    --set run.device=$device >"$out/eval_$device.log" 2>&1 || fail "eval on $device: $(tail -3 "$out/eval_$device.log")"
done
for field in success lengths; do
  cpu=$(json "$out/eval_cpu/eval.json" "s['tasks']['push']['$field']")
  cuda=$(json "$out/eval_cuda/eval.json" "s['tasks']['push']['$field']")
  [ "$cpu" = "$cuda" ] || fail "eval: $field on cuda $cuda, on cpu $cpu"
done
echo "ok: eval on cuda"

small=(--set rl.mode=sync --set rl.simulators=1 --set rl.generators=1 --set rl.trainers=1
       --set rl.envs_per_simulator=2 --set rl.update_chunks=4 --set rl.micro_chunks=4 --set rl.updates=2
       --set rl.critic_warmup=0 --set rl.lr=1e-3 --set train.watchdog_s=300 --set run.output_dir="$out/runs")
for device in cpu cuda; do
  timeout 600 mpirun -np 3 --oversubscribe -x OMP_NUM_THREADS=1 "$build/embsim" rl inputs/rl_push.in \
    --set rl.init="$out/sft" "${small[@]}" --set run.device=$device --set run.name=rl_$device \
    >"$out/rl_$device.log" 2>&1 || fail "rl on $device: $(tail -5 "$out/rl_$device.log")"
  [ "$(json "$out/runs/rl_$device/summary.json" "[r['version'] for r in s['ranks'] if r['role'] == 'trainer'][0]")" = 2 ] \
    || fail "rl on $device: not 2 updates"
done
/usr/bin/python3 - "$out/sft/$(cat "$out/sft/latest")" "$out/runs/rl_cpu/ckpt/step_00000002.h5" \
  "$out/runs/rl_cuda/ckpt/step_00000002.h5" <<'PY' || fail "rl: the cuda policy is not the cpu's"
import h5py, numpy as np, sys
sft, cpu, cuda = (h5py.File(p, 'r')['params'] for p in sys.argv[1:])
moved = worst = 0.0
for name in cpu:
    a, b = np.asarray(cpu[name]), np.asarray(cuda[name])
    moved = max(moved, float(np.max(np.abs(a - np.asarray(sft[name])))))
    worst = max(worst, float(np.max(np.abs(a - b))))
print(f"largest update {moved:.3g}, largest cpu/cuda difference {worst:.3g}")
assert moved > 1e-4, "RL did not move the policy"
assert worst < 0.05 * moved, "the cuda run trained another policy"
PY
echo "ok: rl on cuda"
