# Sourced by the scripts that start mpirun on a single machine (MACHINE.md "Running MPI
# here"): allow root in containers, pin the shared-memory transport unless the caller chose
# another, and let Open MPI's large collectives reuse memory instead of first-touching
# fresh pages on every call. scripts/bin goes first on PATH: its `mpirun` stops a run
# gracefully on SIGTERM or Ctrl-C (scripts/mpirun_graceful.sh).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
export GLIBC_TUNABLES=${GLIBC_TUNABLES:-glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184}
embtrain_launch_bin=$(cd "$(dirname "${BASH_SOURCE[0]}")/bin" && pwd)
case ":$PATH:" in
  *":$embtrain_launch_bin:"*) ;;
  *) export PATH="$embtrain_launch_bin:$PATH" ;;
esac
unset embtrain_launch_bin
