#!/usr/bin/env bash
# The RL roles under faults (issue 35; README "Reliability of RL runs"): a hostile suite run as
# a user would, on 4 ranks (trainer = rank 0, generator = rank 1, simulators = ranks 2 and 3;
# 2 push environments each) from a tiny SFT checkpoint, with a checkpoint after every update.
#   kill_<role>_<moment>   kill -9 of one rank of each role at several moments of the run
#                          (kill_simulator_start: the simulator's own SIGKILL at its first chunk,
#                          debug.fail_how = kill, in lockstep rounds: no update may have completed)
#   stop_<role>            SIGSTOP of one rank (train.watchdog_s = 8)
# Each must end the job within seconds (or the watchdog's deadline) with exactly one
# `embsim rl:` line naming the role and rank, FAILED in the run directory holding that line,
# no rank left behind, and its newest checkpoint complete (its rl_ sidecar beside it); then
# train.resume = auto continues from that checkpoint (checksums verified on load) for one more update,
# and the state the resumed trainer holds (`rl resumed: state:` version, AdamW steps, CRC-32s of
# policy, moments and value head, totals) is the one its sidecar recorded when it was saved (and its
# `rl checkpoint:` line printed, unless the kill came between publishing the checkpoint and the line,
# or while the line was being written: then the printed part of it must begin the sidecar's).
#   resume_exact           rl.mode = sync, 12 updates, kill -9 of trainer 0 after the checkpoint of
#                          update 4; then the newest checkpoint is corrupted (one policy value)
#                          and another run's newer checkpoint (another run id) is put beside it,
#                          `latest` naming it; train.resume = auto skips the other run's, falls
#                          back on every rank to the older checkpoint of its own, and the
#                          per-update lines (losses, reward, env steps, episodes) equal an
#                          uninterrupted run's, and every checkpoint it writes holds the
#                          uninterrupted run's state at its version (CRC-32s of policy, moments,
#                          value head; totals), bit for bit
#   stop_signal_sync       SIGTERM to a plain `mpirun` (scripts/mpi_env.sh's) of the same run with
#                          checkpoints at the end only: every rank stops at the next update with
#                          its checkpoint, mpirun exits 0, train.resume = auto continues exactly
#                          (update lines and the final checkpoint's state)
#   nan_physics_async      an MJCF whose physics diverges (joint damping -6): diverging
#                          environments are reset and counted (summary.json diverged_resets),
#                          nothing non-finite reaches the learner, the run finishes
#   nan_physics_sync       the same in lockstep rounds (the diverged chunks reach the trainer
#                          marked, and are dropped there, so the rounds complete)
# Prints a table (case | expected | got), then the end of the logs of the cases that failed, and
# exits 1 when a case failed.
# Usage: regression/rl_hostile.sh BUILD_DIR [CASE...]   (from the repository root; slow: ~5 min here)
set -uo pipefail
build=$(cd "$1" && pwd)
shift
cd "$(dirname "$0")/.."
source tests/sim/sim_test_lib.sh
results=()
error_line='^embsim rl: (trainer|generator|simulator) rank'  # the start line is "embsim rl: MODE, task ..."
record() { results+=("$1|$2|$3"); case_ok=$4; [ "$4" = ok ] || failed=1; }
failed=0

sft_checkpoint
base=(--set rl.init="$out/sft" --set rl.simulators=2 --set rl.generators=1 --set rl.trainers=1
      --set rl.envs_per_simulator=2 --set rl.update_chunks=8 --set rl.micro_chunks=4 --set rl.critic_warmup=1
      --set rl.segment_chunks=2 --set rl.ckpt_every=1 --set train.watchdog_s=8 --set run.output_dir="$out/runs")

# launch NAME ARGS...: an RL run into $out/runs/NAME (checkpoints in $out/ckpt/NAME) in the
# background; its mpirun's pid in $job.
launch() {
  local name=$1
  shift
  mpirun -np 4 --oversubscribe -x OMP_NUM_THREADS=1 "$build/embsim" rl inputs/rl_push.in "${base[@]}" \
    --set run.name="$name" --set rl.ckpt_dir="$out/ckpt/$name" "$@" >"$out/$name.log" 2>&1 &
  job=$!
  case_logs+=("$out/$name.log")
}

