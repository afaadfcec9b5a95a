#!/usr/bin/env bash
# The job step of every sbatch script here: embtrain on all ranks of the allocation, with the
# deck the script names and any arguments given to sbatch after the script.
#   launch.sh DECK [embtrain arguments...]
set -euo pipefail
deck=$1
shift
cd "${SLURM_SUBMIT_DIR}"
source scripts/slurm/env.sh
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK}
# The training step runs on the CPU backend until the CUDA step lands (kernels/cuda/README.md);
# then add --set run.device=cuda. A requeued job resumes from the newest checkpoint. Each rank
# is bound to its own cores: unbound ranks drift together and their skew at every collective
# shows as exposed communication (regression/bench_zero3_overlap.sh).
srun --kill-on-bad-exit=1 --cpu-bind=cores ./build/embtrain "${deck}" --set train.resume=auto "$@"
