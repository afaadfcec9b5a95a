#!/usr/bin/env bash
# Environment shared by the sbatch scripts: the site profile (modules, NCCL/UCX settings, from
# scripts/slurm/sites/$EMBTRAIN_SITE.sh, default generic), threads, malloc tunables.
site=${EMBTRAIN_SITE:-generic}
profile="$(dirname "${BASH_SOURCE[0]}")/sites/$site.sh"
[ -f "$profile" ] || { echo "embtrain: no site profile $profile (EMBTRAIN_SITE=$site)" >&2; exit 1; }
source "$profile"
if [ ${#EMBTRAIN_MODULES[@]} -gt 0 ]; then
  command -v module >/dev/null 2>&1 || { echo "embtrain: site $site lists modules but 'module' is not available" >&2; exit 1; }
  for m in "${EMBTRAIN_MODULES[@]}"; do
    module load "$m" || { echo "embtrain: 'module load $m' failed (site profile $profile)" >&2; exit 1; }
  done
fi
export OPENBLAS_NUM_THREADS=1
# Reuse malloc'd memory in MPI's large collectives instead of first-touching new pages.
export GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184
