#!/usr/bin/env bash
# A machine of one core (Open MPI's --cpu-set 0, and --host with one slot as mpirun counts a
# machine of one core, so that it yields the core while a rank waits): `hwprobe` with its one rank writes a file the
# planner reads (a gather of one rank is the buffer's copy: a link figure, not 0 or NaN), and
# `hwprobe --imbalance FILE` at two ranks on that core puts the time-sharing figures into it,
# which --plan then predicts two ranks with: the way from a new machine to a prediction without
# editing a figure. Without the slot count the two ranks spin through each other's turns, which
# every program warns of at start (comm/core_sharing.hpp).
#   hwprobe_one_core_test.sh BUILD_DIR
set -uo pipefail
build=$1
source scripts/mpi_env.sh
bind=(--oversubscribe --cpu-set 0 --bind-to core:overload-allowed -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
out=outputs/hwprobe_one_core_test
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }
# Two ranks bound to the core while mpirun counts two slots: the warning, with the fix, once.
mpirun -np 2 "${bind[@]}" "$build/hwprobe" --imbalance "$out/absent.json" > /dev/null 2> "$out/spinning.err"
[ "$(grep -c 'ranks on .* are bound to 1 core while mpirun counted slots for all of them.*--host .*:1' "$out/spinning.err")" = 1 ] ||
  fail "no warning (or more than one) of ranks spinning on a shared core: $(cat "$out/spinning.err")"
bind+=(--host localhost:1)
mpirun -np 1 "${bind[@]}" "$build/hwprobe" one_core > "$out/one_core.json" || fail "hwprobe at one rank"
mpirun -np 2 "${bind[@]}" "$build/hwprobe" --imbalance "$out/one_core.json" > "$out/one_core_2.json" 2> "$out/yielding.err" ||
  fail "hwprobe --imbalance at two ranks on one core"
! grep -q "busy-polls" "$out/yielding.err" || fail "a warning of spinning ranks where mpirun knows the one slot: $(cat "$out/yielding.err")"
for ranks in 1 2; do
  file=$out/one_core.json
  [ "$ranks" = 1 ] || file=$out/one_core_2.json
  taskset -c 0 "$build/embtrain" inputs/tiny_gr00t.in --plan --set train.ranks=$ranks --set plan.hardware="$file" \
    --set plan.json="$out/plan_$ranks.json" >/dev/null || fail "--plan at $ranks rank(s) on $file"
done
/usr/bin/python3 - "$out" <<'PY' || fail "the one-core files and predictions"
import json, math, sys
out = sys.argv[1]
one, two = json.load(open(f"{out}/one_core.json")), json.load(open(f"{out}/one_core_2.json"))
link = one["intra_node"]
assert one["devices_per_node"]["value"] == 1, one["devices_per_node"]
for key in ("bytes_per_s", "reduce_bytes_per_s"):  # a copy's rate and the sums' floor: real rates
    v = link[key]["value"]
    assert v is not None and math.isfinite(v) and v > 1e8, (key, v)
assert two["rank_imbalance_ranks"]["value"] == 2 and two["first_turn_seconds"]["value"] > 0, two
assert two["turn_seconds"]["value"] > 0 and two["first_turn_spread_seconds"]["value"] >= 0, two
assert two["time_sharing_link"]["bytes_per_s"]["value"] > 1e7, two["time_sharing_link"]
# the collectives' core cost the 1-rank file cannot have: measured at two ranks on the core
assert link["core_seconds_per_byte"]["value"] == 0, link
assert two["time_sharing_link"]["core_seconds_per_byte"]["value"] > 1e-11, two["time_sharing_link"]
# and per call, read on the CPU clock (0.18-0.22 ms here): on the wall clock the partner's turns in
# a burst buried it, and it read 0 in 2 of 7 runs beside other tests (ctest -j 2, session 33)
assert two["time_sharing_link"]["core_seconds_per_call"]["value"] > 1e-5, two["time_sharing_link"]
assert two["gemm_flops"] == one["gemm_flops"]  # the file's own figures kept
# the forward's share of attention at head dims 16 and 64 (0.36-0.39 and 0.32-0.33 here)
shares = one["attention_forward_fraction_by_head_dim"]
assert sorted(shares) == ["16", "64"] and all(0.1 < s["value"] < 0.9 for s in shares.values()), shares
# the fused activations' arithmetic per element (ns here: ReLU 0.1 / 0.8, SiLU 1.3 / 1.6,
# GELU-tanh 2.2 / 3.0, GELU-erf 11 / 16 forward / backward): the transcendental ones cost more
acts = {name: (a["forward"]["value"], a["backward"]["value"]) for name, a in one["activation_element_seconds"].items()}
assert sorted(acts) == ["gelu_erf", "gelu_tanh", "relu", "silu"], acts
assert all(0 < s < 1e-6 for pair in acts.values() for s in pair), acts
assert acts["gelu_tanh"][0] > 2 * acts["relu"][0] and acts["silu"][0] > 2 * acts["relu"][0], acts
# the elementwise ops costed by their arithmetic (ns here: rope 2.2 / 2.2, the sinusoids 6.9-8.4,
# in double), each above ReLU's streaming forward; the norms per element (0.2-2.0 ns) and per row
# (7-26 ns: a row's statistics; some above 0, narrow rows costing more an element than wide ones)
norms = ["layernorm_backward", "layernorm_forward", "norm_modulate_backward", "norm_modulate_forward",
         "residual_norm_modulate_forward", "rmsnorm_backward", "rmsnorm_forward"]
