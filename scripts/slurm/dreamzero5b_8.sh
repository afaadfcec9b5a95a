#!/usr/bin/env bash
# DreamZero-5B on one node with 8 GPUs.
#SBATCH --job-name=embtrain-dz5b-8
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=12
#SBATCH --time=12:00:00
#SBATCH --gpus-per-task=1
#SBATCH --exclusive
#SBATCH --requeue
#SBATCH --open-mode=append
# The signal lead is the planner's "Slurm pre-emption" line: embtrain inputs/dreamzero5b.in --plan --set run.device=cuda --set train.ranks=8
#SBATCH --signal=B:USR1@90
#SBATCH --output=outputs/slurm-%x-%j.out
set -euo pipefail
export EMBTRAIN_GPUS_PER_TASK=1
# sbatch runs a copy of this script from its spool folder, so the launcher is found from the
# folder the job was submitted from.
exec "${SLURM_SUBMIT_DIR}/scripts/slurm/launch.sh" inputs/dreamzero5b.in "$@"
