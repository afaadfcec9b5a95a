#!/usr/bin/env bash
# Shows that the emulated attention tests catch the bugs the emulation exists for. In a scratch
# copy of the working tree it builds the emulated tests (plain and ASan), then for each mutant
# of kernels/cuda/attention.cu (every __syncthreads() removed in turn; tile bounds shifted by
# one) rebuilds and runs `cuda_test_kernels attention`, and `cuda_test_kernels_asan attention`
# when that passes. Prints a table (mutant, result, what caught it); exits 0 when the real code
# passes and every mutant fails.
# Usage: kernels/cuda/emu/mutation_check.sh [scratch-dir]   (JOBS=2 by default; an existing
# scratch-dir is reused as it is, build included)
set -uo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
scratch=${1:-$(mktemp -d /tmp/emb_mutants.XXXXXX)}
jobs=${JOBS:-2}
if [ ! -d "$scratch/src" ]; then
  mkdir -p "$scratch/src"
  (cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$scratch/src")
  cp "$scratch/src/kernels/cuda/attention.cu" "$scratch/attention.cu.orig"
fi
src=$scratch/src/kernels/cuda/attention.cu
cp "$scratch/attention.cu.orig" "$src"
cmake -S "$scratch/src" -B "$scratch/build" -DCMAKE_BUILD_TYPE=Release -DEMBTRAIN_CUDA=EMULATE >"$scratch/configure.log" 2>&1 ||
  { echo "mutation_check: configure failed, see $scratch/configure.log" >&2; exit 2; }

# Runs the attention tests on the current attention.cu: prints "pass" or "FAIL (<what caught it>)".
run_suite() {
  local log=$scratch/$1.log plain=0 asan=0
  if ! cmake --build "$scratch/build" -j "$jobs" --target cuda_test_kernels >"$log" 2>&1; then
    echo "FAIL (build)"; return
  fi
  (cd "$scratch/src" && timeout 900 "$scratch/build/kernels/cuda/cuda_test_kernels" attention) >>"$log" 2>&1 || plain=1
  if [ $plain -eq 0 ]; then
    if ! cmake --build "$scratch/build" -j "$jobs" --target cuda_test_kernels_asan >>"$log" 2>&1; then
      echo "FAIL (build)"; return
    fi
    (cd "$scratch/src" && ASAN_OPTIONS=detect_leaks=0 timeout 900 "$scratch/build/kernels/cuda/cuda_test_kernels_asan" \
      attention) >>"$log" 2>&1 || asan=1
  fi
  if [ $plain -eq 0 ] && [ $asan -eq 0 ]; then echo "pass"; return; fi
  local why=()
  grep -q "FAIL .*copies differing between schedules" "$log" && why+=("schedules differ")
  grep -q "^FAIL attention.* \(out\|lse\|dq\|dk\|dv\) " "$log" && why+=("vs reference")
  grep -q "emulated CUDA:" "$log" && why+=("emulation fault")
  grep -q "AddressSanitizer" "$log" && why+=("ASan")
  grep -q "runtime error:" "$log" && why+=("UBSan")
  local IFS=,
  echo "FAIL (${why[*]:-exit status})"
}

mutate() {  # mutate NAME PYTHON-EXPRESSION-ON-s: applies it to the original attention.cu
  python3 - "$scratch/attention.cu.orig" "$src" "$2" <<'PY' || { echo "mutation_check: mutant $1 does not apply" >&2; exit 2; }
import sys
s = open(sys.argv[1]).read()
t = eval(sys.argv[3])
assert t != s, "no change"
open(sys.argv[2], "w").write(t)
PY
}

failures=0
printf '%-58s %s\n' "mutant" "result"
real=$(run_suite real)
printf '%-58s %s\n' "real code" "$real"
[ "$real" = pass ] || failures=$((failures + 1))

n_sync=$(grep -c "__syncthreads();" "$scratch/attention.cu.orig")
for ((k = 0; k < n_sync; ++k)); do
  line=$(grep -n "__syncthreads();" "$scratch/attention.cu.orig" | sed -n "$((k + 1))p" | cut -d: -f1)
  mutate "sync$k" "(lambda p: s[:p[$k]] + '/* removed */' + s[p[$k] + len('__syncthreads();'):])([i for i in range(len(s)) if s.startswith('__syncthreads();', i)])"
  result=$(run_suite "sync$k")
  printf '%-58s %s\n' "remove __syncthreads() at attention.cu:$line" "$result"
  [[ $result == FAIL* ]] || failures=$((failures + 1))
done

bounds=(
  "forward: key tiles kt < tiles_of(Tk) - 1|s.replace('for (int64_t kt = 0; kt < tiles_of(p.Tk); ++kt) {\n    if (!tiles_may_attend(p.mask, q_tile, p.k_tiles[kt])) continue;  // uniform', 'for (int64_t kt = 0; kt < tiles_of(p.Tk) - 1; ++kt) {\n    if (!tiles_may_attend(p.mask, q_tile, p.k_tiles[kt])) continue;  // uniform', 1)"
  "load_tile: rows row0 + r <= T (one row past the end)|s.replace('row0 + r < T_ ?', 'row0 + r <= T_ ?', 1)"
  "forward: writes rows i > Tq (one row past the end)|s.replace('if (i >= p.Tq) return;\n  const float inv_l', 'if (i > p.Tq) return;\n  const float inv_l', 1)"
  "dkdv: query tiles qt < tiles_of(Tq) - 1|s.replace('qt < tiles_of(p.Tq); ++qt', 'qt < tiles_of(p.Tq) - 1; ++qt', 1)"
)
b=0
for entry in "${bounds[@]}"; do
  name=${entry%%|*}
  mutate "$name" "${entry#*|}"
  b=$((b + 1))
  result=$(run_suite "bound$b")
  printf '%-58s %s\n' "$name" "$result"
  [[ $result == FAIL* ]] || failures=$((failures + 1))
done
cp "$scratch/attention.cu.orig" "$src"
echo "logs: $scratch"
exit $((failures > 0))
