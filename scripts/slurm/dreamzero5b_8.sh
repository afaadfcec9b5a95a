#!/usr/bin/env bash
# DreamZero-5B on one node with 8 GPUs.
#SBATCH --job-name=embtrain-dz5b-8
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=12
#SBATCH --time=12:00:00
#SBATCH --signal=USR1@120
#SBATCH --output=outputs/slurm-%j.out
set -euo pipefail
# sbatch runs a copy of this script from its spool folder, so the launcher is found from the
# folder the job was submitted from.
exec "${SLURM_SUBMIT_DIR}/scripts/slurm/launch.sh" inputs/dreamzero5b.in "$@"
