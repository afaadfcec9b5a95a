#!/usr/bin/env bash
# Bad input to embsim on 2 ranks: one line on stderr, a non-zero exit, no output file.
# Usage: embsim_cli_test.sh BUILD_DIR
set -uo pipefail
build=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_error NAME PATTERN ENV... -- ARGS...: embsim on 2 ranks must fail with one matching line.
expect_error() {
  local name=$1 pattern=$2
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" mpirun -np 2 --oversubscribe "$build/embsim" "$@" >"$out/$name.out" 2>"$out/$name.err"
  local rc=$?
  [ $rc -ne 0 ] || fail "$name: exit code 0"
  local lines
  lines=$(grep -c '^embsim: error:' "$out/$name.err")
  [ "$lines" = 1 ] || fail "$name: expected one error line, got $lines: $(cat "$out/$name.err")"
  grep -q "$pattern" "$out/$name.err" || fail "$name: no '$pattern' in: $(cat "$out/$name.err")"
  [ ! -e "$out/demos.h5" ] && [ ! -e "$out/demos.h5.tmp" ] || fail "$name: left an output file"
  echo "ok: $name"
}

expect_error unknown_task "unknown task 'stack' (known tasks: reach, push, pick_place)" X=1 -- \
  collect stack --episodes 2 -o "$out/demos.h5"
expect_error missing_mjcf "/nonexistent/reach.xml: missing MJCF file" X=1 -- \
  collect reach --episodes 2 --mjcf-dir /nonexistent -o "$out/demos.h5"
expect_error no_rendering_backend "no rendering backend" __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json -- \
  collect reach --episodes 2 -o "$out/demos.h5"
expect_error missing_checkpoint "no such checkpoint" X=1 -- \
  eval "$out/none.h5" --task reach --episodes 2 --out "$out/eval"
expect_error eval_unknown_task "unknown task 'reachh'" X=1 -- \
  eval zero --task reach,reachh --episodes 2 --out "$out/eval"
