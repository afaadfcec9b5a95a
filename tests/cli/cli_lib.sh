# Shared by the end-to-end test scripts (cli_test.sh, tests/train/cuda_step_test.sh), sourced
# after they set build and case_name. Runs from the repository root.
embtrain="$build/embtrain"
mpirun=(mpirun --oversubscribe -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
deck=${deck:-inputs/tiny_gr00t.in}  # the deck train() runs

fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }
# train NAME NP [--set ...]: a 20-step run of $deck into outputs/NAME (replacing an old one).
train() {
  local name=$1 np=$2
  shift 2
  rm -rf "outputs/$name"
  "${mpirun[@]}" -np "$np" "$embtrain" "$deck" --set train.steps=20 --set train.global_batch=8 \
    --set run.name="$name" "$@" \
    >"$tmp/$name.out" 2>&1 || fail "$name: exited $?: $(tail -3 "$tmp/$name.out")"
}
# same_losses A B [FIRST_STEP [TOLERANCE [LAST_STEP]]]: loss.csv of runs A and B agree to
# TOLERANCE (relative, default 1e-5) from FIRST_STEP to LAST_STEP (default: the last).
same_losses() {
  /usr/bin/python3 - "outputs/$1/loss.csv" "outputs/$2/loss.csv" "${3:-1}" "${4:-1e-5}" "${5:-0}" <<'PY' || fail "losses of $1 and $2 differ"
import csv, sys
def read(path, first, last):
    return {int(r["step"]): float(r["loss"]) for r in csv.DictReader(open(path))
            if int(r["step"]) >= first and (last == 0 or int(r["step"]) <= last)}
a, b = (read(p, int(sys.argv[3]), int(sys.argv[5])) for p in sys.argv[1:3])
assert a.keys() == b.keys() and len(a) > 0, (sorted(a), sorted(b))
worst = max(abs(a[k] - b[k]) / abs(b[k]) for k in a)
print(f"{sys.argv[1]} vs {sys.argv[2]}: {len(a)} steps, max relative difference {worst:.2e}")
assert worst <= float(sys.argv[4]), worst
PY
}
# rank_pids PID: the embtrain processes under PID (mpirun, or scripts/bin/mpirun and its mpirun).
rank_pids() {
  local child
  for child in $(pgrep -P "$1"); do
    if [ "$(cat "/proc/$child/comm" 2>/dev/null)" = embtrain ]; then echo "$child"; else rank_pids "$child"; fi
  done
}
expect_contains() { grep -qF -- "$2" <<<"$1" || fail "expected output to contain '$2', got: $1"; }
# expect_refused CODE EXPECTED COMMAND...: COMMAND (a run writing into $tmp/out) exits CODE (any = any
# non-zero) with exactly one error line, "embtrain: error: EXPECTED...", and leaves no $tmp/out.
expect_refused() {
  local want_code=$1 expected=$2
  shift 2
  "$@" >"$tmp/out.txt" 2>&1
  local code=$?
  if [ "$want_code" = any ]; then
    [ $code -ne 0 ] || fail "'$expected' expected, but the run exited 0"
  else
    [ $code -eq "$want_code" ] || fail "exit code $code, expected $want_code: $(cat "$tmp/out.txt")"
  fi
  [ "$(grep -c "^embtrain: error" "$tmp/out.txt")" -eq 1 ] || fail "expected one error line: $(cat "$tmp/out.txt")"
  grep -qF "embtrain: error: $expected" "$tmp/out.txt" || fail "expected '$expected', got: $(grep error "$tmp/out.txt")"
  [ ! -e "$tmp/out" ] || fail "a refused run left outputs: $(ls -R "$tmp/out")"
}
