#!/usr/bin/env bash
# `hwprobe --imbalance` (tools/hwprobe): with a core per rank it measures the ranks' drift and no
# turn, no time-sharing link; with two ranks a core (twice the cores, bound) the turn the rank
# holding a core runs after a step-shaped round's opening reduction while its partner waits
# there, a real part of the scheduler's slice, the close's wait per round, and the collectives
# of ranks sharing cores (time_sharing_link).
#   hwprobe_imbalance_test.sh BUILD_DIR
set -uo pipefail
build=$1
source scripts/mpi_env.sh
cores=$(nproc)
bind=(--oversubscribe --bind-to core:overload-allowed -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
figures() {  # NP: the file's figures as "key value" lines
  mpirun -np "$1" "${bind[@]}" "$build/hwprobe" --imbalance |
    /usr/bin/python3 -c '
import json, sys
def flat(prefix, node):
    if "value" in node:
        print(prefix, node["value"])
    else:
        for k, v in node.items():
            flat(prefix + "." + k if prefix else k, v)
flat("", {k: v for k, v in json.load(sys.stdin).items() if k != "name"})'
}
fail() { echo "FAIL: $*"; exit 1; }
value() { awk -v k="$1" '$1 == k { print $2 }' <<<"$2"; }
shared=$(figures $((2 * cores))) || fail "hwprobe --imbalance at $((2 * cores)) ranks"
echo "$shared"
[ "$(value rank_imbalance_ranks "$shared")" = "$((2 * cores)).0" ] || fail "expected the ranks it ran with"
turn=$(value first_turn_seconds "$shared")
round=$(value rank_imbalance_round_s "$shared")
# A turn between 0.5 ms and 100 ms (this VM's slice is 4 ms; Linux's default ones are 0.75-24 ms);
# a round of 8 GEMMs of 384³ and up to 9 eighths, paced by two ranks a core: 5 ms to 1 s.
/usr/bin/python3 -c "import sys; t, r = $turn, $round; sys.exit(0 if 5e-4 < t < 0.1 and 5e-3 < r < 1 else 1)" ||
  fail "expected a first turn of 0.5-100 ms and a round of 5 ms to 1 s at two ranks a core"
# Ranks sharing cores gather at 10 MB/s to 1 TB/s a ring pass, hops under 10 ms, and sum both
# sizes (1 MiB in all, 32 MiB a rank).
link=$(value time_sharing_link.bytes_per_s "$shared")
hop=$(value time_sharing_link.latency_s "$shared")
sums=$(grep -c '^time_sharing_link.reduce_bytes_per_s_by_size' <<<"$shared")
/usr/bin/python3 -c "import sys; b, a = ${link:-0}, ${hop:--1}; sys.exit(0 if 1e7 < b < 1e12 and 0 <= a < 1e-2 else 1)" ||
  fail "expected a time_sharing_link of 10 MB/s to 1 TB/s with hops under 10 ms at two ranks a core, got '$link' '$hop'"
[ "$sums" = 2 ] || fail "expected the time-sharing sums at 2 sizes, got $sums"
if [ "$cores" -ge 2 ]; then
  own=$(figures 2) || fail "hwprobe --imbalance at 2 ranks"
  echo "$own"
  [ "$(value first_turn_seconds "$own")" = "0.0" ] || fail "expected no turn with a core per rank"
  ! grep -q '^time_sharing_link' <<<"$own" || fail "expected no time_sharing_link with a core per rank"
fi
echo "ok: hwprobe --imbalance"
