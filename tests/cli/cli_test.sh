#!/usr/bin/env bash
# End-to-end checks of the embtrain executable, one named case per ctest entry:
#   cli_test.sh BUILD_DIR CASE
# Each case fails with a message saying what was expected. Runs from the repository root.
set -uo pipefail
build=$1
case_name=$2
source "$(dirname "$0")/cli_lib.sh"

# freeze_one_rank [--set ...]: a 2-rank tiny_gr00t run into $tmp/out/cli-test-frozen; once it
# trains, SIGSTOP of one rank (its rank number in $stopped). The job must end non-zero within
# 50 s with no rank left (mpirun's code in $code, its output in $tmp/out.txt).
freeze_one_rank() {
  local start pid guard ranks
  start=$(date +%s)
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=100000 --set run.name=cli-test-frozen \
    --set run.log_every=1 --set run.output_dir="$tmp/out" --set train.ckpt_dir="$tmp/ckpt" "$@" >"$tmp/out.txt" 2>&1 &
  pid=$!
  for _ in $(seq 150); do grep -q "^step" "$tmp/out.txt" 2>/dev/null && break; sleep 0.2; done
  ranks=($(rank_pids $pid))
  [ ${#ranks[@]} -eq 2 ] || fail "expected 2 rank processes under mpirun, found: ${ranks[*]}"
  stopped=$(tr '\0' '\n' <"/proc/${ranks[1]}/environ" | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
  kill -STOP "${ranks[1]}"
  ( sleep 60; kill -9 $pid "${ranks[@]}" 2>/dev/null ) >/dev/null 2>&1 &
  guard=$!
  wait $pid
  code=$?
  kill $guard 2>/dev/null
  any_alive() { local r; for r; do kill -0 "$r" 2>/dev/null && return 0; done; return 1; }
  for _ in $(seq 50); do any_alive "${ranks[@]}" || break; sleep 0.1; done
  any_alive "${ranks[@]}" && { kill -9 "${ranks[@]}" 2>/dev/null; fail "a rank outlived the job by 5 s"; }
  [ $code -ne 0 ] || fail "exit code 0 with a frozen rank"
  [ $(($(date +%s) - start)) -lt 50 ] || fail "the job took more than 50 s to end (hang?)"
}

case "$case_name" in
help)
  out=$("$embtrain" --help) || fail "--help exited $?"
  expect_contains "$out" "embtrain DECK"
  expect_contains "$out" "tokens_per_mb"
  expect_contains "$out" "steps"
  ;;
bad_deck_two_ranks)
  printf '[model]\npreset = tiny_gr00t\n[train]\nstpes = 3\n' >"$tmp/bad.in"
  "${mpirun[@]}" -np 2 "$embtrain" "$tmp/bad.in" >"$tmp/out" 2>"$tmp/err"
  code=$?
  [ $code -eq 2 ] || fail "exit code $code, expected 2"
  n=$(grep -c "embtrain: error: $tmp/bad.in:4: unknown key train.stpes (did you mean train.steps?)" "$tmp/err")
  [ "$n" -eq 1 ] || fail "expected the error line exactly once (rank 0), got $n: $(cat "$tmp/err")"
  ;;
bad_cli)
  "$embtrain" inputs/tiny_gr00t.in --no-such-flag >/dev/null 2>"$tmp/err"
  code=$?
  [ $code -eq 2 ] || fail "exit code $code, expected 2"
  expect_contains "$(cat "$tmp/err")" "embtrain --help"
  ;;
print_deck_round_trip)
  "$embtrain" inputs/tiny_wan.in --set train.lr=2e-4 --print-deck >"$tmp/a.in" || fail "--print-deck exited $?"
  expect_contains "$(cat "$tmp/a.in")" "lr = 0.0002"
  "$embtrain" "$tmp/a.in" --print-deck | grep -v '^#' | sed 's/ *#.*//' >"$tmp/b" || fail "resolved deck does not parse"
  grep -v '^#' "$tmp/a.in" | sed 's/ *#.*//' | diff - "$tmp/b" >/dev/null || fail "resolved deck changes when parsed again"
  ;;
plan)
  out=$("$embtrain" inputs/dreamzero14b.in --plan --set train.ranks=64) || fail "--plan exited $?"
  expect_contains "$out" "dreamzero14b"
  expect_contains "$out" "64"
  expect_contains "$out" "fixed costs"
  # On a GPU the fixed costs count kernel launches, CUDA graph nodes under run.cuda_graphs.
  out=$("$embtrain" inputs/dreamzero14b.in --plan --set train.ranks=64 --set plan.hardware=h100_sxm) ||
    fail "--plan on h100_sxm exited $?"
  expect_contains "$out" "kernel launches"
  out=$("$embtrain" inputs/dreamzero14b.in --plan --set train.ranks=64 --set plan.hardware=h100_sxm \
    --set run.cuda_graphs=on) || fail "--plan with graphs exited $?"
  expect_contains "$out" "graph kernel nodes"
  # DreamZero's frozen encoders beside the DiT; model.encoders = online: costed in the step by
  # --plan; training needs the DreamZero layout (tiny_wan has none: one line, exit 2).
  out=$("$embtrain" inputs/dreamzero14b.in --plan --set train.ranks=64 --set model.encoders=online) ||
    fail "--plan with model.encoders = online exited $?"
  expect_contains "$out" "encoders (DreamZero's frozen Wan2.1 VAE, umT5-XXL, CLIP ViT-H/14"
  expect_contains "$out" "model.encoders = online: this deck's step runs them (the encoders phase)"
  "$embtrain" inputs/tiny_wan.in --set model.encoders=online >/dev/null 2>"$tmp/err"
  code=$?
  [ $code -eq 2 ] || fail "training with model.encoders = online: exit code $code, expected 2"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "expected one error line, got: $(cat "$tmp/err")"
  expect_contains "$(cat "$tmp/err")" "model.encoders: online computes DreamZero's inputs (I2V y, CLIP context): it needs the DreamZero layout"
  ;;
threads)
  # OpenMP threads inside a rank (every test else runs one): the kernels' threaded loops above
  # their thresholds (a per-thread buffer that every worker but the caller lacked crashed both decks
  # in the first backward at OMP_NUM_THREADS=2). Each step's loss as at one thread, but for the
  # order of the threads' partial sums.
  for deck in tiny_gr00t tiny_wan; do
    for threads in 1 2; do
      OMP_NUM_THREADS=$threads "$embtrain" "inputs/$deck.in" --set train.steps=20 --set train.global_batch=8 \
        --set run.log_every=10 --set run.output_dir="$tmp/threads" --set run.name="$deck-$threads" \
        >"$tmp/out" 2>&1 || fail "$deck at OMP_NUM_THREADS=$threads: exited $?: $(tail -3 "$tmp/out")"
    done
    /usr/bin/python3 - "$tmp/threads/$deck-1/loss.csv" "$tmp/threads/$deck-2/loss.csv" <<'PY' || fail "$deck: losses at 2 threads"
import csv, math, sys
one, two = ([float(r["loss"]) for r in csv.DictReader(open(p))] for p in sys.argv[1:])
assert len(one) == len(two) == 20, (len(one), len(two))
worst = max(abs(a - b) / abs(a) for a, b in zip(one, two))
assert all(math.isfinite(b) for b in two) and worst < 1e-4, f"a step's loss differs by {worst:.2e} (relative) from 1 thread"
PY
  done
  ;;
train_two_ranks)
  for deck in tiny_gr00t tiny_wan; do
    name="cli-test-$deck"
    rm -rf "outputs/$name" "outputs/$name-2"
    for attempt in 1 2; do
      "${mpirun[@]}" -np 2 "$embtrain" "inputs/$deck.in" --set train.steps=30 --set train.global_batch=8 \
        --set run.log_every=10 --set run.name="$name" \
        >"$tmp/out" 2>&1 || fail "$deck: training exited $?: $(tail -5 "$tmp/out")"
    done
    for dir in "outputs/$name" "outputs/$name-2"; do  # the second run never reuses the first's directory
      for f in deck.resolved timings.csv summary.json train.log loss.csv; do
        [ -s "$dir/$f" ] || fail "$dir/$f missing or empty"
      done
    done
    grep -q "^step 30/30 | loss " "outputs/$name/train.log" || fail "no progress line for step 30 in train.log"
    rows=$(($(wc -l <"outputs/$name/timings.csv") - 1))
    [ "$rows" -eq $((2 * 31 * 13)) ] || fail "timings.csv has $rows rows, expected 2 ranks x 31 steps x 13 phases"
    /usr/bin/python3 - "outputs/$name/summary.json" "outputs/$name/timings.csv" <<'PY' || fail "summary.json content"
import collections, csv, json, sys
s = json.load(open(sys.argv[1]))
# Every step's parts (core/timer.hpp kStepParts) sum to the step, on every rank.
parts = {"data_wait", "backbone", "encoders", "h2d", "fwd", "bwd", "comm_exposed", "optim", "other"}
total, step = collections.defaultdict(float), {}
for r in csv.DictReader(open(sys.argv[2])):
    key = (r["rank"], r["step"])
    if r["phase"] in parts: total[key] += float(r["seconds"])
    if r["phase"] == "step": step[key] = float(r["seconds"])
