#!/usr/bin/env bash
# Environment shared by the sbatch scripts: modules, MPI/UCX/NCCL settings, threads.
# Edit the module names for your site.
module load gcc/12 cuda/13.0 openmpi/4.1-cuda ucx/1.13 hdf5/1.10-parallel openblas 2>/dev/null || true
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
export OPENBLAS_NUM_THREADS=1
export OMPI_MCA_pml=${OMPI_MCA_pml:-ucx}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
# Reuse malloc'd memory in MPI's large collectives instead of first-touching new pages.
export GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184
