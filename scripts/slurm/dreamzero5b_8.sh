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
cd "${SLURM_SUBMIT_DIR}"
source scripts/slurm/env.sh
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK}
# The training step runs on the CPU backend until the CUDA step lands (kernels/cuda/README.md);
# then add --set run.device=cuda. A requeued job resumes from the newest checkpoint.
srun --kill-on-bad-exit=1 ./build/embtrain inputs/dreamzero5b.in \
  --set train.resume=auto "$@"
