#!/usr/bin/env bash
# GR00T-N1.5 action head on 128 nodes x 8 GPUs = 1024 ranks, one rank per GPU.
#SBATCH --job-name=embtrain-gr00t-1024
#SBATCH --nodes=128
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=12
#SBATCH --time=04:00:00
#SBATCH --signal=USR1@120
#SBATCH --output=outputs/slurm-%j.out
set -euo pipefail
cd "${SLURM_SUBMIT_DIR}"
source scripts/slurm/env.sh
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK}
# The training step runs on the CPU backend until the CUDA step lands (kernels/cuda/README.md);
# then add --set run.device=cuda. A requeued job resumes from the newest checkpoint.
srun --kill-on-bad-exit=1 ./build/embtrain inputs/gr00t_n15.in \
  --set train.resume=auto "$@"
