# Shared by the embsim end-to-end scripts (embsim_rl_test.sh, embsim_cuda_test.sh), sourced with
# `build` set: a scratch directory $out removed on exit, and the helpers below.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
run() { mpirun -np "$1" --oversubscribe -x OMP_NUM_THREADS=1 "${@:2}"; }
json() { /usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# A tiny SFT checkpoint in $out/sft: 2 steps of closed_loop_gr00t on 2 expert episodes of push.
sft_checkpoint() {
  run 2 "$build/embsim" collect push --episodes 2 --seed 1 -o "$out/push.h5" >/dev/null || fail "collect"
  run 2 "$build/embtrain" inputs/closed_loop_gr00t.in --set run.output_dir="$out" --set run.name=sft \
    --set data.paths="$out/push.h5" --set train.global_batch=8 --set train.steps=2 --set train.ckpt_every=2 \
    --set train.ckpt_dir="$out/sft" >/dev/null || fail "sft"
}
