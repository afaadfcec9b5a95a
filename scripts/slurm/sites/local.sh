# Site profile of one machine running its own Slurm (scripts/slurm/local_cluster.sh, CI): no
# modules, shared-memory MPI (MACHINE.md).
EMBTRAIN_MODULES=()
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EMBTRAIN_SCRATCH=${EMBTRAIN_SCRATCH:-/tmp}
