#!/usr/bin/env bash
# A tiny 2-rank ZeRO-3 run writes a trace per rank; merged, they are valid trace-event JSON with
# both ranks and, on each, every phase of the step, the model's units forward and backward, and
# collectives carrying their bytes and bucket. A rank file cut as a kill leaves it (no closing
# bracket, a half-written event) still merges.
#   trace_test.sh BUILD_DIR
set -euo pipefail
build=$1
name=trace-test
rm -rf "outputs/$name"
mpirun --oversubscribe -np 2 -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$build/embtrain" inputs/tiny_gr00t.in \
  --set train.steps=4 --set train.global_batch=8 --set train.shard=full --set run.name="$name" >/dev/null
/usr/bin/python3 profiling/merge_traces.py "outputs/$name" >/dev/null
/usr/bin/python3 - "outputs/$name" <<'PY'
import json, sys, subprocess, shutil, os
run = sys.argv[1]
events = json.load(open(f"{run}/trace.json"))["traceEvents"]
for rank in (0, 1):
    mine = [e for e in events if e.get("pid") == rank and e["ph"] == "X"]
    names = {e["name"] for e in mine if e["cat"] == "phase"}
    missing = {"init", "data_wait", "fwd", "bwd", "optim", "step"} - names
    assert not missing, f"rank {rank}: no {missing} phase events"
    units = [e for e in mine if e["cat"] == "unit"]
    assert any(e["name"].startswith("fwd unit") for e in units) and any(e["name"].startswith("bwd unit") for e in units), rank
    coll = [e for e in mine if e["cat"] == "collective"]
    assert {e["args"]["op"] for e in coll} >= {"all_gather", "reduce_scatter"}, rank
    assert all(e["args"]["bytes"] > 0 and e["args"]["bucket"] >= 0 for e in coll), rank
    assert all(e["dur"] >= 0 and e["ts"] > 1.6e15 for e in mine), "timestamps are wall-clock microseconds"
    steps = sum(1 for e in mine if e["name"] == "step")
    assert steps == 4, f"rank {rank}: {steps} step events"
    batches = [e["args"] for e in events if e.get("pid") == rank and e["name"] == "batch"]
    assert [b["step"] for b in batches] == [1, 2, 3, 4], f"rank {rank}: batch events {batches}"
    # 8 samples a step on 2 ranks, 4 each; a tiny_gr00t sample's query is its state, 4 future
    # and 8 action tokens (MODEL.md), its context its prompt's length, which varies
    assert all(b["micro_batches"] == 1 and b["query_tokens"] == 4 * 13 and b["context_tokens"] > 0 and
               b["real_tokens"] == b["query_tokens"] + b["context_tokens"] for b in batches), batches
    assert len({b["context_tokens"] for b in batches}) > 1, batches
# What a kill leaves: no closing bracket, the last event cut short.
killed = f"{run}-killed"
shutil.rmtree(killed, ignore_errors=True)
os.makedirs(f"{killed}/trace")
text = open(f"{run}/trace/rank1.json").read().rstrip().rstrip("]").rstrip()
open(f"{killed}/trace/rank1.json", "w").write(text[:-20])
subprocess.run([sys.executable, "profiling/merge_traces.py", killed], check=True, stdout=subprocess.DEVNULL)
assert len(json.load(open(f"{killed}/trace.json"))["traceEvents"]) > 10
shutil.rmtree(killed)
print("PASS: 2 ranks, phases, units and collectives in the merged trace")
PY
