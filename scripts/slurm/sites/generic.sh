# Site profile (scripts/slurm/env.sh sources scripts/slurm/sites/$EMBTRAIN_SITE.sh): the modules
# to load and the fabric settings of one cluster. Copy this file to sites/<your site>.sh, edit
# it, and submit with EMBTRAIN_SITE=<your site>.
# Modules, loaded in order; a module that fails to load stops the job with its name.
EMBTRAIN_MODULES=(gcc/12 cuda/13.0 openmpi/4.1-cuda ucx/1.13 hdf5/1.10-parallel openblas)
# NCCL bootstrap/socket interface, InfiniBand HCAs (one per GPU on a rail-optimised DGX) and
# the GID index (RoCE needs 3; InfiniBand ignores it).
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-^lo,docker}
export NCCL_IB_HCA=${NCCL_IB_HCA:-mlx5}
export NCCL_IB_GID_INDEX=${NCCL_IB_GID_INDEX:-3}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
# Open MPI over UCX on the same HCAs.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ucx}
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-mlx5_0:1}
# Node-local scratch for staged datasets (EMBTRAIN_STAGE=1).
EMBTRAIN_SCRATCH=${EMBTRAIN_SCRATCH:-/tmp}
