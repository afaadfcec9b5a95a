#!/usr/bin/env bash
# Exposed vs total communication of ZeRO-3, with and without overlap.
#   regression/bench_zero3_overlap.sh [BUILD_DIR]      (env: NP=4, ALPHA_US=50, GBPS=0.2)
# A comm-heavy tiny config: tiny_wan widened to D 128 with 8 blocks, one bucket per unit (10
# gathers and reduce-scatters per micro-batch) and a modelled fabric (latency α, bandwidth
# β: MACHINE.md — this machine has no spare core for MPI progress, so the fabric's time is
# modelled on top of the real collective). Target: exposed / total <= 10 % with overlap;
# the baseline (comm.overlap = off) exposes all of it.
# Issuing early lengthens the issue-to-completion spans that comm_total unites (a prefetch is
# in flight while other ranks have not reached it yet), so the overlap run's total is larger
# than the baseline's; exposed_vs_baseline_total divides by the baseline's total instead.
# Ranks sharing cores reach each collective at different times and the waits include that
# skew, so the load average is recorded: compare runs only at similar load.
# Writes outputs/bench/zero3_overlap.json.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
bash scripts/make_datasets.sh "$build"
mkdir -p outputs/bench
source scripts/mpi_env.sh
np=${NP:-4}
alpha_us=${ALPHA_US:-50}
gbps=${GBPS:-0.2}
args=(inputs/tiny_wan.in --set model.d_model=128 --set model.d_ff=512 --set model.n_layers=8
      --set train.shard=full --set train.bucket_mb=0.0001 --set train.steps=20 --set train.global_batch=64
      --set data.tokens_per_mb=16384 --set comm.fabric_latency_us="$alpha_us" --set comm.fabric_gbps="$gbps"
      --set run.log_every=20)
load_before=$(cut -d' ' -f1 /proc/loadavg)
for overlap in on off; do
  rm -rf "outputs/zero3-overlap-$overlap"
  mpirun -np "$np" --oversubscribe -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$build/embtrain" "${args[@]}" \
    --set comm.overlap=$overlap --set run.name="zero3-overlap-$overlap" >/dev/null
done
load_after=$(cut -d' ' -f1 /proc/loadavg)
/usr/bin/python3 - "$np" "$alpha_us" "$gbps" "$load_before" "$load_after" <<'PY'
import json, sys
res = {"ranks": int(sys.argv[1]), "shard": "full", "deck": "inputs/tiny_wan.in",
       "fabric_latency_us": float(sys.argv[2]), "fabric_gbps": float(sys.argv[3]),
       "loadavg_1min_before_after": [float(sys.argv[4]), float(sys.argv[5])]}
for overlap in ("on", "off"):
    s = json.load(open(f"outputs/zero3-overlap-{overlap}/summary.json"))
    ph = s["phases"]
    total = ph["comm_total"]["rank_total"]["median"]
    exposed = ph["comm_exposed"]["rank_total"]["median"]
    res[f"overlap_{overlap}"] = {"comm_total_s": total, "comm_exposed_s": exposed,
                                 "exposed_fraction": exposed / total if total else 0.0,
                                 "step_s": ph["step"]["rank_total"]["median"],
                                 "samples_per_s": s["samples_per_s"]}
off_total = res["overlap_off"]["comm_total_s"]
res["overlap_on"]["exposed_vs_baseline_total"] = res["overlap_on"]["comm_exposed_s"] / off_total if off_total else 0.0
json.dump(res, open("outputs/bench/zero3_overlap.json", "w"), indent=2)
print(f'{res["ranks"]} ranks, fabric {res["fabric_latency_us"]} us + bytes / {res["fabric_gbps"]} GB/s, '
      f'load {res["loadavg_1min_before_after"]}')
for k in ("overlap_on", "overlap_off"):
    r = res[k]
    print(f'{k}: comm total {r["comm_total_s"]:.3f} s, exposed {r["comm_exposed_s"]:.3f} s '
          f'({100 * r["exposed_fraction"]:.1f} %), steps {r["step_s"]:.3f} s')
print(f'overlap_on exposed / overlap_off total: {100 * res["overlap_on"]["exposed_vs_baseline_total"]:.1f} %')
PY
