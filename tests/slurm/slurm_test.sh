#!/usr/bin/env bash
# scripts/slurm/launch.sh through a real Slurm: a single-node cluster on localhost runs
#  1. a 2-task tiny_gr00t job with `sbatch --wait` to the end;
#  2. the same job signalled mid-run as Slurm's --signal=B:USR1@T would (scancel --signal=USR1
#     --batch): its ranks checkpoint, the job requeues itself, resumes from the checkpoint and
#     finishes, and its loss curve (both segments) equals job 1's.
# The daemons are stopped on every exit (trap). Exit 77 (skipped) when Slurm is not installed.
#   slurm_test.sh BUILD_DIR
set -uo pipefail
build=$1
[ "$build" = build ] || [ "$(realpath "$build")" = "$(realpath build)" ] ||
  { echo "slurm_test: launch.sh runs ./build/embtrain; got BUILD_DIR=$build" >&2; exit 1; }
for tool in munged slurmctld slurmd sbatch; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (Debian: slurm-wlm slurmctld slurmd munge)"; exit 77; }
done
cluster=$(mktemp -d /tmp/embtrain-slurm-XXXXXX)
trap 'bash scripts/slurm/local_cluster.sh stop "$cluster"; rm -rf "$cluster"' EXIT
# On failure: the jobs' own output, their records and the daemons' logs about them (the cluster
# directory goes on exit).
fail() {
  echo "FAIL: $*" >&2
  for f in "$cluster"/*.out "$cluster"/log/*; do echo "==> $f <==" >&2; tail -n 60 "$f" >&2; done
  for j in ${full_id:-} ${id:-}; do scontrol show job "$j" >&2; done
  exit 1
}
eval "$(bash scripts/slurm/local_cluster.sh start "$cluster")" || fail "the local Slurm did not start"

# 100 steps of at least 30 ms (debug.slow_step_ms): the job signalled after step 20 still has
# about 2 s of its run ahead on a fast machine (the signal reaches it well within that; tiny
# steps alone take 5 ms, and the run would end before it), and both jobs stay short.
steps=100
# Job ids restart at 1 on every fresh cluster: clear the job directories of earlier runs.
rm -rf outputs/slurm/ci-full-* outputs/slurm/ci-preempt-*
common=(-n 2 -c 1 --export=ALL,EMBTRAIN_SITE=local --output="$cluster/%x-%j.out" --open-mode=append)
deck_args=(inputs/tiny_gr00t.in --set train.steps=$steps --set train.global_batch=8 --set run.log_every=50
           --set debug.slow_step_ms=30)
state() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# 1. To the end, waiting.
sbatch --wait --job-name=ci-full "${common[@]}" scripts/slurm/launch.sh "${deck_args[@]}" >"$cluster/full.id" ||
  fail "sbatch --wait: the job failed"
full_id=$(grep -o '[0-9]*' "$cluster/full.id" | tail -1)
full_loss=$(ls outputs/slurm/ci-full-"$full_id"/*/loss.csv) || fail "job $full_id wrote no loss.csv"

# 2. Signalled mid-run, requeued, resumed.
id=$(sbatch --parsable --requeue --job-name=ci-preempt "${common[@]}" scripts/slurm/launch.sh "${deck_args[@]}")
job_dir=outputs/slurm/ci-preempt-$id
# Signalled once rank 0 has timed step 20 (the step column of its timings, whatever the number
# of phases per step).
for _ in $(seq 600); do
  timed=$(awk -F, 'END { print $1 + 0 }' "$job_dir"/*/timings/rank0.csv 2>/dev/null)
  [ "${timed:-0}" -ge 20 ] && break
  sleep 0.2
done
s=$(state "$id" JobState)
[ "$s" = RUNNING ] || fail "job $id is $s, not RUNNING, when it should be signalled (step ${timed:-0} timed)"
scancel --signal=USR1 --batch "$id"
released=0
for _ in $(seq 900); do
  s=$(state "$id" JobState)
  # Slurm makes a requeued job eligible only cred_expire (120 s) after the requeue: release it
  # sooner, once, but 2 s ahead. The nodes revoke the job's credentials at the kill that ends the
  # first run, and reject a new start whose credential dates from that same second or earlier
  # ("Job credential revoked", the job ends FAILED): StartTime=now raced it.
  if [ "$released" = 0 ] && [ "$s" = PENDING ] && [ "$(state "$id" Restarts)" -ge 1 ]; then
    scontrol update JobId="$id" StartTime=now+2 && released=1
  fi
  [ "$s" = COMPLETED ] && [ "$(state "$id" Restarts)" -ge 1 ] && break
  case "$s" in FAILED|CANCELLED|TIMEOUT|NODE_FAIL) fail "job $id ended $s";; esac
  sleep 0.2
done
[ "$(state "$id" Restarts)" = 1 ] || fail "job $id: $(state "$id" Restarts) restarts, state $(state "$id" JobState)"
ls "$job_dir"/ckpt/* >/dev/null 2>&1 || fail "job $id left no checkpoint in $job_dir/ckpt"
grep -q "requeued job $id" "$cluster/ci-preempt-$id.out" || fail "job $id did not requeue itself"
/usr/bin/python3 - "$full_loss" "$steps" "$job_dir"/*/loss.csv <<'PY' || fail "loss curves differ"
import csv, sys
read = lambda p: {int(r["step"]): float(r["loss"]) for r in csv.DictReader(open(p))}
full, steps, segments = read(sys.argv[1]), int(sys.argv[2]), [read(p) for p in sys.argv[3:]]
assert len(segments) == 2, f"{len(segments)} run segments, expected 2 (before and after the requeue)"
first, second = sorted(segments, key=min)
assert max(first) < steps and min(second) == max(first) + 1, (max(first), min(second))
joined = {**first, **second}
assert sorted(joined) == sorted(full) == list(range(1, steps + 1))
worst = max(abs(joined[k] - full[k]) / abs(full[k]) for k in full)
print(f"stopped after step {max(first)}, resumed to {steps}; max relative loss difference {worst:.2e}")
assert worst <= 1e-5, worst
PY
echo "PASS: sbatch --wait with 2 tasks; signal -> checkpoint -> requeue -> resume with the same losses"