assert all(abs(total[k] - step[k]) <= 1e-6 * max(1.0, step[k]) for k in step if step[k] > 0), "parts do not sum to the step"
assert s["ranks"] == 2 and s["steps"] == 30, s
assert s["samples"] == 30 * 8, s["samples"]
assert s["samples_per_s"] > 0 and s["tokens_per_s"] > 0
for p in ("data_wait", "fwd", "bwd", "comm_exposed", "comm_total", "optim", "step"):
    assert set(s["phases"][p]["per_step"]) == {"min", "median", "max", "mean"}, p
assert s["phases"]["bwd"]["rank_total"]["min"] > 0
PY
    rm -rf "outputs/$name" "outputs/$name-2"
  done
  ;;
op_profile)
  # run.profile_ops on 2 ranks, one micro-batch a step: every rank's profile of steps 2-12, its
  # passes' linears and attention paired, its phases those timings.csv holds, a line in the log.
  for deck in tiny_gr00t tiny_wan; do
    name="cli-test-profile-$deck"
    rm -rf "outputs/$name"
    "${mpirun[@]}" -np 2 "$embtrain" "inputs/$deck.in" --set train.steps=12 --set train.global_batch=8 \
      --set data.tokens_per_mb=4096 --set run.profile_ops=on --set run.name="$name" \
      >"$tmp/out" 2>&1 || fail "$deck: training exited $?: $(tail -5 "$tmp/out")"
    grep -q "op profile, ms per step over steps 2-12: .*fwd [0-9.]* (gemm [0-9.]*, attention [0-9.]*, .*outside ops" \
      "outputs/$name/train.log" || fail "$deck: no op profile line in train.log: $(grep 'op profile' "outputs/$name/train.log")"
    /usr/bin/python3 - "outputs/$name" <<'PY' || fail "$deck: op_profile content"
import collections, csv, re, sys
run = sys.argv[1]
params = int(re.search(r"(\d+) parameters", open(f"{run}/train.log").read()).group(1))
optimizer_mb = 0
for rank in (0, 1):
    rows = list(csv.DictReader(open(f"{run}/op_profile/rank{rank}.csv")))
    calls = {(r["phase"], r["op"]): float(r["calls_per_step"]) for r in rows if r["op"]}
    ms = collections.defaultdict(float)
    for r in rows:
        ms[(r["phase"], r["kind"])] += float(r["ms_per_step"])
    # One micro-batch a step: whole calls; each linear and attention forward has its backward.
    assert all(c == int(c) and c > 0 for c in calls.values()), calls
    for fwd, bwd in (("linear_forward", "linear_backward"), ("attention_forward", "attention_backward")):
        assert calls[("fwd", fwd)] == calls[("bwd", bwd)] > 0, (fwd, calls)
    assert calls[("optim", "adamw_step")] >= 1, calls
    # Each op's bytes: its views' (every op is given some), at the rate they and its time make.
    for r in rows:
        if r["op"]:
            mb, ms_op, rate = float(r["mb_per_step"]), float(r["ms_per_step"]), float(r["gb_per_s"])
            assert mb > 0 and abs(rate - mb / ms_op) <= 1e-4 * rate, r
    optimizer_mb += next(float(r["mb_per_step"]) for r in rows if r["op"] == "adamw_step")
    for phase in ("fwd", "bwd"):
        in_ops = sum(v for (p, k), v in ms.items() if p == phase and k not in ("phase", "outside ops"))
        assert ms[(phase, "gemm")] > 0 and ms[(phase, "attention")] > 0, (phase, ms)
        assert abs(in_ops + ms[(phase, "outside ops")] - ms[(phase, "phase")]) < 1e-3, (phase, ms)
        assert 0 <= ms[(phase, "outside ops")] < 0.5 * ms[(phase, "phase")], (phase, ms)
    # The phases are timings.csv's: its mean over steps 2-12 on this rank.
    timed = collections.defaultdict(list)
    for r in csv.DictReader(open(f"{run}/timings.csv")):
        if int(r["rank"]) == rank and 2 <= int(r["step"]) <= 12:
            timed[r["phase"]].append(float(r["seconds"]))
    for phase in ("fwd", "bwd", "optim"):
        mean = 1e3 * sum(timed[phase]) / len(timed[phase])
        assert abs(ms[(phase, "phase")] - mean) <= 1e-3 * max(1.0, mean), (phase, ms[(phase, "phase")], mean)
# AdamW reads and writes each owned parameter, its gradient and two moments in fp32 once a step:
# the ranks' shards together, every parameter (the tiny decks train all of theirs).
assert abs(optimizer_mb * 1e6 - 16 * params) <= 1e-4 * 16 * params, (optimizer_mb, params)
PY
    rm -rf "outputs/$name"
  done
  ;;
stop_signal)
  name=cli-test-signal
  rm -rf "outputs/$name" "outputs/ckpt/$name"  # a checkpoint of an earlier build's run would be refused
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=100000 --set run.log_every=1 --set run.name=$name \
    >"$tmp/out" 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q "^step" "$tmp/out" 2>/dev/null && break; sleep 0.2; done
  kill -USR1 $pid  # mpirun forwards SIGUSR1 to every rank, like Slurm's --signal
  wait $pid
  code=$?
  [ $code -eq 0 ] || fail "exit code $code after SIGUSR1, expected a clean 0: $(tail -5 "$tmp/out")"
  expect_contains "$(cat "$tmp/out")" "received a stop signal: stopping after step"
  [ -s "outputs/$name/summary.json" ] || fail "no summary.json after the stop"
  rm -rf "outputs/$name" "outputs/ckpt/$name"
  ;;
missing_data_fails_fast)
  start=$(date +%s)
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set data.paths=/nonexistent/x.h5 >/dev/null 2>"$tmp/err"
  code=$?
  [ $code -ne 0 ] || fail "exit code 0 for a missing dataset"
  [ $(($(date +%s) - start)) -lt 30 ] || fail "took more than 30 s to fail"
  expect_contains "$(cat "$tmp/err")" "/nonexistent/x.h5"
  ;;
nan_stop)
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=8 --set debug.inject_nan_step=5 \
    --set train.shard=full --set run.name=cli-test-nan >"$tmp/out" 2>&1
  code=$?
  [ $code -ne 0 ] || fail "a NaN gradient was trained on (exit 0)"
  expect_contains "$(cat "$tmp/out")" "step 5: non-finite gradient norm"
  # rank 0 poisoned its first owned gradient element: flat element 0, the first tensor
  expect_contains "$(cat "$tmp/out")" "; first non-finite gradient: vlln.weight); stopping"
  rm -rf outputs/cli-test-nan
  ;;
nan_skip)
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=8 --set debug.inject_nan_step=5 \
    --set train.nan_policy=skip --set run.log_every=1 --set run.name=cli-test-nan-skip >"$tmp/out" 2>&1 ||
    fail "nan_policy = skip exited non-zero: $(tail -3 "$tmp/out")"
  expect_contains "$(cat "$tmp/out")" "step 5: non-finite loss or gradient"
  expect_contains "$(cat "$tmp/out")" "update skipped"
  grep -q "^step 8/8 | loss [0-9]" "$tmp/out" || fail "training did not go on with finite losses after the skip"
  rm -rf outputs/cli-test-nan-skip
  ;;
rank_failure)
  start=$(date +%s)
  "${mpirun[@]}" -np 3 "$embtrain" inputs/tiny_gr00t.in --set train.steps=50 --set debug.fail_rank=1 \
    --set debug.fail_step=3 --set run.name=cli-test-fail >"$tmp/out" 2>&1
  code=$?
  [ $code -ne 0 ] || fail "exit code 0 although rank 1 failed"
  [ $(($(date +%s) - start)) -lt 30 ] || fail "the other ranks took more than 30 s to stop (hang?)"
  expect_contains "$(cat "$tmp/out")" "embtrain: error on rank 1: debug.fail_rank: injected failure on rank 1 at step 3"
  [ "$(cat outputs/cli-test-fail/FAILED)" = "embtrain: error on rank 1: debug.fail_rank: injected failure on rank 1 at step 3" ] ||
    fail "the run directory is not marked FAILED with the error"
  rm -rf outputs/cli-test-fail
  ;;
loss_curve_equivalence)
  # The same 20 steps on 1-4 ranks, every shard mode, and micro-batch splits 1x8 vs 4x2.
  train eq-ref 1 --set train.shard=none --set data.tokens_per_mb=4096
  train eq-split 1 --set train.shard=none --set data.tokens_per_mb=200
  same_losses eq-split eq-ref
  for np in 2 3 4; do
    for shard in none grads full; do
      train "eq-$np-$shard" "$np" --set train.shard=$shard --set train.bucket_mb=0.1
      same_losses "eq-$np-$shard" eq-ref
      rm -rf "outputs/eq-$np-$shard"
    done
  done
  rm -rf outputs/eq-ref outputs/eq-split
  ;;