# ranks_of PID: the embsim processes under PID (mpirun and its children).
ranks_of() {
  local child
  for child in $(pgrep -P "$1"); do
    if [ "$(cat "/proc/$child/comm" 2>/dev/null)" = embsim ]; then echo "$child"; else ranks_of "$child"; fi
  done
}

# rank_pid JOB RANK: the pid of world rank RANK's embsim under mpirun JOB.
rank_pid() {
  local p
  for p in $(ranks_of "$1"); do
    [ "$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')" = "$2" ] && echo "$p"
  done
}

# wait_for FILE PATTERN SECONDS: whether PATTERN (grep -E) shows up in FILE in time.
wait_for() {
  local i
  for i in $(seq $(($3 * 50))); do grep -qE "$2" "$1" 2>/dev/null && return 0; sleep 0.02; done
  return 1
}

# wait_for_file GLOB SECONDS: whether a file matching GLOB shows up in time (polled every 5 ms).
wait_for_file() {
  local end=$(($(date +%s) + $2))
  while [ "$(date +%s)" -lt $end ]; do compgen -G "$1" >/dev/null && return 0; sleep 0.005; done
  return 1
}

# finish JOB LIMIT: waits for the job (killing it after LIMIT s); sets $code and $took.
finish() {
  local start guard
  start=$(date +%s)
  local ranks
  ranks=$(ranks_of "$1")
  ( sleep "$2"; kill -9 "$1" $ranks ) >/dev/null 2>&1 &
  guard=$!
  wait "$1"
  code=$?
  took=$(($(date +%s) - start))
  kill "$guard" 2>/dev/null
  wait "$guard" 2>/dev/null
}

# newest_checkpoint NAME: the version `resume = auto` continues in $out/ckpt/NAME (empty if none):
# the newest step_*.h5 (published by a rename once complete, its rl_ sidecar written before it),
# whatever `latest` names: a kill between publishing step_V.h5 and updating `latest` leaves V
# complete but not yet named, and resume takes the newest complete checkpoint (checkpoint_dir's
# resolve_resume; `latest` is only a hint).
newest_checkpoint() {
  ls "$out/ckpt/$1" 2>/dev/null | sed -n 's/^step_\([0-9]*\)\.h5$/\1/p' | sort | tail -1
}

# alive PID...: whether any of them still runs (a zombie has ended).
alive() {
  local p
  for p; do [ -n "$(ps -o stat= -p "$p" 2>/dev/null | grep -v Z)" ] && return 0; done
  return 1
}

