#!/usr/bin/env bash
# regression/rank_spells.py: two ranks' compute with independent noise step to step reads ~0;
# the same with one rank 5 % slower for alternating spells of 40 steps reads the spells' share.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$tmp" <<'PY'
import os, random, sys
random.seed(7)
for name, spell in (("independent", 0.0), ("spells", 0.05)):
    os.makedirs(os.path.join(sys.argv[1], name))
    with open(os.path.join(sys.argv[1], name, "timings.csv"), "w") as f:
        f.write("rank,step,phase,seconds\n")
        for step in range(0, 401):
            slow = 0 if (step // 40) % 2 == 0 else 1  # the spell's rank
            for rank in (0, 1):
                noise = random.gauss(0, 0.05)  # 5 % a step, independent
                f.write(f"{rank},{step},fwd,{0.004 * (1 + noise + (spell if rank == slow else 0))}\n")
                f.write(f"{rank},{step},bwd,0.006\n{rank},{step},optim,0\n{rank},{step},comm_exposed,0.0003\n")
PY
independent=$(/usr/bin/python3 regression/rank_spells.py "$tmp/independent")
spells=$(/usr/bin/python3 regression/rank_spells.py "$tmp/spells")
/usr/bin/python3 - "$independent" "$spells" <<'PY'
import sys
independent, spells = map(float, sys.argv[1:])
# independent: 0 expected (the windows' variance is var/20, up to its noise over 18 windows)
assert independent < 0.004, independent
# spells: each rank leads the step's mean by ±1 % of a 10 ms step (half of 5 % of the 4 ms fwd)
assert 0.008 < spells < 0.012, spells
print("rank_spells: ok", independent, spells)
PY
printf 'rank,step,phase,seconds\n0,1,fwd,0.01\n' > "$tmp/timings.csv"
[ "$(/usr/bin/python3 regression/rank_spells.py "$tmp")" = 0.0 ] || { echo "rank_spells: one rank should read 0" >&2; exit 1; }
