#!/usr/bin/env bash
# regression/rank_tokens.py on a made run whose two ranks compute 2 ms + 5 µs a context token
# (context 100-300 tokens drawn a rank a step), plus a jitter of 0.1 ms common to the ranks and
# 0.2 ms each rank's own: it gives back the slope, the samples' sd and the two jitters.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$tmp" <<'PY'
import json, os, random, sys
random.seed(11)
run = sys.argv[1]
os.makedirs(f"{run}/trace")
rows, events = ["rank,step,phase,seconds"], {0: [], 1: []}
for step in range(1, 2001):
    common = random.gauss(0, 1e-4)
    for rank in (0, 1):
        context = random.randint(100, 300)
        compute = 2e-3 + 5e-6 * context + common + random.gauss(0, 2e-4)
        rows += [f"{rank},{step},fwd,{compute / 3}", f"{rank},{step},bwd,{compute * 2 / 3}", f"{rank},{step},optim,0"]
        events[rank].append({"name": "batch", "ph": "i", "pid": rank, "ts": step,
                             "args": {"step": step, "micro_batches": 1, "query_tokens": 52,
                                      "context_tokens": context, "real_tokens": 52 + context}})
open(f"{run}/timings.csv", "w").write("\n".join(rows) + "\n")
for rank, ev in events.items():
    json.dump(ev, open(f"{run}/trace/rank{rank}.json", "w"))
PY
out=$(cd regression && /usr/bin/python3 -c "
import json, sys
from rank_tokens import split_spread
print(json.dumps(split_spread(sys.argv[1])))" "$tmp")
/usr/bin/python3 - "$out" <<'PY'
import json, sys
s = json.loads(sys.argv[1])
near = lambda x, want, tol: abs(x - want) <= tol * want
assert s["ranks"] == 2 and s["steps"] == 1800, s
assert near(s["s_per_token"]["context_tokens"], 5e-6, 0.05), s  # query tokens never vary: 0
assert s["s_per_token"]["query_tokens"] == 0, s
assert near(s["samples_s"], 5e-6 * 58.0, 0.06), s  # uniform 100-300: sd 58 tokens
assert near(s["jitter_own_s"], 2e-4, 0.06) and near(s["jitter_common_s"], (1e-4**2 + 2e-4**2 / 2) ** 0.5, 0.08), s
# the slowest of 2 leads the mean by half their gap: E|x1 - x2| / 2 = sd / sqrt(pi) for each part
assert near(s["jitter_wait_s"], 2e-4 / 3.1416 ** 0.5, 0.08), s
print("rank_tokens: ok", s["s_per_token"]["context_tokens"], s["samples_s"], s["jitter_own_s"])
PY
