#!/usr/bin/env bash
# Nsight Systems, one report per rank, under mpirun or srun: the wrapper runs inside each rank,
# so the rank variable expands per rank (a `-o outputs/prof/%q{OMPI_COMM_WORLD_RANK}` written on
# the mpirun line works for Open MPI only, and srun sets SLURM_PROCID instead).
#   mpirun -np 8 profiling/nsys_rank.sh ./build/embtrain DECK [--set ...]
#   srun --mpi=pmix profiling/nsys_rank.sh ./build/embtrain DECK [--set ...]
# Reports: $NSYS_OUT/rank<R>.nsys-rep (default outputs/prof). Profile a few steps only
# (--set train.steps=20): reports grow fast.
set -euo pipefail
rank=${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:-${PMIX_RANK:-0}}}
out=${NSYS_OUT:-outputs/prof}
mkdir -p "$out"
command -v nsys >/dev/null || { echo "nsys_rank: nsys not found (load the CUDA/Nsight module)" >&2; exit 1; }
exec nsys profile -t cuda,nvtx,mpi,osrt --mpi-impl=openmpi --force-overwrite true -o "$out/rank$rank" "$@"
