#!/usr/bin/env bash
# GR00T-N1.5 action head on 128 nodes x 8 GPUs = 1024 ranks, one rank per GPU.
#SBATCH --job-name=embtrain-gr00t-1024
#SBATCH --nodes=128
#SBATCH --ntasks-per-node=8
#SBATCH --cpus-per-task=12
#SBATCH --time=04:00:00
#SBATCH --gpus-per-task=1
#SBATCH --exclusive
#SBATCH --requeue
#SBATCH --open-mode=append
# The signal lead is the planner's "Slurm pre-emption" line: embtrain inputs/gr00t_n1.5_3b.in --plan --set run.device=cuda --set train.ranks=1024
#SBATCH --signal=B:USR1@31
#SBATCH --output=outputs/slurm-%x-%j.out
set -euo pipefail
export EMBTRAIN_GPUS_PER_TASK=1
# sbatch runs a copy of this script from its spool folder, so the launcher is found from the
# folder the job was submitted from.
exec "${SLURM_SUBMIT_DIR}/scripts/slurm/launch.sh" inputs/gr00t_n1.5_3b.in "$@"