resume_reshard)
  # 20 uninterrupted steps on 2 ranks = 10 steps on 2 ranks + 10 resumed on 3 ranks (ZeRO-3).
  ckpt="$tmp/ckpt"
  train rs-full 2 --set train.shard=grads --set train.ckpt_every=10 --set train.ckpt_dir="$ckpt/full"
  train rs-first 2 --set train.shard=grads --set train.steps=10 --set train.ckpt_every=10 --set train.ckpt_dir="$ckpt/split"
  train rs-second 3 --set train.shard=full --set train.resume=auto --set train.ckpt_every=10 --set train.ckpt_dir="$ckpt/split"
  expect_contains "$(cat "$tmp/rs-second.out")" "resumed from $ckpt/split/step_00000010.h5 (step 10, saved on 2 ranks)"
  same_losses rs-second rs-full 11
  /usr/bin/python3 - "$ckpt/full/step_00000020.h5" "$ckpt/split/step_00000020.h5" <<'PY' || fail "final parameters differ"
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
assert a.attrs["step"] == b.attrs["step"] == 20
scale = max(np.abs(a["params"][n][...]).max() for n in a["params"])
worst = max(np.abs(a["params"][n][...] - b["params"][n][...]).max() for n in a["params"])
print(f"final parameters: max difference {worst:.2e} (largest parameter {scale:.2f})")
assert worst <= 1e-5 * scale, worst
PY
  rm -rf outputs/rs-full outputs/rs-first outputs/rs-second
  ;;
dump_parity)
  # `embtrain DECK --dump` on the real dataset's first step with the deck's own initialisation:
  # gr00t's whole step (several micro-batches, dropout on) against upstream's computation, wan's
  # one micro-batch (2 samples) against MODEL.md in PyTorch.
  "$embtrain" inputs/tiny_gr00t.in --dump "$tmp/tiny_gr00t.h5" >"$tmp/out" 2>&1 ||
    fail "tiny_gr00t --dump exited $?: $(cat "$tmp/out")"
  expect_contains "$(cat "$tmp/out")" "wrote $tmp/tiny_gr00t.h5"
  /usr/bin/python3 tests/upstream/gr00t_dump_parity.py "$tmp/tiny_gr00t.h5" >"$tmp/parity" 2>&1 ||
    fail "tiny_gr00t: upstream parity failed: $(tail -5 "$tmp/parity")"
  "$embtrain" inputs/tiny_wan.in --set train.global_batch=2 --dump "$tmp/tiny_wan.h5" >"$tmp/out" 2>&1 ||
    fail "tiny_wan --dump exited $?: $(cat "$tmp/out")"
  expect_contains "$(cat "$tmp/out")" "wrote $tmp/tiny_wan.h5"
  /usr/bin/python3 tests/model/parity_torch.py "$tmp/tiny_wan.h5" >"$tmp/parity" 2>&1 ||
    fail "tiny_wan: PyTorch parity failed: $(tail -5 "$tmp/parity")"
  ;;
dump_errors)
  "$embtrain" inputs/tiny_gr00t.in --dump /nonexistent/dir/x.h5 >/dev/null 2>"$tmp/err"
  code=$?
  [ $code -ne 0 ] || fail "an unwritable dump path exited 0"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "expected one error line, got: $(cat "$tmp/err")"
  expect_contains "$(cat "$tmp/err")" "/nonexistent/dir/x.h5"
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --dump /nonexistent/dir/x.h5 >/dev/null 2>"$tmp/err"
  code=$?
  [ $code -ne 0 ] || fail "an unwritable dump path on 2 ranks exited 0"
  n=$(grep -c "^embtrain: error: /nonexistent/dir/x.h5: cannot create the dump file" "$tmp/err")
  [ "$n" -eq 1 ] || fail "2 ranks: expected the error line exactly once (rank 0), got $n: $(cat "$tmp/err")"
  "$embtrain" inputs/tiny_wan.in --set model.n_heads=5 --print-deck >/dev/null 2>&1 || fail "print-deck validates no model"
  "$embtrain" inputs/tiny_wan.in --set model.n_heads=5 --plan >/dev/null 2>"$tmp/err"
  [ $? -eq 2 ] || fail "inconsistent dims: expected exit code 2"
  expect_contains "$(cat "$tmp/err")" "model.n_heads"
  ;;
ckpt_runs_share_dir)
  # Runs of different seeds in one checkpoint directory: pruning and resume = auto keep to
  # their own run; a step file of another run is never replaced.
  d="$tmp/ckpt"
  run() {  # run NAME SEED STEPS EVERY [--set ...]
    local name=$1 seed=$2 steps=$3 every=$4
    shift 4
    "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.global_batch=8 --set run.name="$name" \
      --set run.output_dir="$tmp/out" --set run.seed="$seed" --set train.steps="$steps" \
      --set train.ckpt_every="$every" --set train.ckpt_dir="$d" "$@" >"$tmp/$name.out" 2>&1
  }
  run a 7 8 4 || fail "run a exited $?: $(tail -3 "$tmp/a.out")"
  run b 8 12 6 --set train.ckpt_keep=1 || fail "run b exited $?: $(tail -3 "$tmp/b.out")"
  [ "$(cd "$d" && echo step_*.h5)" = "step_00000004.h5 step_00000008.h5 step_00000012.h5" ] ||
    fail "pruning touched another run's checkpoints: $(ls "$d")"
  run b-again 8 14 6 --set train.resume=auto || fail "resuming b exited $?: $(tail -3 "$tmp/b-again.out")"
  expect_contains "$(cat "$tmp/b-again.out")" "resumed from $d/step_00000012.h5 (step 12"
  run c 9 8 4 --set train.resume=auto
  code=$?
  [ $code -eq 2 ] || fail "resume = auto of a third seed exited $code, expected 2: $(tail -3 "$tmp/c.out")"
  expect_contains "$(cat "$tmp/c.out")" "embtrain: error: train.resume = auto: $d holds checkpoints of other runs only"
  run c-named 9 9 0 --set train.resume="$d/step_00000008.h5" ||
    fail "continuing a named checkpoint of another run exited $?: $(tail -3 "$tmp/c-named.out")"
  expect_contains "$(cat "$tmp/c-named.out")" "resumed from $d/step_00000008.h5 (step 8"
  run clash 10 4 4
  code=$?
  [ $code -ne 0 ] || fail "a run replaced another run's step_00000004.h5"
  expect_contains "$(cat "$tmp/clash.out")" "checkpoint step 4: $d/step_00000004.h5 is a checkpoint of run"
  ;;
ckpt_dir_lock)
  # A second run on a checkpoint directory in use is refused with one line; the first goes on.
  # The first sleeps 50 ms a micro-batch (debug.slow_step_ms): training flat out on both cores,
  # it held the second's start-up 20 s on a 2-core machine.
  d="$tmp/ckpt"
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=100000 --set debug.slow_step_ms=50 \
    --set run.name=cli-test-lock-a \
    --set run.log_every=1 --set run.output_dir="$tmp/out" --set train.ckpt_dir="$d" >"$tmp/a.out" 2>&1 &
  pid=$!
  for _ in $(seq 150); do grep -q "^step" "$tmp/a.out" 2>/dev/null && break; sleep 0.2; done
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set run.name=cli-test-lock-b --set run.output_dir="$tmp/out" \
    --set train.ckpt_dir="$d" >"$tmp/b.out" 2>"$tmp/b.err"
  code=$?
  kill -USR1 $pid
  wait $pid || fail "the first run exited $? after SIGUSR1: $(tail -3 "$tmp/a.out")"
  [ $code -eq 2 ] || fail "the second run exited $code, expected 2: $(cat "$tmp/b.err")"
  n=$(grep -c "^embtrain: error: $d: checkpoint directory in use by another run (pid " "$tmp/b.err")
  [ "$n" -eq 1 ] || fail "expected one error line, got: $(cat "$tmp/b.err")"
  [ ! -e "$tmp/out/cli-test-lock-b" ] || fail "the refused run left a run directory"
  [ ! -s "$d/.lock" ] || fail "the lock file still names a holder after the run: $(cat "$d/.lock")"
  ;;
disk_full)
  # The checkpoint directory is a 1 MiB tmpfs (a real full file system, mounted in a private
  # mount namespace: unshare -m as root, -rm otherwise), smaller than one checkpoint: the save
  # is refused before any file exists, with one line; the run stops or, by deck choice, goes on.
  d="$tmp/small"
  mkdir -p "$d"
  small_fs_run() {  # small_fs_run OUT ARGS...: embtrain on 2 ranks, ckpt_dir on the tmpfs; lists what is left there
    local out=$1
    shift
    unshare -rm bash -c 'd=$1 left=$2; shift 2; mount -t tmpfs -o size=1m tmpfs "$d" || exit 99
      "$@"; rc=$?; ls -A "$d" >"$left"; exit $rc' _ "$d" "$tmp/left" "${mpirun[@]}" -np 2 "$embtrain" \
      inputs/tiny_gr00t.in --set train.steps=4 --set train.global_batch=8 --set run.output_dir="$tmp/out" \
      --set train.ckpt_every=2 --set train.ckpt_dir="$d" "$@" >"$out" 2>&1
  }
  small_fs_run "$tmp/stop.txt" --set run.name=cli-test-full
  code=$?
  [ $code -ne 99 ] || fail "cannot mount a tmpfs: $(cat "$tmp/stop.txt")"
  [ $code -ne 0 ] || fail "a full checkpoint directory exited 0 with train.ckpt_on_error = stop"
  [ "$(grep -c "^embtrain: error" "$tmp/stop.txt")" -eq 1 ] || fail "expected one error line: $(cat "$tmp/stop.txt")"
  grep -qE "^embtrain: error: checkpoint step 2: no space left on $d, needed [0-9]+ MB, [0-9]+ MB free$" "$tmp/stop.txt" ||
    fail "expected the no-space line: $(cat "$tmp/stop.txt")"
  # A failed run leaves no lock (issue 35); the directory existed before it, so it stays.
  [ -z "$(cat "$tmp/left")" ] || fail "files left in the full directory: $(cat "$tmp/left")"
  small_fs_run "$tmp/go.txt" --set run.name=cli-test-full-go --set train.ckpt_on_error=continue ||
    fail "train.ckpt_on_error = continue exited $?: $(tail -3 "$tmp/go.txt")"
  expect_contains "$(cat "$tmp/go.txt")" "checkpoint step 4: no space left on $d"
  expect_contains "$(cat "$tmp/go.txt")" "training goes on (train.ckpt_on_error = continue)"
  grep -q "^step 4/4 | loss" "$tmp/go.txt" || fail "training did not reach step 4"
  [ "$(cat "$tmp/left")" = ".lock" ] || fail "files left in the full directory: $(cat "$tmp/left")"
  ;;
