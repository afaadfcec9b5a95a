#!/usr/bin/env bash
# The planner against measured steps on this CPU machine (issue 17's validation): for each of
# 1, 2 and 4 ranks, trains inputs/scaling_cpu.in (bound, two ranks per core at 4) between two
# measurements of the machine (tools/hwprobe, 2 ranks bound to the cores; the probe after one
# run is the probe before the next) and predicts it with --plan on their mean
# (regression/mean_hardware.py); writes outputs/bench/plan_validation.json with the median
# measured step next to the predicted one. The machine is shared and its load moves within a
# minute, so the probes bracket the run they predict, the load average is recorded beside it,
# and the whole sequence runs ROUNDS times: a rank count's error is the median of its rounds'.
# With more ranks than cores the ranks' imbalance is measured at that count (`hwprobe
# --imbalance` right after the run): two ranks on a core wait for each other's time slices at
# every collective, which a probe with one rank per core cannot see.
#   regression/plan_validation.sh [BUILD_DIR] [STEPS]   (env: ROUNDS=3)
set -euo pipefail
build=${1:-build}
steps=${2:-30}
rounds=${ROUNDS:-3}
cd "$(dirname "$0")/.."
bash scripts/make_datasets.sh "$build"
source scripts/mpi_env.sh
out=outputs/plan_validation
mkdir -p "$out" outputs/bench
bind=(--oversubscribe --bind-to core:overload-allowed -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
probe() { mpirun -np 2 "${bind[@]}" "$build/hwprobe" cpu_now > "$1"; }
rows=()
before="$out/probe_start.json"
probe "$before"
for round in $(seq 1 "$rounds"); do
  for np in 1 2 4; do
    name="plan-validation-np$np-$round"
    rm -rf "outputs/$name"
    load_before=$(cut -d' ' -f1 /proc/loadavg)
    mpirun -np "$np" "${bind[@]}" "$build/embtrain" inputs/scaling_cpu.in --set run.name="$name" \
      --set train.steps="$steps" >/dev/null
    load_after=$(cut -d' ' -f1 /proc/loadavg)
    after="$out/probe_after_np$np-$round.json"
    probe "$after"
    /usr/bin/python3 regression/mean_hardware.py "cpu_now, around the $np-rank run" "$before" "$after" \
      > "$out/cpu_np$np-$round.json"
    if [ "$np" -gt 2 ]; then  # more ranks than cores: their imbalance measured at that count
      mpirun -np "$np" "${bind[@]}" "$build/hwprobe" --imbalance > "$out/imbalance_np$np-$round.json"
      /usr/bin/python3 - "$out/cpu_np$np-$round.json" "$out/imbalance_np$np-$round.json" <<'PY'
import json, sys
hw, extra = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
hw.update(extra)
json.dump(hw, open(sys.argv[1], "w"), indent=2)
PY
    fi
    before="$after"
    "$build/embtrain" inputs/scaling_cpu.in --plan --set train.ranks="$np" --set plan.hardware="$out/cpu_np$np-$round.json" \
      --set plan.json="$out/plan_np$np-$round.json" >/dev/null
    rows+=("$np:$round:outputs/$name/summary.json:$out/plan_np$np-$round.json:$load_before:$load_after")
  done
done
/usr/bin/python3 - "${rows[@]}" <<'PY'
import json, statistics, sys
runs = []
for row in sys.argv[1:]:
    np, rnd, summary, plan, load_before, load_after = row.split(":")
    s, p = json.load(open(summary)), json.load(open(plan))
    measured = s["phases"]["step"]["per_step"]["median"]
    predicted = p["deck"]["seconds"]["step"]
    runs.append({"ranks": int(np), "round": int(rnd), "load_average_before_after": [float(load_before), float(load_after)],
                 "measured_step_s": measured, "predicted_step_s": predicted, "error": predicted / measured - 1,
                 "measured": {k: s["phases"][k]["per_step"]["median"] for k in ("fwd", "bwd", "comm_exposed", "optim")},
                 "predicted": {k: p["deck"]["seconds"][k] for k in ("forward", "backward", "comm_exposed", "optimizer")}})
table = []
for np in (1, 2, 4):
    mine = [r for r in runs if r["ranks"] == np]
    table.append({"ranks": np, "median_error": statistics.median(r["error"] for r in mine),
                  "errors": [r["error"] for r in mine]})
json.dump({"rows": table, "runs": runs}, open("outputs/bench/plan_validation.json", "w"), indent=2)
print("ranks round  load average   measured step  predicted  error")
for r in runs:
    load = "%.2f -> %.2f" % tuple(r["load_average_before_after"])
    print(f"{r['ranks']:5d} {r['round']:5d}  {load:12s}  {r['measured_step_s']:13.3f}  {r['predicted_step_s']:9.3f}  {100 * r['error']:+6.1f} %")
for t in table:
    print(f"{t['ranks']} rank(s): median error {100 * t['median_error']:+.1f} %")
PY
