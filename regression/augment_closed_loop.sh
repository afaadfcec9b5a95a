#!/usr/bin/env bash
# Issue 33's measurement: does feature augmentation help closed-loop success? On one MuJoCo task
# of the closed loop (CLOSED_LOOP.md; default reach), with a tiny RANDOM Eagle 2.5 backbone
# (tests/encoders_ref/make_tiny_encoders.py, the real Qwen tokenizer; random weights are a fixed
# feature extractor, not a pretrained one), the GR00T action head is trained three ways at equal
# steps, batch and seeds:
#   offline    `embpack features` (eval transforms, no augmentation)
#   augmented  `embpack features --augment K`, data.vl_augment = on (variant epoch mod K)
#   online     model.backbone = online, model.backbone_augment = on (a new draw every step)
# and every checkpoint is evaluated by `embsim eval` on the same eval-split episodes (whose vl
# rows the same backbone computes from the rendered frames). Prints a table of success (mean ±
# sample std over the training seeds, and each seed's) and writes it to OUT/table.md and
# OUT/results.json. Usage: regression/augment_closed_loop.sh [BUILD_DIR]; sizes by environment:
#   AUGMENT_LOOP_DIR (outputs/augment_closed_loop; emptied first)  TASK (reach)  DEMOS (60)
#   STEPS (500)  BATCH (16)  SEEDS ("1 2 3")  AUGMENT (4)  EPISODES (30)  IMAGE (56)  NP (1)
set -euo pipefail
build=$(realpath "${1:-build}")
cd "$(dirname "$0")/.."
source scripts/mpi_env.sh
root=$(realpath -m "${AUGMENT_LOOP_DIR:-outputs/augment_closed_loop}")
task=${TASK:-reach} demos=${DEMOS:-60} steps=${STEPS:-500} batch=${BATCH:-16} seeds=${SEEDS:-"1 2 3"}
augment=${AUGMENT:-4} episodes=${EPISODES:-30} image=${IMAGE:-56} np=${NP:-1}
# One thread a process: OpenMP threads spinning on a shared, loaded machine cost ~20x.
run() { mpirun -np "$np" --oversubscribe -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$@"; }
stage() { echo "== $1 ($(( $(date +%s) - start )) s)"; }
start=$(date +%s)
rm -rf "$root"
mkdir -p "$root"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

stage "tiny random Eagle backbone (image $image, real tokenizer)"
/usr/bin/python3 tests/encoders_ref/make_tiny_encoders.py --which eagle --out "$root" --image-size "$image" >/dev/null
backbone=$root/eagle
for f in ../shared/fixtures/eagle2_5_tokenizer/*; do
  [ "$(basename "$f")" = config.json ] || cp "$f" "$backbone/eagle2_hg_model/"
done

stage "expert demonstrations: $task, $demos episodes (collect seed 1)"
run "$build/embsim" collect "$task" --episodes "$demos" --seed 1 -o "$root/demos.h5"
stage "embpack features --backbone, --augment $augment"
run "$build/embpack" features --backbone "$backbone" "$root/demos.h5" -o "$root/eagle.h5" --augment "$augment" --seed 5

declare -A regime_sets=(
  [offline]="--set data.vl_backbone=$backbone"
  [augmented]="--set data.vl_backbone=$backbone --set data.vl_augment=on"
  [online]="--set model.backbone=online --set model.backbone_dir=$backbone --set model.backbone_augment=on")
regimes="offline augmented online"
for seed in $seeds; do
  for regime in $regimes; do
    name=${regime}_seed$seed
    stage "train $name: $steps steps of $batch"
    # shellcheck disable=SC2086
    run "$build/embtrain" inputs/closed_loop_gr00t.in --set run.name="$name" --set run.output_dir="$root/runs" \
      --set run.seed="$seed" --set data.paths="$root/eagle.h5" --set train.steps="$steps" \
      --set train.global_batch="$batch" --set data.tokens_per_mb=8192 --set train.warmup_steps=$(( steps / 20 )) \
      --set train.ckpt_every="$steps" --set train.ckpt_dir="$root/ckpt/$name" --set run.log_every="$steps" \
      ${regime_sets[$regime]} | grep -E "^(done|step $steps/)"
    stage "eval $name: $episodes episodes (eval seed 2)"
    run "$build/embsim" eval "$root/ckpt/$name" --task "$task" --episodes "$episodes" --seed 2 --videos 0 \
      --out "$root/eval/$name" | grep "success"
  done
done
stage "expert and random baselines"
for baseline in expert random; do
  run "$build/embsim" eval "$baseline" --task "$task" --episodes "$episodes" --seed 2 --videos 0 \
    --out "$root/eval/$baseline" | grep "success"
done

seconds=$(( $(date +%s) - start ))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
/usr/bin/python3 - "$root" "$task" "$regimes" "$seeds" "$seconds" "$load_before" "$load_after" \
  "steps $steps x batch $batch, $demos demos, K = $augment, $episodes eval episodes, image $image" <<'PY'
import json, statistics, sys
root, task, regimes, seeds, seconds, load_before, load_after, sizes = sys.argv[1:]
def rate(name):
    return json.load(open(f"{root}/eval/{name}/eval.json"))["tasks"][task]["success_rate"]
rows, results = [], {}
for regime in regimes.split():
    per_seed = [rate(f"{regime}_seed{s}") for s in seeds.split()]
    spread = statistics.stdev(per_seed) if len(per_seed) > 1 else 0.0
    results[regime] = {"mean": statistics.mean(per_seed), "std": spread, "per_seed": per_seed}
    rows.append(f"| {regime} | {statistics.mean(per_seed):.3f} ± {spread:.3f} | "
                + ", ".join(f"{r:.3f}" for r in per_seed) + " |")
for baseline in ("expert", "random"):
    results[baseline] = {"mean": rate(baseline)}
    rows.append(f"| {baseline} (baseline) | {rate(baseline):.3f} | |")
table = "\n".join([f"task {task}; {sizes}; training seeds {seeds}; {seconds} s; load average {load_before} "
                   f"before, {load_after} after", "",
                   "| regime | success (mean ± std over seeds) | per seed |", "|---|---|---|"] + rows)
print(table)
open(f"{root}/table.md", "w").write(table + "\n")
json.dump(results, open(f"{root}/results.json", "w"), indent=2)
PY