straggler_report)
  # Rank 1 sleeps 30 ms in each micro-batch's forward (debug.slow_rank): the run's last lines
  # say where a step's time went and name rank 1 as the slowest, and summary.json holds every
  # rank's compute a step; a rank the run does not have is refused at the start.
  name=cli-test-straggler
  rm -rf "outputs/$name"
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=12 --set train.global_batch=8 \
    --set run.name=$name --set debug.slow_step_ms=30 --set debug.slow_rank=1 >"$tmp/out" 2>&1 ||
    fail "training exited $?: $(tail -3 "$tmp/out")"
  grep -qE "^ranks' compute per step \(fwd \+ bwd \+ optim, each rank's median\): median [0-9.]+ ms; slowest rank 1 on $(hostname) [0-9.]+ ms \(\+[0-9.]+ %\); fastest rank 0 [0-9.]+ ms$" \
    "$tmp/out" || fail "expected the line naming rank 1 the slowest: $(tail -4 "$tmp/out")"
  /usr/bin/python3 - "outputs/$name/summary.json" "$tmp/out" "$(hostname)" <<'PY' || fail "summary.json's rank_compute or the time line"
import json, re, sys
c = json.load(open(sys.argv[1]))["rank_compute"]
fast, slow = c["per_rank"]
assert c["slowest"] == {"rank": 1, "host": sys.argv[3], "seconds": slow, "over_median": slow / c["median"] - 1}, c
assert c["fastest"] == {"rank": 0, "host": sys.argv[3], "seconds": fast}, c
assert abs(c["median"] - (fast + slow) / 2) < 1e-12, c
# At least one micro-batch a step, each 30 ms of sleep on top of the work rank 0 does too.
assert slow - fast >= 0.029 and 0 < fast < 0.2, c
# The time line's parts sum to its step (each rounded to 0.01 ms).
m = re.search(r"^time per step \(mean over ranks and steps\): ([0-9.]+) ms = (.*) ms$", open(sys.argv[2]).read(), re.M)
assert m, "no time per step line"
parts = [float(p.split()[-1]) for p in m.group(2).split(" + ")]
assert {p.split()[0] for p in m.group(2).split(" + ")} >= {"fwd", "bwd", "comm_exposed"}, m.group(2)
assert abs(sum(parts) - float(m.group(1))) <= 0.006 * (len(parts) + 1), (parts, m.group(1))
PY
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=2 --set debug.slow_rank=2 >"$tmp/out" 2>&1
  code=$?
  [ $code -eq 2 ] || fail "debug.slow_rank = 2 of 2 ranks: exit code $code, expected 2"
  [ "$(grep -c "^embtrain: error: --set debug.slow_rank=2: debug.slow_rank: 2 is no rank of this run's 2 (0 to 1; -1 slows every rank)$" "$tmp/out")" -eq 1 ] ||
    fail "expected one line refusing debug.slow_rank = 2: $(cat "$tmp/out")"
  ;;
watchdog_frozen_rank)
  # SIGSTOP of one rank: the other's watchdog aborts the job within its deadline.
  freeze_one_rank --set train.watchdog_s=3
  # The waiting rank names the frozen one (its node's progress board).
  grep -qE "^embtrain: error on rank $((1 - stopped)): watchdog: step [0-9]+, phase [a-z_]+ has waited [0-9.]+ s for .*\(over 2 rank\(s\)\); waiting for rank $stopped \(frozen: no heartbeat for [0-9.]+ s; last in phase [a-z_]+ of step [0-9]+\), deadline 3 s" \
    "$tmp/out.txt" || fail "expected the watchdog line naming rank $stopped: $(tail -5 "$tmp/out.txt")"
  ;;
frozen_peer)
  # SIGSTOP of one rank, with the watchdog's deadline far away (300 s): its peer reports it as
  # soon as its heartbeat is train.frozen_peer_s old, in one line naming rank and host, and the
  # run directory says FAILED.
  freeze_one_rank --set train.frozen_peer_s=3
  line="^embtrain: error on rank $((1 - stopped)): watchdog: rank $stopped on host $(hostname) is frozen: no heartbeat for [0-9.]+ s \(last in phase [a-z_]+ of step [0-9]+\), over 3 s \(train.frozen_peer_s\) while this rank waits in phase [a-z_]+ of step [0-9]+; "
  [ "$(grep -cE "$line" "$tmp/out.txt")" -eq 1 ] || fail "expected one frozen-peer line naming rank $stopped: $(tail -5 "$tmp/out.txt")"
  [ "$(grep -c "^embtrain: error" "$tmp/out.txt")" -eq 1 ] || fail "expected one error line: $(grep error "$tmp/out.txt")"
  grep -qE "$line" "$tmp"/out/cli-test-frozen/FAILED || fail "no FAILED naming the frozen rank in the run directory"
  ;;
sigterm_checkpoint)
  # SIGTERM (what schedulers and users send; here twice, 50 ms apart) or Ctrl-C to a plain
  # `mpirun` of the shipped environment (scripts/mpi_env.sh: scripts/bin/mpirun) checkpoints
  # every rank at the next step boundary and exits 0; resume = auto then continues the run
  # exactly: its losses equal those of an uninterrupted run.
  source scripts/mpi_env.sh
  [ "$(command -v mpirun)" = "$PWD/scripts/bin/mpirun" ] || fail "mpi_env.sh does not put scripts/bin/mpirun first on PATH"
  # Another checkout's environment sourced as well, its wrapper first on PATH: each wrapper skips
  # every embtrain wrapper, so `mpirun` reaches Open MPI's at once instead of the two calling
  # each other without end.
  mkdir -p "$tmp/other/scripts/bin"
  cp scripts/bin/mpirun "$tmp/other/scripts/bin/" && cp scripts/mpirun_graceful.sh "$tmp/other/scripts/"
  version=$(PATH="$tmp/other/scripts/bin:$PATH" timeout 20 mpirun --version 2>&1) ||
    fail "mpirun with two checkouts' wrappers on PATH exited $?: $version"
  expect_contains "$version" "(Open MPI)"
  term_train() {  # (term_train NAME [--set ...]): 30 steps of tiny_gr00t into outputs/NAME (40 ms or more
    # each, so that the signals at step 3 arrive mid-run on a fast machine too), in a process
    local name=$1  # group of its own with SIGINT at its default, as a terminal's foreground job
    shift
    exec /usr/bin/python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.setpgid(0, 0); os.execvp(sys.argv[1], sys.argv[1:])' \
      "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=30 --set run.log_every=1 --set debug.slow_step_ms=40 \
      --set run.name="$name" --set train.ckpt_dir="$tmp/ckpt-${name%-resumed}" "$@" >"$tmp/$name.txt" 2>&1
  }
  term_run() {  # term_run NAME SIGNAL COUNT TARGET: COUNT SIGNALs 50 ms apart at step 3 to TARGET: mpirun's
    local name=$1 signal=$2 count=$3 target=$4  # pid, or its process group (-) as a terminal's Ctrl-C
    rm -rf "outputs/$name" "outputs/$name-resumed"
    term_train "$name" &
    local pid=$!
    for _ in $(seq 300); do grep -qE "^step +3/" "$tmp/$name.txt" 2>/dev/null && break; sleep 0.1; done
    for _ in $(seq "$count"); do kill -"$signal" -- "${target%pid}$pid"; sleep 0.05; done
    wait $pid || fail "$name: mpirun exited $? after $count SIG$signal: $(tail -5 "$tmp/$name.txt")"
    expect_contains "$(cat "$tmp/$name.txt")" "received a stop signal: stopping after step"
    local latest
    latest=$(cat "$tmp/ckpt-$name/latest" 2>/dev/null) || fail "$name: no checkpoint after SIG$signal: $(tail -5 "$tmp/$name.txt")"
    /usr/bin/python3 -c "import h5py,sys; assert h5py.File(sys.argv[1],'r').attrs['complete']==1" "$tmp/ckpt-$name/$latest" ||
      fail "$name: $latest is not a complete checkpoint"
    (term_train "$name-resumed" --set train.resume=auto) || fail "$name: resuming exited $?: $(tail -3 "$tmp/$name-resumed.txt")"
    expect_contains "$(cat "$tmp/$name-resumed.txt")" "resumed from $tmp/ckpt-$name/$latest"
    local stopped_at
    stopped_at=$(sed 's/^step_0*\([0-9]*\)\.h5$/\1/' <<<"$latest")
    same_losses "$name" cli-test-term-whole 1 0 "$stopped_at"
    same_losses "$name-resumed" cli-test-term-whole $((stopped_at + 1)) 0
    rm -rf "outputs/$name" "outputs/$name-resumed"
  }
  rm -rf outputs/cli-test-term-whole
  (term_train cli-test-term-whole) || fail "the uninterrupted run exited $?: $(tail -3 "$tmp/cli-test-term-whole.txt")"
  term_run cli-test-term TERM 2 pid
  term_run cli-test-int INT 2 -
  rm -rf outputs/cli-test-term-whole
  ;;
