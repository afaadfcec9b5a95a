#!/usr/bin/env bash
# Checks that a CUDA binary embeds sm_80 and sm_90a cubins and compute_90 PTX, from the
# fat binary's contents (no cuobjdump needed): each cubin records its ptxas "-arch sm_XX"
# line, and the PTX its ".target sm_90" directive.
#   check_architectures.sh BINARY
set -euo pipefail
binary=$1
contents=$(strings -a "$binary")
status=0
for arch in sm_80 sm_90a; do
  grep -q -- "-arch $arch " <<<"$contents" || { echo "$binary: no $arch cubin"; status=1; }
done
grep -qx "\.target sm_90" <<<"$contents" || { echo "$binary: no compute_90 PTX"; status=1; }
[ $status -eq 0 ] && echo "$binary: sm_80, sm_90a cubins and compute_90 PTX present"
exit $status
