#!/usr/bin/env bash
# The job step of every sbatch script here: embtrain on all ranks of the allocation, with the
# deck the script names and any embtrain arguments given to sbatch after the script.
#   launch.sh DECK [embtrain arguments...]
# Outputs and checkpoints go under the job's directory, outputs/slurm/<job name>-<job id>
# (EMBTRAIN_JOB_DIR overrides), which a requeued job keeps (same id), so it resumes from the
# newest complete checkpoint there (train.resume = auto).
# Pre-emption: the sbatch scripts ask for --signal=B:USR1@T (T from `embtrain DECK --plan`:
# a step plus a checkpoint, twice, plus 30 s). The signal reaches this shell, which forwards
# it to the ranks through srun; they checkpoint at the next step boundary and exit; then the
# job requeues itself and the next start resumes.
# Environment: EMBTRAIN_SITE (site profile, scripts/slurm/sites), EMBTRAIN_STAGE=1 (copy the
# dataset to node-local scratch with sbcast first), EMBTRAIN_GPUS_PER_TASK=1 (one GPU per
# rank, bound to the closest one).
set -euo pipefail
deck=$1
shift
cd "${SLURM_SUBMIT_DIR}"
source scripts/slurm/env.sh
job_dir=${EMBTRAIN_JOB_DIR:-outputs/slurm/${SLURM_JOB_NAME}-${SLURM_JOB_ID}}
mkdir -p "$job_dir"
args=(--set run.output_dir="$job_dir" --set train.ckpt_dir="$job_dir/ckpt" --set train.resume=auto "$@")
bash scripts/slurm/preflight.sh "$deck" "${args[@]}"

if [ "${EMBTRAIN_STAGE:-0}" = 1 ]; then
  # Every node gets its own copy of each dataset file in scratch; the ranks read those.
  staged=()
  for f in $(./build/embtrain "$deck" --print-deck "${args[@]}" | sed -n '/^\[data\]/,/^\[/p' |
             sed -n 's/^paths *= *//p' | sed 's/ *#.*$//' | tr ',' ' '); do
    dest="${EMBTRAIN_SCRATCH}/embtrain-${SLURM_JOB_ID}-$(basename "$f")"
    sbcast --force "$f" "$dest"
    staged+=("$dest")
  done
  args+=(--set "data.paths=$(IFS=,; echo "${staged[*]}")")
  echo "staged ${#staged[@]} dataset file(s) to ${EMBTRAIN_SCRATCH} on every node"
fi

# srun no longer inherits --cpus-per-task from sbatch (Slurm >= 22.05): pass it on.
export SRUN_CPUS_PER_TASK=${SLURM_CPUS_PER_TASK:-1}
export OMP_NUM_THREADS=$SRUN_CPUS_PER_TASK
gpu=()
if [ "${EMBTRAIN_GPUS_PER_TASK:-0}" -gt 0 ]; then gpu=(--gpus-per-task=1 --gpu-bind=closest); fi

preempted=0
srun_pid=
forward_stop() {
  preempted=1
  echo "launch: pre-emption signal: the ranks checkpoint and stop; the job requeues"
  [ -n "$srun_pid" ] && kill -USR1 "$srun_pid" 2>/dev/null || true
}
trap forward_stop USR1 TERM INT
# Each rank is bound to its own cores: unbound ranks drift together and their skew at every
# collective shows as exposed communication (regression/bench_zero3_overlap.sh).
srun --mpi=pmix --kill-on-bad-exit=1 --cpu-bind=cores -c "$SRUN_CPUS_PER_TASK" "${gpu[@]}" \
  ./build/embtrain "$deck" "${args[@]}" &
srun_pid=$!
status=0
while true; do  # a trapped signal interrupts wait; wait again for srun's own status
  wait "$srun_pid" && status=0 || status=$?
  kill -0 "$srun_pid" 2>/dev/null || break
done
if [ "$preempted" = 1 ] && [ "$status" = 0 ]; then
  scontrol requeue "$SLURM_JOB_ID"
  echo "launch: requeued job $SLURM_JOB_ID"
fi
exit "$status"