embpack_concurrency)
  # Two embpack jobs writing one output, and an embpack replacing a file a training run reads:
  # the later one is refused with one line (exit 2) and the file is never mixed.
  embpack="$build/embpack"
  synth() {  # synth OUT SEED: a tiny gr00t dataset
    "$embpack" synth --family gr00t --episodes 48 --min-steps 50 --max-steps 200 --seed "$2" --embodiments 3 \
      --state-dim 16 --action-dim 8 --d-vl 32 -o "$1"
  }
  refused() {  # refused NAME EXPECTED: the output of NAME is one error line matching EXPECTED, exit 2
    [ "$(cat "$tmp/$1.code")" = 2 ] || fail "$1: exit code $(cat "$tmp/$1.code"), expected 2: $(cat "$tmp/$1.txt")"
    [ "$(grep -cE "^(embpack: |embtrain: error)" "$tmp/$1.txt")" -eq 1 ] || fail "$1: expected one error line: $(cat "$tmp/$1.txt")"
    grep -qE "$2" "$tmp/$1.txt" || fail "$1: expected '$2', got: $(cat "$tmp/$1.txt")"
  }
  # hold_lock FILE LOCK_FILE OWNER: a process holding an exclusive flock on FILE (as a running
  # embpack does) with OWNER in LOCK_FILE, until `release_lock` (the holder is the sleep itself,
  # so no orphan keeps the lock or this test's output open after it).
  hold_lock() {
    ( exec 9>>"$1"; flock -x 9; echo "$3" >"$2"; exec sleep 30 ) >/dev/null 2>&1 &
    holder=$!
    for _ in $(seq 50); do [ -s "$2" ] && break; sleep 0.1; done
  }
  release_lock() { kill $holder 2>/dev/null; wait $holder 2>/dev/null; }
  # A writer holding the output's lock: the second is refused.
  hold_lock "$tmp/a.h5.lock" "$tmp/a.h5.lock" 'pid 4242 on otherhost since 2026-01-01T00:00:00Z'
  synth "$tmp/a.h5" 1 >"$tmp/second.txt" 2>&1
  echo $? >"$tmp/second.code"
  release_lock
  refused second "^embpack: $tmp/a.h5: another embpack is writing it \(pid 4242 on otherhost since 2026-01-01T00:00:00Z\); wait for it to finish or choose another output$"
  [ ! -e "$tmp/a.h5" ] && [ ! -e "$tmp/a.h5.tmp" ] || fail "the refused embpack wrote $(ls "$tmp")"
  # Two real jobs at once: each finishes or is refused; the file is one of them, whole.
  synth "$tmp/b.h5" 1 >"$tmp/b1.txt" 2>&1 &
  first=$!
  synth "$tmp/b.h5" 2 >"$tmp/b2.txt" 2>&1
  echo $? >"$tmp/b2.code"
  wait $first
  echo $? >"$tmp/b1.code"
  for job in b1 b2; do [ "$(cat "$tmp/$job.code")" = 0 ] || refused $job "another embpack is writing it"; done
  "$embpack" verify "$tmp/b.h5" >"$tmp/verify.txt" 2>&1 || fail "the output of two embpack jobs does not verify: $(cat "$tmp/verify.txt")"
  [ ! -e "$tmp/b.h5.lock" ] || fail "the lock file stayed after the jobs ended"
  # A training run reads c.h5: embpack may not replace it until the run ends. (The run sleeps
  # 50 ms a micro-batch, as in ckpt_dir_lock: embpack must not wait for the cores.)
  cp outputs/data/tiny_gr00t.h5 "$tmp/c.h5"  # a copy: data.verify = auto would record its verify in it
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=100000 --set debug.slow_step_ms=50 \
    --set data.paths="$tmp/c.h5" --set data.verify=off \
    --set run.log_every=1 --set run.name=cli-test-concurrency --set run.output_dir="$tmp/out" --set train.ckpt_dir="$tmp/ckpt" >"$tmp/run.txt" 2>&1 &
  run=$!
  for _ in $(seq 150); do grep -q "^step" "$tmp/run.txt" 2>/dev/null && break; sleep 0.2; done
  synth "$tmp/c.h5" 3 >"$tmp/replace.txt" 2>&1
  echo $? >"$tmp/replace.code"
  refused replace "^embpack: $tmp/c.h5: a training run is reading it \(it holds a shared lock\); "
  cmp -s outputs/data/tiny_gr00t.h5 "$tmp/c.h5" || fail "the file a run reads was changed"
  kill -USR1 $run
  wait $run || fail "the training run exited $?: $(tail -3 "$tmp/run.txt")"
  # And a run does not start on a file embpack is replacing.
  hold_lock "$tmp/c.h5" "$tmp/c.h5.lock" 'pid 4343 on otherhost since 2026-01-01T00:00:00Z'
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=2 --set data.paths="$tmp/c.h5" \
    --set run.name=cli-test-concurrency2 --set run.output_dir="$tmp/out" --set train.ckpt_dir="$tmp/ckpt2" >"$tmp/start.txt" 2>&1
  echo $? >"$tmp/start.code"
  release_lock
  refused start "^embtrain: error: $tmp/c.h5: embpack is replacing this file \(pid 4343 on otherhost since 2026-01-01T00:00:00Z\); start the run when it has finished$"
  ;;
embpack_write_failure)
  # A failure on one rank in the middle of embpack's collective write (between two tables)
  # ends every rank within seconds with that rank's line, and no output appears.
  start=$(date +%s)
  EMBPACK_DEBUG_FAIL_WRITE_RANK=1 timeout 120 "${mpirun[@]}" -np 3 -x EMBPACK_DEBUG_FAIL_WRITE_RANK "$build/embpack" \
    lerobot ../shared/fixtures/lerobot/g1_v21 --threads 1 --height 48 --width 64 -o "$tmp/g1.h5" >"$tmp/out.txt" 2>&1
  code=$?
  [ $code -ne 0 ] && [ $code -ne 124 ] || fail "exit code $code (124: a rank hung): $(tail -5 "$tmp/out.txt")"
  [ $(($(date +%s) - start)) -lt 100 ] || fail "the job took more than 100 s to end (hang?)"
  [ "$(grep -c "^embpack: " "$tmp/out.txt")" -eq 1 ] || fail "expected one embpack line: $(cat "$tmp/out.txt")"
  expect_contains "$(cat "$tmp/out.txt")" "embpack: error on rank 1: EMBPACK_DEBUG_FAIL_WRITE_RANK: injected failure on rank 1 in the collective write"
  [ ! -e "$tmp/g1.h5" ] || fail "an output appeared after the failure"
  ;;
nan_data)
  # Non-finite values in the data are refused as read (data.verify = off), naming the file,
  # dataset and row.
  cp outputs/data/tiny_gr00t.h5 "$tmp/nan.h5"
  /usr/bin/python3 -c "import h5py,sys; f=h5py.File(sys.argv[1],'r+'); f['/steps/state'][5:, 0] = float('nan')" "$tmp/nan.h5"
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=3 --set train.global_batch=8 --set data.verify=off \
    --set data.paths="$tmp/nan.h5" --set run.name=cli-test-nan-data --set run.output_dir="$tmp/out" \
    --set train.nan_policy=skip >"$tmp/out.txt" 2>&1
  code=$?
  [ $code -ne 0 ] || fail "non-finite data trained to exit 0"
  grep -qE "^embtrain: error: $tmp/nan.h5:/steps/state: non-finite value in row [0-9]+ \(embpack verify" \
    "$tmp/out.txt" || fail "expected the non-finite data line: $(grep error "$tmp/out.txt")"
  ;;