# check_failed NAME WHO WHAT LIMIT: the checks after a fault (the job's rank pids in $all_ranks);
# prints what it got, "one line, ..." when every check held.
check_failed() {
  local name=$1 who=$2 what=$3 limit=$4 lines v got="" fault_code=$code fault_took=$took
  [ "$code" -ne 0 ] || got+="exit 0; "
  [ "$took" -le "$limit" ] || got+="ended after ${took} s; "
  lines=$(grep -cE "$error_line" "$out/$name.log")
  [ "$lines" = 1 ] || got+="$lines error lines; "
  grep -qE "^embsim rl: $who \(pid [0-9]+ on host [^)]+\) $what" "$out/$name.log" \
    || got+="no line naming $who ($what): $(grep '^embsim rl' "$out/$name.log" | head -2 | cut -c1-200); "
  [ -f "$out/runs/$name/FAILED" ] && grep -q "^embsim rl: $who" "$out/runs/$name/FAILED" || got+="no FAILED naming it; "
  for _ in $(seq 50); do alive $all_ranks || break; sleep 0.1; done
  alive $all_ranks && got+="a rank outlived the job by 5 s; "
  v=$(newest_checkpoint "$name")
  if [ -n "$v" ]; then
    [ -f "$out/ckpt/$name/rl_$v.h5" ] || got+="step_$v.h5 without its rl_ sidecar; "
    # (a watchdog for a loaded machine: a rank still starting when the one update is done is not a fault)
    launch "$name-resumed" --set rl.ckpt_dir="$out/ckpt/$name" --set train.resume=auto --set rl.updates=$((10#$v + 1)) \
      --set train.watchdog_s=60
    finish $job 120
    [ "$code" = 0 ] || got+="resume failed: $(grep -E 'error|embsim rl' "$out/$name-resumed.log" | head -2); "
    grep -q "(version $((10#$v)))" "$out/$name-resumed.log" || got+="resume did not start at version $((10#$v)); "
    [ -f "$out/ckpt/$name/step_$(printf %08d $((10#$v + 1))).h5" ] || got+="no checkpoint after the resume; "
    # what the resumed trainer holds is what the checkpoint saved (version, AdamW steps, CRC-32s, totals)
    local saved resumed printed
    # the digest the sidecar recorded at the save; its line too unless the kill came between publishing
    # step_V.h5 and printing it, or while printing it: the job's abort can cut rank 0's line short in
    # mpirun's forwarding (1 run in ~12 of kill_simulator_rollout), and the part printed begins the digest
    saved=$(/usr/bin/python3 -c 'import sys, h5py
a = h5py.File(sys.argv[1], "r").attrs["state"]
print(a.decode() if isinstance(a, bytes) else a)' "$out/ckpt/$name/rl_$v.h5" 2>/dev/null)
    printed=$(grep "^rl checkpoint: .*step_$v.h5" "$out/$name.log" | sed 's/.*; state: //')
    [ -z "$printed" ] || [[ "$saved" == "$printed"* ]] || got+="the sidecar's state '$saved' is not the printed '$printed'; "
    resumed=$(grep "^rl resumed: state: " "$out/$name-resumed.log" | sed 's/^rl resumed: state: //')
    [ -n "$saved" ] && [ "$saved" = "$resumed" ] || got+="resumed state '$resumed' is not the checkpoint's '$saved'; "
  fi
  local torn=""
  compgen -G "$out/ckpt/$name/*.tmp" >/dev/null && torn=" ($(cd "$out/ckpt/$name" && ls *.tmp | head -1) left by the kill)"
  local resumed_from="no checkpoint yet"
  [ -n "$v" ] && resumed_from="resumed from version $((10#$v)) with its state"
  echo "${got:-one line, FAILED, exit $fault_code after ${fault_took} s, $resumed_from$torn ok}"
}

# wait_for_ranks JOB N SECONDS: whether N embsim ranks run under mpirun JOB in time.
wait_for_ranks() {
  local i
  for i in $(seq $(($3 * 50))); do [ "$(ranks_of "$1" | wc -w)" -ge "$2" ] && return 0; sleep 0.02; done
  return 1
}

# fault NAME RANK SIGNAL WAIT...: a run, the signal to RANK once WAIT happened, the checks.
#   WAIT: "line PATTERN" (a progress line), "tmp" (a checkpoint being written) or "first_chunk":
#   RANK, a simulator, sends itself SIGKILL once it has stepped its first action chunk, before it
#   sends anything (debug.fail_how = kill), which no outside kill can time: mpirun forwards the
#   start line a second or two late, several updates into the run. In lockstep rounds (rl.mode =
#   sync) every update needs chunks of every environment, so none can complete without RANK's:
#   the log must show no `rl update` line and the run no checkpoint (in async mode the other
#   simulator alone completes updates in the second mpirun takes to end the job).
fault() {
  local name=$1 rank=$2 signal=$3 kind=$4 what who limit pid got expected
  case $rank in 0) who="trainer rank 0" ;; 1) who="generator rank 1" ;; *) who="simulator rank $rank" ;; esac
  if [ "$signal" = STOP ]; then what="is stopped"; limit=40; else what="died"; limit=15; fi
  expected="$who $what: one line, FAILED, exit != 0 within $limit s; resume ok"
  if [ "$kind" = first_chunk ]; then
    launch "$name" --set rl.updates=400 --set rl.mode=sync --set debug.fail_rank="$rank" --set debug.fail_step=1 \
      --set debug.fail_how=kill
    wait_for_ranks $job 4 60
    all_ranks=$(ranks_of $job)
    finish $job 120
    expected="$who $what at its first chunk, before update 1 (no update line, no checkpoint): one line, FAILED, exit != 0 within $limit s"
    got=""
    grep -q '^rl update' "$out/$name.log" && got+="an update completed: $(grep '^rl update' "$out/$name.log" | head -1 | cut -c1-80); "
    [ -z "$(newest_checkpoint "$name")" ] || got+="checkpoint $(newest_checkpoint "$name") written; "
    got+=$(check_failed "$name" "$who" "$what" "$limit")
    case $got in one\ line*) record "$name" "$expected" "$got" ok ;; *) record "$name" "$expected" "$got" fail ;; esac
    return
  fi
  launch "$name" --set rl.updates=400
  wait_for "$out/$name.log" "^embsim rl: [a-z_]+, task" 60
  all_ranks=$(ranks_of $job)
  pid=$(rank_pid $job "$rank")  # looked up before the moment, so the signal follows it within milliseconds
  if [ "$kind" = tmp ]; then wait_for_file "$out/ckpt/$name/*.tmp" 60; else wait_for "$out/$name.log" "$5" 60; fi
  if [ -z "$pid" ]; then
    finish $job 1
    record "$name" "-" "the moment never came: $(tail -2 "$out/$name.log")" fail
    return
  fi
  kill -"$signal" "$pid"
  finish $job 120
  got=$(check_failed "$name" "$who" "$what" "$limit")
  case $got in one\ line*) record "$name" "$expected" "$got" ok ;; *) record "$name" "$expected" "$got" fail ;; esac
}

