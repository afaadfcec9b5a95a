#!/usr/bin/env bash
# Bad input to embsim on 2 ranks: one line on stderr, exit 2, no output file (no eval.json,
# complete or not, and no output directory of a refused evaluation).
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
  [ $rc -eq 2 ] || fail "$name: exit code $rc, expected 2: $(cat "$out/$name.err")"
  local lines
  lines=$(grep -c '^embsim: error:' "$out/$name.err")
  [ "$lines" = 1 ] || fail "$name: expected one error line, got $lines: $(cat "$out/$name.err")"
  grep -q "$pattern" "$out/$name.err" || fail "$name: no '$pattern' in: $(cat "$out/$name.err")"
  [ ! -e "$out/demos.h5" ] && [ ! -e "$out/demos.h5.tmp" ] && [ ! -e "$out/eval" ] || fail "$name: left an output: $(ls -R "$out")"
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

# Closed-loop evaluation of what cannot be evaluated: a checkpoint of another family or size, a
# truncated one, an MJCF file that does not compile, no EGL.
source scripts/mpi_env.sh
for deck in tiny_gr00t tiny_wan; do
  mpirun -np 2 --oversubscribe -x OMP_NUM_THREADS=1 "$build/embtrain" inputs/$deck.in --set train.steps=2 \
    --set train.ckpt_every=2 --set run.output_dir="$out/runs" --set train.ckpt_dir="$out/$deck" >"$out/$deck.txt" 2>&1 ||
    fail "training $deck exited $?: $(tail -3 "$out/$deck.txt")"
done
expect_error eval_other_family "$out/tiny_wan/step_00000002.h5: a wan checkpoint; embsim eval runs gr00t policies" X=1 -- \
  eval "$out/tiny_wan/step_00000002.h5" --task reach --episodes 2 --out "$out/eval"
expect_error eval_other_size "$out/tiny_gr00t/step_00000002.h5: trained on data without task reach's embodiment" X=1 -- \
  eval "$out/tiny_gr00t/step_00000002.h5" --task reach --episodes 2 --out "$out/eval"
cp "$out/tiny_gr00t/step_00000002.h5" "$out/truncated.h5"
truncate -s $(($(stat -c %s "$out/truncated.h5") / 2)) "$out/truncated.h5"
expect_error eval_truncated "$out/truncated.h5: cannot open as HDF5 (truncated or corrupt file)" X=1 -- \
  eval "$out/truncated.h5" --task reach --episodes 2 --out "$out/eval"
mkdir -p "$out/mjcf"
cp src/sim/mjcf/*.xml "$out/mjcf/"
echo "<mujoco><worldbody><geom type='nosuchtype'/></worldbody></mujoco>" >"$out/mjcf/reach.xml"
expect_error eval_mjcf_fails "$out/mjcf/reach.xml: MJCF does not compile: XML Error: invalid keyword: 'nosuchtype' Element 'geom', line 1$" X=1 -- \
  eval zero --task reach --episodes 2 --mjcf-dir "$out/mjcf" --out "$out/eval"
expect_error eval_no_egl "no rendering backend" __EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent.json -- \
  eval zero --task reach --episodes 2 --videos 1 --out "$out/eval"
