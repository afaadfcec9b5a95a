#!/usr/bin/env bash
# `hwprobe --launch` (tools/hwprobe/fixed_costs.hpp): under the CUDA emulation it must say its
# figures are not a GPU's and print nothing that could be merged into a GPU hardware file; a
# build without the CUDA backend says how to get one.
#   hwprobe_launch_test.sh BUILD_DIR emulated|none
set -uo pipefail
build=$1
expect=$2
out=$("$build/hwprobe" --launch inputs/hw/h200.json 2>/tmp/hwprobe_launch_err.$$)
rc=$?
err=$(cat /tmp/hwprobe_launch_err.$$)
rm -f /tmp/hwprobe_launch_err.$$
fail() { echo "FAIL: $*"; echo "stdout: $out"; echo "stderr: $err"; exit 1; }
[ -z "$out" ] || fail "expected nothing on stdout"
case "$expect" in
emulated)
  [ $rc -eq 3 ] || fail "expected exit code 3, got $rc"
  [[ "$err" == *"emulated, not a GPU figure"* ]] || fail "expected the emulation to be named"
  [[ "$err" =~ [0-9]e-0[0-9]\ s\ per\ kernel\ launch ]] || fail "expected the emulated launch figure"
  ;;
none)
  [ $rc -eq 2 ] || fail "expected exit code 2, got $rc"
  [[ "$err" == *"no CUDA backend"* ]] || fail "expected the missing backend to be named"
  ;;
esac
echo "ok: hwprobe --launch ($expect)"
