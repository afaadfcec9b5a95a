#!/usr/bin/env bash
# regression/augment_closed_loop.sh's pipeline at its smallest size (issue 33): the tiny random
# Eagle backbone, demonstrations, `embpack features --augment`, the head trained offline,
# augmented and online on two seeds, `embsim eval` of each. It must complete, report a success
# rate in [0, 1] for every regime and seed, and every checkpoint must have been evaluated with
# the Eagle backbone (eval.json's vl_encoder), never the stand-in encoder. The measurement itself
# (regression/augment_closed_loop.md) is not a test. Usage: augment_closed_loop_test.sh BUILD_DIR
set -euo pipefail
build=$(realpath "$1")
out=$(mktemp -d /tmp/augment_closed_loop_test.XXXXXX)
trap 'rm -rf "$out"' EXIT
AUGMENT_LOOP_DIR=$out/run DEMOS=3 STEPS=2 BATCH=2 SEEDS="1 2" AUGMENT=2 EPISODES=2 \
  bash "$(dirname "$0")/../../regression/augment_closed_loop.sh" "$build"
/usr/bin/python3 - "$out/run" <<'PY'
import json, sys
root = sys.argv[1]
results = json.load(open(f"{root}/results.json"))
for regime in ("offline", "augmented", "online"):
    rates = results[regime]["per_seed"]
    assert len(rates) == 2 and all(0.0 <= r <= 1.0 for r in rates), (regime, rates)
    for seed in (1, 2):  # every training run records its features' encoder in its checkpoints
        encoder = json.load(open(f"{root}/eval/{regime}_seed{seed}/eval.json"))["vl_encoder"]
        assert encoder == f"Eagle backbone {root}/eagle (recorded in the checkpoint)", (regime, encoder)
assert results["expert"]["mean"] == 1.0, results["expert"]
print("augment_closed_loop: three regimes x two seeds evaluated with the Eagle backbone:",
      {k: v["per_seed"] for k, v in results.items() if "per_seed" in v})
PY