run_case() {
  case $1 in
    kill_simulator_rollout) fault "$1" 3 KILL line "^rl update +1/" ;;
    kill_simulator_start) fault "$1" 2 KILL first_chunk ;;
    kill_generator_push) fault "$1" 1 KILL line "^rl update +2/" ;;
    kill_generator_rollout) fault "$1" 1 KILL line "^rl checkpoint: .*step_00000003" ;;
    kill_trainer_update) fault "$1" 0 KILL line "^rl update +3/" ;;
    kill_trainer_checkpoint) fault "$1" 0 KILL tmp ;;  # the .tmp it leaves is shown
    stop_simulator) fault "$1" 2 STOP line "^rl update +2/" ;;
    stop_generator) fault "$1" 1 STOP line "^rl update +2/" ;;
    stop_trainer) fault "$1" 0 STOP line "^rl update +2/" ;;
    resume_exact) resume_exact ;;
    stop_signal_sync) stop_signal_sync ;;
    nan_physics_async) nan_physics async ;;
    nan_physics_sync) nan_physics sync ;;
    *) echo "unknown case $1" >&2; exit 2 ;;
  esac
}

# The per-update lines without their clock (env steps/s, ETA) and the run's length (rl.updates).
curve_lines() {
  grep '^rl update' "$1" | sed -E 's/^(rl update +[0-9]+)\/[0-9]+/\1/; s/ \| [0-9.]+ env steps\/s//; s/ \| ETA [0-9:]+//'
}

exact=(--set rl.mode=sync --set rl.updates=12 --set rl.ckpt_every=2 --set train.watchdog_s=60)

# The states a run's checkpoints recorded (`version V, AdamW steps ..., crc32 policy ...`).
checkpoint_states() {
  grep '^rl checkpoint: ' "$1" | sed 's/.*; state: //'
}

# $out/exact_whole.txt: the update lines of an uninterrupted sync run of 12 updates (run once);
# $out/exact_whole_states.txt: the states of its checkpoints (every second version).
whole_curve() {
  [ -f "$out/exact_whole.txt" ] && return
  launch exact_whole "${exact[@]}"
  finish $job 300
  [ "$code" = 0 ] || echo "the uninterrupted run failed (exit $code); "
  curve_lines "$out/exact_whole.log" >"$out/exact_whole.txt"
  checkpoint_states "$out/exact_whole.log" >"$out/exact_whole_states.txt"
  [ "$(wc -l <"$out/exact_whole.txt")" = 12 ] || echo "the uninterrupted run printed $(wc -l <"$out/exact_whole.txt") update lines; "
}

# joined_curve_differs STOPPED RESUMED V: whether STOPPED's first V update lines and then RESUMED's
# differ from the uninterrupted run's (says how), and whether a checkpoint RESUMED wrote holds
# another state than the uninterrupted run's of its version (CRC-32s of the policy, moments and
# value head: the printed 4 decimals hide differences of a few ulps).
joined_curve_differs() {
  local state
  { curve_lines "$out/$1.log" | head -"$3"; curve_lines "$out/$2.log"; } >"$out/$2_joined.txt"
  diff "$out/exact_whole.txt" "$out/$2_joined.txt" >"$out/$2.diff" || echo "curves differ: $(head -3 "$out/$2.diff"); "
  checkpoint_states "$out/$2.log" | grep -q . || echo "the resumed run printed no checkpoint state; "
  while read -r state; do
    grep -qxF "$state" "$out/exact_whole_states.txt" \
      || echo "checkpoint state '$state' is not the uninterrupted run's '$(grep "^${state%%,*}," "$out/exact_whole_states.txt")'; "
  done < <(checkpoint_states "$out/$2.log")
}

