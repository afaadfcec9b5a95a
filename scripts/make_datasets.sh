#!/usr/bin/env bash
# The synthetic datasets the tiny decks train on (outputs/data/), made once with embpack.
# Their feature sizes match the tiny_gr00t and tiny_wan presets (MODEL.md). embpack verify records
# a clean verify in each (data.verify = auto then skips it), so no test run writes into them.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
mkdir -p outputs/data
if [ ! -f outputs/data/tiny_gr00t.h5 ]; then
  "$build/embpack" synth --family gr00t --episodes 48 --min-steps 50 --max-steps 200 --seed 1 \
    --embodiments 3 --state-dim 16 --action-dim 8 --d-vl 32 -o outputs/data/tiny_gr00t.h5
fi
if [ ! -f outputs/data/tiny_wan.h5 ]; then
  "$build/embpack" synth --family wan --episodes 24 --min-steps 50 --max-steps 200 --seed 2 \
    --action-dim 8 --d-txt 32 --latent-channels 4 --latent-height 4 --latent-width 4 -o outputs/data/tiny_wan.h5
fi
for f in outputs/data/tiny_gr00t.h5 outputs/data/tiny_wan.h5; do
  "$build/embpack" verify "$f" >/dev/null
done