nan_action_epochs)
  # One non-finite action row, train.nan_policy = stop, 2 ranks, several epochs, read as steps
  # sample it (data.verify = off; data_verify refuses it at start-up) (issue 35): the
  # step that first samples it stops the run with one line (rank 0 prints the line of the rank
  # that met it) naming the file and the row holding the value, not the row of the sample whose
  # action chunk reached it; exit 1. The failed run leaves its run directory marked FAILED and
  # no checkpoint directory or lock.
  "$build/embpack" synth --family gr00t --episodes 3 --min-steps 20 --max-steps 20 --seed 1 --embodiments 1 \
    --state-dim 16 --action-dim 8 --d-vl 32 -o "$tmp/small.h5" >/dev/null || fail "embpack synth failed"
  for row in 5 19 59; do
    cp "$tmp/small.h5" "$tmp/nan.h5"
    /usr/bin/python3 -c "import h5py,sys; h5py.File(sys.argv[1],'r+')['/steps/action'][int(sys.argv[2]), 2] = float('nan')" \
      "$tmp/nan.h5" $row
    [ "$("$build/embpack" verify "$tmp/nan.h5" 2>&1)" = "embpack: $tmp/nan.h5:/steps/action: non-finite value at row $row" ] ||
      fail "embpack verify does not name row $row"
    rm -rf "$tmp/out"
    "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set data.paths="$tmp/nan.h5" --set train.steps=40 \
      --set train.global_batch=8 --set train.nan_policy=stop --set data.verify=off --set run.name=nan \
      --set run.output_dir="$tmp/out" \
      >"$tmp/out.txt" 2>&1
    code=$?
    [ $code -eq 1 ] || fail "row $row: exit code $code, expected 1: $(tail -3 "$tmp/out.txt")"
    [ "$(grep -c "^embtrain: error" "$tmp/out.txt")" -eq 1 ] || fail "row $row: expected one error line: $(cat "$tmp/out.txt")"
    expect_contains "$(cat "$tmp/out.txt")" \
      "embtrain: error: $tmp/nan.h5:/steps/action: non-finite value in row $row (an action row of the sample at row "
    [ "$(ls -A "$tmp/out")" = nan ] || fail "row $row: the failed run left $(ls -A "$tmp/out") in run.output_dir"
    grep -qF "non-finite value in row $row" "$tmp/out/nan/FAILED" || fail "row $row: the run directory is not marked FAILED"
  done
  ;;
data_verify)
  # data.verify (issue 35): a file with one non-finite action row is refused before step 1 (auto,
  # the default: it records no verify), every rank verifying its share of the rows: one line
  # naming the file and row, exit 1, no outputs. A clean file is verified once: the verify
  # (the first run's, or embpack verify's) is recorded in it with the checksum of what was
  # checked, the same whatever the rank count; later runs skip it until the file changes;
  # full verifies always.
  "$build/embpack" synth --family gr00t --episodes 3 --min-steps 20 --max-steps 20 --seed 1 --embodiments 1 \
    --state-dim 16 --action-dim 8 --d-vl 32 -o "$tmp/small.h5" >/dev/null || fail "embpack synth failed"
  cp "$tmp/small.h5" "$tmp/nan.h5"
  /usr/bin/python3 -c "import h5py,sys; h5py.File(sys.argv[1],'r+')['/steps/action'][59, 2] = float('nan')" "$tmp/nan.h5"
  run_on() {  # run_on FILE NP [--set ...]: a 2-step run into $tmp/out
    local file=$1 np=$2
    shift 2
    rm -rf "$tmp/out"
    "${mpirun[@]}" -np "$np" "$embtrain" inputs/tiny_gr00t.in --set data.paths="$file" --set train.steps=2 \
      --set train.global_batch=8 --set run.output_dir="$tmp/out" --set train.ckpt_dir="$tmp/ckpt" "$@" >"$tmp/out.txt" 2>&1
  }
  record_of() { /usr/bin/python3 -c "import h5py,sys; print(h5py.File(sys.argv[1],'r').attrs['verified'].split(', mtime')[0])" "$1"; }
  expect_refused 1 "$tmp/nan.h5:/steps/action: non-finite value at row 59" run_on "$tmp/nan.h5" 3
  cp "$tmp/small.h5" "$tmp/clean.h5"
  run_on "$tmp/clean.h5" 3 || fail "the clean file: exited $?: $(tail -3 "$tmp/out.txt")"
  grep -qF "$tmp/clean.h5: verifying every value (data.verify) over 3 ranks" "$tmp/out.txt" || fail "no verify on 3 ranks"
  three=$(record_of "$tmp/clean.h5") || fail "the verify is not recorded"
  run_on "$tmp/clean.h5" 2 || fail "the recorded file: exited $?"
  ! grep -qF "verifying every value" "$tmp/out.txt" || fail "a recorded verify was repeated"
  run_on "$tmp/clean.h5" 2 --set data.verify=full || fail "data.verify = full: exited $?"
  grep -qF "verifying every value (data.verify) over 2 ranks" "$tmp/out.txt" || fail "data.verify = full did not verify"
  ! grep -qF "not recorded" "$tmp/out.txt" || fail "the verify was not recorded again: $(grep -F "not recorded" "$tmp/out.txt")"
  [ "$(record_of "$tmp/clean.h5")" = "$three" ] || fail "the checksum depends on the ranks: $three, $(record_of "$tmp/clean.h5")"
  cp "$tmp/small.h5" "$tmp/packed.h5"
  "$build/embpack" verify "$tmp/packed.h5" >/dev/null || fail "embpack verify rejects the clean file"
  [ "$(record_of "$tmp/packed.h5")" = "$three" ] || fail "embpack verify records $(record_of "$tmp/packed.h5"), not $three"
  run_on "$tmp/packed.h5" 2 || fail "the file embpack verified: exited $?"
  ! grep -qF "verifying every value" "$tmp/out.txt" || fail "embpack verify's record was not used"
  # A write after the verify (a NaN put in place) makes the record stale: verified again, refused.
  /usr/bin/python3 -c "import h5py,sys; h5py.File(sys.argv[1],'r+')['/steps/action'][7, 1] = float('nan')" "$tmp/packed.h5"
  expect_refused 1 "$tmp/packed.h5:/steps/action: non-finite value at row 7" run_on "$tmp/packed.h5" 2
  ;;
long_input_cut)
  # A 10 MB value that cannot be used is cut in the error line (issue 35: it was echoed whole,
  # twice): a path is shown whole up to PATH_MAX, cut beyond it, so the line stays a few KB.
  /usr/bin/python3 - "$tmp" "$PWD" <<'PY'
import sys
tmp, root = sys.argv[1:]
huge = "x" * (10 << 20)
for name, section in (("ckpt", f"[train]\nckpt_dir = {tmp}/{huge}\n"), ("paths", f"[data]\npaths = {tmp}/{huge}\n")):
    open(f"{tmp}/{name}.in", "w").write(f"include = {root}/inputs/tiny_gr00t.in\n[run]\noutput_dir = {tmp}/out\n{section}")
PY
  cut="$tmp/$(head -c $((4000 - ${#tmp} - 1)) /dev/zero | tr '\0' x)... ($((${#tmp} + 1 + (10 << 20))) bytes, truncated)"
  expect_refused 2 "$tmp/ckpt.in:5: train.ckpt_dir: checkpoint directory $cut cannot be created ($cut: cannot create directory: File name too long)" \
    "${mpirun[@]}" -np 2 "$embtrain" "$tmp/ckpt.in"
  [ "$(wc -c <"$tmp/out.txt")" -lt 20000 ] || fail "train.ckpt_dir: $(wc -c <"$tmp/out.txt") bytes of output"
  expect_refused any "$cut: cannot open: File name too long" "${mpirun[@]}" -np 2 "$embtrain" "$tmp/paths.in" \
    --set train.ckpt_dir="$tmp/ckpt"
  [ "$(wc -c <"$tmp/out.txt")" -lt 20000 ] || fail "data.paths: $(wc -c <"$tmp/out.txt") bytes of output"
  [ ! -e "$tmp/ckpt" ] || fail "a refused run left its checkpoint directory"
  ;;
device_unavailable)
  # run.device = cuda where CUDA cannot run (issue 35): a build without the CUDA backend, or one
  # with it on a node with no GPU visible, is refused at start-up with the deck line, exit 2.
  printf 'include = %s\n[run]\ndevice = cuda\noutput_dir = %s\n' "$PWD/inputs/tiny_gr00t.in" "$tmp/out" >"$tmp/gpu.in"
  CUDA_VISIBLE_DEVICES= expect_refused 2 "$tmp/gpu.in:3: run.device = cuda, but this " \
    "${mpirun[@]}" -np 2 "$embtrain" "$tmp/gpu.in" --set train.ckpt_dir="$tmp/ckpt"
  grep -qE "(built without the CUDA backend|has no GPU visible \(CUDA_VISIBLE_DEVICES = ''\)).*, or use run.device = cpu$" \
    "$tmp/out.txt" || fail "expected what to change: $(cat "$tmp/out.txt")"
  ;;
unreadable_paths)
  # Readers report what the system said (issue 35: a file in a directory the user cannot enter
  # was "no such file"). The directory is mode 000; as root, CAP_DAC_OVERRIDE and
  # CAP_DAC_READ_SEARCH are dropped so the mode counts. A path through a file (ENOTDIR), a
  # symbolic-link loop (ELOOP) and a FIFO (refused without blocking) need no privileges.
  dropped=(setpriv --bounding-set=-dac_override,-dac_read_search --inh-caps=-dac_override,-dac_read_search)
  mkdir "$tmp/locked" && cp outputs/data/tiny_gr00t.h5 "$tmp/locked/" && chmod 000 "$tmp/locked"
  : >"$tmp/plain"
  ln -s "$tmp/loop_a" "$tmp/loop_b" && ln -s "$tmp/loop_b" "$tmp/loop_a"
  mkfifo "$tmp/fifo"
  verify_says() {  # verify_says FILE EXPECTED [LAUNCH...]: embpack verify FILE fails with "FILE: EXPECTED"
    local file=$1 expected=$2
    shift 2
    timeout 30 "$@" "$build/embpack" verify "$file" >"$tmp/verify.txt" 2>&1
    local code=$?
    [ $code -ne 0 ] && [ $code -ne 124 ] || fail "embpack verify $file: exit code $code"
    [ "$(cat "$tmp/verify.txt")" = "embpack: $file: $expected" ] || fail "embpack verify $file: $(cat "$tmp/verify.txt")"
  }
  permission="cannot open: Permission denied (check the permissions of the file and of every directory above it)"
  verify_says "$tmp/locked/tiny_gr00t.h5" "$permission" "${dropped[@]}"
  verify_says "$tmp/plain/tiny_gr00t.h5" "cannot open: Not a directory"
  verify_says "$tmp/loop_a" "cannot open: Too many levels of symbolic links"
  verify_says "$tmp/fifo" "not a regular file (a FIFO)"
  expect_refused any "$tmp/locked/tiny_gr00t.h5: $permission" "${dropped[@]}" "${mpirun[@]}" -np 2 "$embtrain" \
    inputs/tiny_gr00t.in --set data.paths="$tmp/locked/tiny_gr00t.h5" --set run.output_dir="$tmp/out" \
    --set train.ckpt_dir="$tmp/ckpt"
  chmod 755 "$tmp/locked"
  ;;
