#!/bin/bash
# SIGKILL in the middle of a checkpoint write (a job lost mid-save): the checkpoint being
# written stays a *.tmp, `latest` still names the previous one, resume = auto picks that one
# and it restores exactly on another rank count and shard mode, and no step_*.h5 is incomplete.
# usage: kill_during_save.sh <ckpt_writer> <mpiexec>
set -euo pipefail
writer=$1
mpiexec=$2
dir=$(mktemp -d /tmp/embtrain_ckpt_kill.XXXXXX)
launcher=
cleanup() {
  if [ -n "$launcher" ]; then kill -9 "$launcher" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  cat "$dir/writer.log" 2>/dev/null || true
  exit 1
}
wait_for() {  # a shell condition, what it means
  local deadline=$((SECONDS + 60))
  until eval "$1"; do
    [ $SECONDS -lt $deadline ] || fail "timed out waiting for $2"
    sleep 0.01
  done
}
tmp_bytes() { stat -c %s "$dir"/step_*.h5.tmp 2>/dev/null | head -n 1; }

"$mpiexec" -n 2 --oversubscribe "$writer" write "$dir" >"$dir/writer.log" 2>&1 &
launcher=$!
wait_for '[ -f "$dir/latest" ]' "the first checkpoint"
# 16 MB of a 192 MB file: well inside the write.
wait_for '[ "$(tmp_bytes)" -gt 16000000 ] 2>/dev/null' "a checkpoint being written"
tmp=$(ls "$dir"/step_*.h5.tmp)
kill -9 $(cat "$dir"/writer.*.pid)
wait "$launcher" || true
launcher=

[ -f "$tmp" ] || fail "$tmp was renamed before the kill landed"
torn_step=$(basename "$tmp" | sed -E 's/step_0*([0-9]+)\.h5\.tmp/\1/')
echo "killed while writing $(basename "$tmp") ($(stat -c %s "$tmp") bytes), latest = $(cat "$dir/latest")"
out=$("$mpiexec" -n 3 --oversubscribe "$writer" verify "$dir" 2>&1) || fail "verify failed: $out"
echo "$out"
echo "$out" | grep -qx "resumed step $((torn_step - 1))" || fail "expected to resume from step $((torn_step - 1))"
echo "PASS"