# In DIR, checkpoint V (policy, sidecar, simulator states) copied as version V + 10 of another run
# (another run id) that `latest` names, as a run sharing the directory would leave it; and one
# value of checkpoint V's policy changed (its CRC-32 no longer matches).
foreign_and_corrupt() {
  local dir=$1 v f x
  v=$(printf %08d $((10#$2))) f=$(printf %08d $((10#$2 + 10)))
  for x in step rl sim0 sim1; do cp "$dir/${x}_$v.h5" "$dir/${x}_$f.h5"; done
  echo "step_$f.h5" >"$dir/latest"
  /usr/bin/python3 - "$dir/step_$f.h5" "$dir/step_$v.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    f.attrs["run_id"] = "0123456789abcdef"
with h5py.File(sys.argv[2], "r+") as f:
    found = []
    f["params"].visititems(lambda name, o: found.append(o) if isinstance(o, h5py.Dataset) and o.size else None)
    d = found[0]
    flat = d[...].reshape(-1)
    flat[0] += 1.0
    d[...] = flat.reshape(d.shape)
PY
}

resume_exact() {
  local pid got v older
  got=$(whole_curve)
  launch exact_killed "${exact[@]}"
  wait_for "$out/exact_killed.log" "^embsim rl: [a-z_]+, task" 120
  pid=$(rank_pid $job 0)
  wait_for "$out/exact_killed.log" "^rl checkpoint: .*step_00000004" 120
  [ -n "$pid" ] && kill -9 "$pid"
  finish $job 60
  v=$(newest_checkpoint exact_killed)
  [ -n "$v" ] && [ $((10#$v)) -ge 4 ] && [ $((10#$v)) -lt 12 ] || got+="the kill came outside versions 4..10 (${v:-none}); "
  v=$((10#${v:-4})) older=$((10#${v:-4} - 2))
  foreign_and_corrupt "$out/ckpt/exact_killed" $v
  launch exact_resumed "${exact[@]}" --set rl.ckpt_dir="$out/ckpt/exact_killed" --set train.resume=auto
  finish $job 300
  [ "$code" = 0 ] || got+="the resumed run failed: $(grep error "$out/exact_resumed.log" | head -1); "
  grep -q "(version $older)" "$out/exact_resumed.log" || got+="did not resume at version $older: $(grep '^embsim rl' "$out/exact_resumed.log" | head -1); "
  grep -q "checksum mismatch.*every rank tries the older .*step_$(printf %08d $older).h5" "$out/exact_resumed.log" \
    || got+="no fallback line naming the corrupt checkpoint; "
  got+=$(joined_curve_differs exact_killed exact_resumed $older)
  local expected="killed after version 4, newest corrupted, another run's beside: resumed from the older; 12 update lines and checkpoint states equal"
  if [ -z "$got" ]; then
    record resume_exact "$expected" "equal (killed at version $v, resumed from $older, version $((v + 10)) of the other run skipped)" ok
  else
    record resume_exact "$expected" "$got" fail
  fi
}

# SIGTERM to scripts/mpi_env.sh's mpirun (mpirun_graceful.sh: SIGUSR1 to every rank).
stop_signal_sync() {
  local PATH="$PWD/scripts/bin:$PATH" got v
  got=$(whole_curve)
  launch stop_stopped "${exact[@]}" --set rl.ckpt_every=0
  wait_for "$out/stop_stopped.log" "^rl update +3/" 120
  kill -TERM $job
  finish $job 120
  [ "$code" = 0 ] || got+="mpirun exited $code after SIGTERM: $(grep -E 'error|^embsim rl' "$out/stop_stopped.log" | head -2); "
  v=$(newest_checkpoint stop_stopped)
  grep -q "^rl: received a stop signal: stopping after version $((10#${v:-0}))" "$out/stop_stopped.log" \
    || got+="no stop line naming checkpoint ${v:-none}; "
  [ -n "$v" ] && [ -f "$out/ckpt/stop_stopped/rl_$v.h5" ] && [ $((10#$v)) -lt 12 ] || got+="no checkpoint before the end (${v:-none}); "
  [ -f "$out/runs/stop_stopped/FAILED" ] && got+="FAILED in the run directory; "
  v=$((10#${v:-0}))
  launch stop_resumed "${exact[@]}" --set rl.ckpt_every=0 --set rl.ckpt_dir="$out/ckpt/stop_stopped" --set train.resume=auto
  finish $job 300
  [ "$code" = 0 ] || got+="the resumed run failed: $(grep error "$out/stop_resumed.log" | head -1); "
  grep -q "(version $v)" "$out/stop_resumed.log" || got+="did not resume at version $v; "
  got+=$(joined_curve_differs stop_stopped stop_resumed $v)
  local expected="SIGTERM to mpirun: checkpoint at the next update, exit 0; resumed: 12 update lines and the final state equal"
  if [ -z "$got" ]; then
    record stop_signal_sync "$expected" "exit 0 after version $v, resumed: equal" ok
  else
    record stop_signal_sync "$expected" "$got" fail
  fi
}

# An MJCF directory whose push arm gains energy (negative damping): its state grows for a few
# chunks until MuJoCo finds it non-finite (segments of one chunk reach the trainer before that).
diverging_mjcf() {
  mkdir -p "$out/mjcf_diverging"
  cp src/sim/mjcf/*.xml "$out/mjcf_diverging/"
  sed -i 's/<joint damping="1.0" armature="0.01"\/>/<joint damping="-6" armature="0.01"\/>/' "$out/mjcf_diverging/push.xml"
}

nan_physics() {
  local mode=$1 name=nan_physics_$1 got="" s expected="reset + counted, never trained on, run finishes"
  diverging_mjcf
  # (in $out: MuJoCo writes its warnings to MUJOCO_LOG.TXT in the working directory)
  (cd "$out" && mpirun -np 4 --oversubscribe -x OMP_NUM_THREADS=1 "$build/embsim" rl "$OLDPWD/inputs/rl_push.in" \
    --mjcf-dir "$out/mjcf_diverging" "${base[@]}" --set rl.mode="$mode" --set rl.updates=3 --set rl.segment_chunks=1 \
    --set run.name="$name" --set rl.ckpt_dir="$out/ckpt/$name" --set train.watchdog_s=30 >"$out/$name.log" 2>&1)
  code=$?
  s="$out/runs/$name/summary.json"
  [ "$code" = 0 ] || got+="exit $code: $(grep -E 'error|^embsim rl' "$out/$name.log" | head -2); "
  [ -f "$s" ] && [ "$(json "$s" "s['diverged_resets'] > 0")" = True ] || got+="no diverged_resets counted; "
  [ "$(grep '^rl update' "$out/$name.log" | grep -ci 'nan\|inf')" = 0 ] || got+="non-finite losses; "
  if [ "$mode" = sync ]; then  # the rounds' diverged chunks reach the trainer, which drops them
    expected+="; the trainer drops the diverged chunks"
    [ -f "$s" ] && [ "$(json "$s" "sum(r.get('dropped_diverged', 0) for r in s['ranks']) > 0")" = True ] \
      || got+="no diverged chunks dropped by the trainer; "
  fi
  [ -z "$got" ] && got="finished, $(json "$s" "s['diverged_resets']") resets counted, finite losses"
  case $got in finished*) record "$name" "$expected" "$got" ok ;;
    *) record "$name" "$expected" "$got" fail ;; esac
}

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(kill_simulator_start kill_simulator_rollout kill_generator_push kill_generator_rollout
  kill_trainer_update kill_trainer_checkpoint stop_simulator stop_generator stop_trainer resume_exact
  stop_signal_sync nan_physics_async nan_physics_sync)
# The end of each run's log for the cases that failed, so that a failure in CI shows what happened.
failed_logs=""
for c in "${cases[@]}"; do
  case_logs=()
  run_case "$c"
  echo "${results[-1]}" | tr '|' '\t'
  if [ "$case_ok" != ok ]; then
    for log in "${case_logs[@]}"; do
      # (check_failed's resume runs in a subshell: its log is found by name)
      [ -f "${log%.log}-resumed.log" ] && case_logs+=("${log%.log}-resumed.log")
    done
    for log in "${case_logs[@]}"; do
      failed_logs+=$'\n'"--- $c: the last 15 lines of $(basename "$log")"$'\n'"$(tail -15 "$log" | cut -c1-300)"$'\n'
    done
  fi
done
echo
echo "| case | expected | got |"
echo "|---|---|---|"
for r in "${results[@]}"; do echo "| ${r//|/ | } |"; done
[ -z "$failed_logs" ] || echo "$failed_logs"
exit $failed