startup_checks)
  # Settings that cannot work are refused before any step computes: one line from rank 0 naming
  # the deck line of the key, exit 2 on every rank, no run directory.
  : >"$tmp/file"
  start_check() {  # start_check LINE MESSAGE PRESET MODEL_LINE PATHS TOKENS_PER_MB GLOBAL_BATCH CKPT_DIR [LAUNCH...]
    local line=$1 message=$2 preset=$3 model_line=$4 paths=$5 tpm=$6 gb=$7 ckpt=$8
    shift 8
    printf '[run]\noutput_dir = %s\n[model]\npreset = %s\n%s\n[data]\npaths = %s\ntokens_per_mb = %s\n[train]\nsteps = 3\nglobal_batch = %s\nckpt_dir = %s\n' \
      "$tmp/out" "$preset" "$model_line" "$paths" "$tpm" "$gb" "$ckpt" >"$tmp/deck.in"
    expect_refused 2 "$tmp/deck.in:$line: $message" "$@" "${mpirun[@]}" -np 2 "$embtrain" "$tmp/deck.in"
  }
  gr00t=outputs/data/tiny_gr00t.h5
  start_check 8 "data.tokens_per_mb: 40 tokens is less than the largest sample of data.paths needs (85: 13 query + 72 context)" \
    tiny_gr00t "" $gr00t 40 8 "$tmp/ckpt"
  start_check 11 "train.global_batch: 100000 samples per step is more than data.paths holds (5861)" \
    tiny_gr00t "" $gr00t 512 100000 "$tmp/ckpt"
  start_check 7 "data.paths: no files given" tiny_gr00t "" "" 512 8 "$tmp/ckpt"
  start_check 5 "model.n_heads: n_heads = 3 must divide d_model = 64" tiny_gr00t "n_heads = 3" $gr00t 512 8 "$tmp/ckpt"
  start_check 5 "model.n_heads: n_heads = 4 must divide d_model = 66" tiny_gr00t "d_model = 66" $gr00t 512 8 "$tmp/ckpt"
  start_check 5 "model.latent_height: latent_height = 4 must be a positive multiple of patch[1] = 3" \
    tiny_wan "patch = 1, 3, 2" outputs/data/tiny_wan.h5 512 8 "$tmp/ckpt"
  start_check 12 "train.ckpt_dir: checkpoint directory $tmp/file/ckpt cannot be created" \
    tiny_gr00t "" $gr00t 512 8 "$tmp/file/ckpt"
  # A model the node cannot hold (virtual memory capped at 8 GB in case the check lets it through).
  start_check 5 "out of memory: the model needs " tiny_gr00t \
    "d_model = 200000" $gr00t 512 8 "$tmp/ckpt" bash -c 'ulimit -v 8000000 && exec "$@"' _
  # The state is exact (gr00t derives d_ff = 4·d_model as upstream): what DataParallel and AdamW
  # allocate on the largest rank, the whole units it gathers and its gradient slots included
  # (test_state_memory checks the rule against the allocations); the activations are the
  # planner's estimate (which the planner refines).
  expect_contains "$(cat "$tmp/out.txt")" \
    "GiB per rank (1520109218392 parameters: 32187.4 GiB of parameters, gradients and AdamW moments with train.shard = full, "
  # A read-only file system (a private read-only tmpfs: even root cannot write there).
  mkdir -p "$tmp/ro"
  start_check 12 "train.ckpt_dir: checkpoint directory $tmp/ro is not writable: Read-only file system" tiny_gr00t "" \
    $gr00t 512 8 "$tmp/ro" unshare -rm bash -c 'mount -t tmpfs -o ro,size=1m tmpfs "$0" && exec "$@"' "$tmp/ro"
  ;;
data_refused_at_start)
  # Data files that cannot be trained on are refused before step 1 with one line naming the file
  # (and dataset): one verify rejects for a small array, and one this user may not read (mode
  # 000; as root, CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH are dropped so the mode counts).
  data_refused() {  # data_refused FILE EXPECTED [LAUNCH...]
    local file=$1 expected=$2
    shift 2
    expect_refused any "$expected" "$@" "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=3 \
      --set train.global_batch=8 --set data.paths="$file" --set run.output_dir="$tmp/out" --set train.ckpt_dir="$tmp/ckpt"
  }
  cp outputs/data/tiny_gr00t.h5 "$tmp/stats.h5"
  /usr/bin/python3 -c "import h5py,sys; h5py.File(sys.argv[1],'r+')['/stats/state/mean'][3] = float('nan')" "$tmp/stats.h5"
  "$build/embpack" verify "$tmp/stats.h5" >/dev/null 2>&1 && fail "embpack verify accepts the NaN statistic"
  data_refused "$tmp/stats.h5" "$tmp/stats.h5:/stats/state/mean: non-finite value at row 3"
  cp outputs/data/tiny_gr00t.h5 "$tmp/tokens.h5"
  /usr/bin/python3 -c "import h5py,sys; h5py.File(sys.argv[1],'r+')['/tasks/tokens'][0] = 10**6" "$tmp/tokens.h5"
  data_refused "$tmp/tokens.h5" "$tmp/tokens.h5:/tasks/tokens: token id 1000000 at index 0 out of range"
  cp outputs/data/tiny_gr00t.h5 "$tmp/locked.h5"
  chmod 000 "$tmp/locked.h5"
  data_refused "$tmp/locked.h5" "$tmp/locked.h5: cannot open: Permission denied" \
    setpriv --bounding-set=-dac_override,-dac_read_search --inh-caps=-dac_override,-dac_read_search
  ;;
normalization_refused)
  # data.normalize = upstream needs every file's /stats of state and action at their widths: one
  # line naming the file and dataset, exit 2 on all ranks, nothing written. A checkpoint that
  # recorded no statistics (older ones) is refused on resume with one line saying so; with
  # data.normalize = none it resumes.
  stats_refused() {  # stats_refused FILE EXPECTED
    expect_refused 2 "$2" "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=3 \
      --set train.global_batch=8 --set data.paths="$1" --set run.output_dir="$tmp/out" --set train.ckpt_dir="$tmp/ckpt"
  }
  cp outputs/data/tiny_gr00t.h5 "$tmp/missing.h5"
  /usr/bin/python3 -c "import h5py,sys; del h5py.File(sys.argv[1],'r+')['/stats/action/q99']" "$tmp/missing.h5"
  stats_refused "$tmp/missing.h5" "$tmp/missing.h5:/stats/action/q99: missing: data.normalize = upstream"
  cp outputs/data/tiny_gr00t.h5 "$tmp/narrow.h5"
  /usr/bin/python3 - "$tmp/narrow.h5" <<'PY'
import h5py, sys
f = h5py.File(sys.argv[1], "r+")
v = f["/stats/state/min"][()]
del f["/stats/state/min"]
f["/stats/state/min"] = v[:-1]
PY
  stats_refused "$tmp/narrow.h5" "$tmp/narrow.h5:/stats/state/min: $(( $(/usr/bin/python3 -c "import h5py; print(h5py.File('outputs/data/tiny_gr00t.h5','r')['/steps/state'].shape[1])") - 1 )) values, expected"
  train norm-old 2 --set train.steps=4 --set train.ckpt_every=4 --set train.ckpt_dir="$tmp/old"
  old="$tmp/old/step_00000004.h5"
  /usr/bin/python3 - "$old" <<'PY' || fail "the checkpoint recorded no statistics"
import h5py, json, sys
f = h5py.File(sys.argv[1], "r+")
stats = json.loads(f.attrs["normalization"])
assert stats and all(len(e["state"]["min"]) > 0 and len(e["action"]["max"]) > 0 for e in stats.values()), stats
del f.attrs["normalization"]  # as a checkpoint from before data.normalize
PY
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=6 --set train.global_batch=8 \
    --set train.resume="$old" --set train.ckpt_dir="$tmp/old" --set run.output_dir="$tmp/resumed" >"$tmp/resume.txt" 2>&1
  code=$?
  [ $code -eq 2 ] || fail "resuming a checkpoint without statistics exited $code: $(cat "$tmp/resume.txt")"
  [ "$(grep -c "^embtrain: error" "$tmp/resume.txt")" -eq 1 ] &&
    grep -qF "embtrain: error: $old: records no normalisation statistics" "$tmp/resume.txt" ||
    fail "expected one line on the missing statistics: $(grep error "$tmp/resume.txt")"
  train norm-old-raw 2 --set train.steps=6 --set train.resume="$old" --set train.ckpt_dir="$tmp/old" \
    --set data.normalize=none
  rm -rf outputs/norm-old outputs/norm-old-raw
  ;;
