#!/usr/bin/env bash
# The planner against measured steps on this CPU machine (issue 17's validation): measures the
# machine (tools/hwprobe, 2 ranks bound to the cores), trains inputs/scaling_cpu.in on 1, 2 and
# 4 ranks (bound, two per core at 4), predicts each with --plan on the fresh hardware file, and
# writes outputs/bench/plan_validation.json with the median measured step next to the
# predicted one. The machine is shared: the probe runs right before the runs it predicts, and
# the load average is recorded beside them.
#   regression/plan_validation.sh [BUILD_DIR] [STEPS]
set -euo pipefail
build=${1:-build}
steps=${2:-30}
cd "$(dirname "$0")/.."
bash scripts/make_datasets.sh "$build"
source scripts/mpi_env.sh
out=outputs/plan_validation
mkdir -p "$out" outputs/bench
bind=(--oversubscribe --bind-to core:overload-allowed -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
load_before=$(cut -d' ' -f1 /proc/loadavg)
mpirun -np 2 "${bind[@]}" "$build/hwprobe" cpu_now > "$out/cpu_now.json"
rows=()
for np in 1 2 4; do
  name="plan-validation-np$np"
  rm -rf "outputs/$name"
  mpirun -np "$np" "${bind[@]}" "$build/embtrain" inputs/scaling_cpu.in --set run.name="$name" \
    --set train.steps="$steps" >/dev/null
  "$build/embtrain" inputs/scaling_cpu.in --plan --set train.ranks="$np" --set plan.hardware="$out/cpu_now.json" \
    --set plan.json="$out/plan_np$np.json" >/dev/null
  rows+=("$np:outputs/$name/summary.json:$out/plan_np$np.json")
done
load_after=$(cut -d' ' -f1 /proc/loadavg)
/usr/bin/python3 - "$load_before" "$load_after" "${rows[@]}" <<'PY'
import json, sys
load = [float(sys.argv[1]), float(sys.argv[2])]
table = []
for row in sys.argv[3:]:
    np, summary, plan = row.split(":")
    s, p = json.load(open(summary)), json.load(open(plan))
    measured = s["phases"]["step"]["per_step"]["median"]
    predicted = p["deck"]["seconds"]["step"]
    table.append({"ranks": int(np), "measured_step_s": measured, "predicted_step_s": predicted,
                  "error": predicted / measured - 1,
                  "measured": {k: s["phases"][k]["per_step"]["median"] for k in ("fwd", "bwd", "comm_exposed", "optim")},
                  "predicted": {k: p["deck"]["seconds"][k] for k in ("forward", "backward", "comm_exposed", "optimizer")}})
json.dump({"load_average_before_after": load, "rows": table}, open("outputs/bench/plan_validation.json", "w"), indent=2)
print(f"load average {load[0]} -> {load[1]}")
print("ranks  measured step  predicted  error")
for r in table:
    print(f"{r['ranks']:5d}  {r['measured_step_s']:13.3f}  {r['predicted_step_s']:9.3f}  {100 * r['error']:+5.1f} %")
PY