ops = {name: f["value"] for name, f in one["elementwise_element_seconds"].items()}
assert sorted(ops) == sorted(["rope_backward", "rope_forward", "sinus_embedding"] + norms), ops
assert all(acts["relu"][0] < ops[op] < 1e-6 for op in ("rope_backward", "rope_forward", "sinus_embedding")), (ops, acts)
rows = {name: f["value"] for name, f in one["elementwise_row_seconds"].items()}
assert sorted(rows) == norms, rows
assert all(0 < ops[op] < 1e-7 and 0 <= rows[op] < 1e-5 for op in norms), (ops, rows)
assert sum(rows.values()) > 0, rows
# a GEMM call's set-up in rows, which depends on OpenBLAS's kernel for the CPU: 4.4-5.0 with the
# Haswell/Zen kernels (16-row calls at 0.83 of the 64-row calls' rate), 0-3.9 (median 0.5-0.9)
# with the AVX-512 Cooperlake kernels on a Zen 4, whose small-matrix path skips the packing
call_rows = one["gemm_call_rows"]["value"]
assert 0 <= call_rows < 64, call_rows
# an attention tile's fixed work in rows and keys (here 5.6-7.3 rows and 11-19 keys: tiles of 8
# rows at 0.19-0.22 and of 8 keys at 0.25-0.32 of full ones' time)
tile = (one["attention_tile_rows"]["value"], one["attention_tile_keys"]["value"])
assert all(0.5 < t < 64 for t in tile), tile
plans = [json.load(open(f"{out}/plan_{r}.json"))["deck"] for r in (1, 2)]
# the flow noise's draws on the host (~30 ns a draw here) and what the plan charges for them:
# tiny_gr00t draws horizon 8 x action dim 8 a sample
draw = one["fixed_costs"]["noise_draw_s"]["value"]
assert 1e-10 < draw < 1e-6, draw
noise = plans[0]["fixed_costs"]
assert noise["noise_draws"] == 64 * plans[0]["config"]["samples_per_rank"], noise
assert math.isclose(noise["seconds"]["noise_draws"], noise["noise_draws"] * draw, rel_tol=1e-9), noise
# Two ranks time-sharing the core do the global batch's work on the same core as one rank (each
# half of it at half the core): no faster, and they wait for each other in the collectives,
# where one rank only copies; their collectives run under their compute (the time-sharing core
# cost), so part of them is covered; the early rank's polls in the closing one while its partner
# computes (its calls' core seconds) are half that wait and half the partner's backward.
steps = [p["seconds"]["step"] for p in plans]
assert steps[1] > 0.9 * steps[0], steps
assert plans[1]["phases"]["comm_exposed"] > plans[0]["phases"]["comm_exposed"], [p["phases"] for p in plans]
seconds = plans[1]["seconds"]
assert seconds["partner_polls"] > 0 and plans[0]["seconds"]["partner_polls"] == 0, [p["seconds"] for p in plans]
assert seconds["comm_exposed"] - seconds["partner_polls"] / 2 < seconds["comm_total"], seconds
print("one core: step %.1f ms at 1 rank, %.1f ms at 2 ranks" % (1e3 * plans[0]["seconds"]["step"], 1e3 * plans[1]["seconds"]["step"]))
PY
echo "ok: hwprobe on one core"