vl_backbone_refused)
  # data.vl_backbone (app/feature_encoders.hpp): a checkpoint that cannot be read is one line naming
  # the deck line (exit 2); the tiny datasets' features, which the stand-in encoder made, are
  # refused for a real backbone (a data file's error: exit 1, as in data_refused_at_start).
  /usr/bin/python3 tests/encoders_ref/make_tiny_encoders.py --which eagle --out "$tmp/tiny" >/dev/null ||
    fail "make_tiny_encoders.py failed"
  printf '[run]\noutput_dir = %s\n[model]\npreset = tiny_gr00t\n[data]\npaths = outputs/data/tiny_gr00t.h5\nvl_backbone = %s\n[train]\nsteps = 3\nckpt_dir = %s\n' \
    "$tmp/out" "$tmp/none" "$tmp/ckpt" >"$tmp/deck.in"
  expect_refused 2 "$tmp/deck.in:7: data.vl_backbone: $tmp/none: no such file or folder" \
    "${mpirun[@]}" -np 2 "$embtrain" "$tmp/deck.in"
  expect_refused 1 "outputs/data/tiny_gr00t.h5:/features/vl: made without a backbone digest (the stand-in encoder of the simulated tasks), but data.vl_backbone asks for the backbone " \
    "${mpirun[@]}" -np 2 "$embtrain" "$tmp/deck.in" --set data.vl_backbone="$tmp/tiny/eagle"
  ;;
data_truncated)
  # A dataset truncated under the running job: the next read of it fails naming the file, every
  # rank stops non-zero within seconds (no training on the zeros MPI-IO returns past the end).
  cp outputs/data/tiny_gr00t.h5 "$tmp/data.h5"
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=100000 --set train.global_batch=8 \
    --set data.shuffle_buffer=256 --set run.log_every=1 --set data.paths="$tmp/data.h5" --set run.name=cli-test-trunc \
    --set run.output_dir="$tmp/out" --set train.ckpt_dir="$tmp/ckpt" >"$tmp/out.txt" 2>&1 &
  pid=$!
  for _ in $(seq 150); do grep -q "^step" "$tmp/out.txt" 2>/dev/null && break; sleep 0.2; done
  grep -q "^step" "$tmp/out.txt" || fail "training did not start: $(tail -3 "$tmp/out.txt")"
  truncate -s $(($(stat -c %s "$tmp/data.h5") / 2)) "$tmp/data.h5"
  ( sleep 60; kill -9 $pid 2>/dev/null ) >/dev/null 2>&1 &
  guard=$!
  wait $pid
  code=$?
  kill $guard 2>/dev/null
  [ $code -ne 0 ] || fail "training on a truncated file exited 0"
  [ $code -ne 137 ] || fail "the job hung after the truncation (killed after 60 s)"
  grep -qE "^embtrain: error on rank [01]: $tmp/data.h5:/[a-z/_]+: the file shrank from [0-9]+ to [0-9]+ bytes while this run reads it" \
    "$tmp/out.txt" || fail "expected the truncation line: $(grep error "$tmp/out.txt")"
  [ "$(grep "^embtrain: error" "$tmp/out.txt" | grep -vc "the file shrank")" -eq 0 ] ||
    fail "other error lines: $(grep error "$tmp/out.txt")"
  grep -qF "the file shrank" "$tmp/out/cli-test-trunc/FAILED" || fail "the run directory is not marked FAILED"
  ;;
nan_overflow)
  # lr 1e6 and init_std 1e10 overflow activations (scores of -Inf or NaN in attention): the
  # step's non-finite loss or gradient goes through train.nan_policy, never a crash.
  for deck in tiny_gr00t tiny_wan; do
    for key in train.lr=1e6 model.init_std=1e10; do
      run_nan() {  # run_nan POLICY
        rm -rf "$tmp/out"
        "${mpirun[@]}" -np 2 "$embtrain" "inputs/$deck.in" --set train.steps=4 --set train.global_batch=8 --set "$key" \
          --set train.nan_policy="$1" --set run.name=nan --set run.output_dir="$tmp/out" --set train.ckpt_dir="$tmp/ckpt" \
          >"$tmp/out.txt" 2>&1
      }
      run_nan stop
      code=$?
      [ $code -eq 1 ] || fail "$deck $key, stop: exit code $code, expected 1: $(tail -3 "$tmp/out.txt")"
      [ "$(grep -c "^embtrain: error" "$tmp/out.txt")" -eq 1 ] || fail "$deck $key: expected one error line: $(grep error "$tmp/out.txt")"
      grep -qE "^embtrain: error: step [1-4]: non-finite (loss|gradient norm) \(loss .*\); stopping" "$tmp/out.txt" ||
        fail "$deck $key, stop: expected the non-finite step line: $(grep error "$tmp/out.txt")"
      run_nan skip || fail "$deck $key, skip: exited $?: $(tail -3 "$tmp/out.txt")"
      grep -qE "^\[rank 0\] warning: step [1-4]: non-finite loss or gradient .*; update skipped$" "$tmp/out/nan/train.log" ||
        fail "$deck $key, skip: train.log records no skipped step: $(cat "$tmp/out/nan/train.log")"
      /usr/bin/python3 - "$tmp/out/nan/loss.csv" <<'PY' || fail "$deck $key, skip: loss.csv does not record the skipped steps"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [int(r["step"]) for r in rows] == [1, 2, 3, 4], rows
for r in rows:  # a step is marked skipped exactly when its loss or gradient norm is not finite
    finite = math.isfinite(float(r["loss"])) and math.isfinite(float(r["grad_norm"]))
    assert r["skipped"] == ("0" if finite else "1"), r
assert any(r["skipped"] == "1" for r in rows), rows
PY
    done
  done
  ;;
ckpt_write_fails)
  # A checkpoint write that fails after the space check passed (debug.ckpt_fail_step: the last
  # rank's write fails halfway): the partial file is removed, every rank stops non-zero with one
  # line, the previous checkpoint stays the newest.
  d="$tmp/ckpt"
  start=$(date +%s)
  "${mpirun[@]}" -np 2 "$embtrain" inputs/tiny_gr00t.in --set train.steps=6 --set train.global_batch=8 \
    --set train.ckpt_every=2 --set debug.ckpt_fail_step=4 --set run.name=cli-test-ckpt-fail --set run.output_dir="$tmp/out" \
    --set train.ckpt_dir="$d" >"$tmp/out.txt" 2>&1
  code=$?
  [ $code -ne 0 ] || fail "a failed checkpoint write exited 0"
  [ $(($(date +%s) - start)) -lt 60 ] || fail "the job took more than 60 s to end (hang?)"
  [ "$(grep -c "^embtrain: error" "$tmp/out.txt")" -eq 1 ] || fail "expected one error line: $(cat "$tmp/out.txt")"
  grep -qE "^embtrain: error: checkpoint step 4: writing failed \($d/step_00000004.h5.tmp:/exp_avg/[a-z_.0-9]+: write failed \(injected by debug.ckpt_fail_step\)\); [0-9]+ MB free on $d, needed [0-9]+ MB; the partial file was removed$" \
    "$tmp/out.txt" || fail "expected the failed-write line: $(grep error "$tmp/out.txt")"
  [ "$(cd "$d" && ls -A | tr '\n' ' ')" = "latest step_00000002.h5 " ] || fail "left in $d: $(ls -A "$d")"
  [ "$(cat "$d/latest")" = "step_00000002.h5" ] || fail "latest names $(cat "$d/latest")"
  grep -q "^step 4/6" "$tmp/out.txt" && fail "training went on after the failed checkpoint"
  grep -qF "checkpoint step 4: writing failed" "$tmp/out/cli-test-ckpt-fail/FAILED" || fail "the run directory is not marked FAILED"
  ;;
out_of_memory)
  # What runs out of memory after the start-up check (here: 3 GB of address space for a model of
  # 16 GB) is one line saying what to change, and the run directory is marked FAILED.
  ( ulimit -v 3000000 && exec "$embtrain" inputs/tiny_gr00t.in --set train.steps=2 --set model.d_model=4096 \
    --set run.name=cli-test-oom --set run.output_dir="$tmp/out" --set train.ckpt_dir="$tmp/ckpt" ) >"$tmp/out.txt" 2>&1
  code=$?
  [ $code -eq 1 ] || fail "exit code $code, expected 1: $(cat "$tmp/out.txt")"
  [ "$(grep -c "^embtrain: error" "$tmp/out.txt")" -eq 1 ] || fail "expected one error line: $(cat "$tmp/out.txt")"
  grep -qE "^embtrain: error: out of memory: [0-9]+ MB asked of the host for the model's parameters, gradients, optimizer state or activations; lower data.tokens_per_mb" \
    "$tmp/out.txt" || fail "expected the out-of-memory line: $(grep error "$tmp/out.txt")"
  grep -qF "out of memory: " "$tmp/out/cli-test-oom/FAILED" || fail "the run directory is not marked FAILED"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "PASS [$case_name]"
