#!/bin/bash
# Data-path benchmarks: writes outputs/bench/data_loader.json. Usage (from the repo root):
#   tests/data/run_data_bench.sh [BUILD_DIR]      (default build)
# Figures per rank count (1, 2, 4), packed and padded, first and warm epoch:
#   read_MB_per_s   the read path alone (shuffle-buffer reads + feature exchange) in file
#                   bytes per second; read_vs_raw compares it with raw_sequential_read (the
#                   issue-5 target: >= 0.8 on the warm epoch)
#   samples_per_s, file_MB_per_s   end to end (read + assembly + packing)
set -euo pipefail
build=${1:-build}
out=outputs/bench
mkdir -p "$out"
# MPI as root, shared-memory transport, and GLIBC_TUNABLES so the micro-batches handed to the
# trainer reuse heap memory instead of fresh pages (MACHINE.md "Memory: touch pages once").
source scripts/mpi_env.sh
export OPENBLAS_NUM_THREADS=1
data=$out/data_bench_gr00t.h5
[ -f "$data" ] || "$build/embpack" synth --family gr00t --episodes 200 --seed 1 --d-vl 128 -o "$data"
video=$out/data_bench_video.mp4
[ -f "$video" ] || ffmpeg -y -loglevel error -f lavfi -i "testsrc=size=224x224:rate=30,noise=alls=30:allf=t" \
  -frames:v 600 -c:v libx264 -pix_fmt yuv420p "$video"
bench=$build/tests/data/bench_data_loader
raw=$("$bench" raw "$data")
l1=$(mpirun -np 1 -x GLIBC_TUNABLES "$bench" loader "$data")
l2=$(mpirun -np 2 -x GLIBC_TUNABLES "$bench" loader "$data")
l4=$(mpirun -np 4 --oversubscribe -x GLIBC_TUNABLES "$bench" loader "$data")
vid=$("$bench" video "$video")
/usr/bin/python3 - "$out/data_loader.json" <<PY
import json, os, sys
raw = json.loads('''$raw''')
runs = [json.loads(s) for s in ('''$l1''', '''$l2''', '''$l4''')]
for r in runs:
    for mode in ("packed", "padded"):
        for epoch in ("first_epoch", "warm_epoch"):
            e = r[mode][epoch]
            e["read_vs_raw"] = round(e["read_MB_per_s"] / raw["MB_per_s"], 3)
            e["end_to_end_vs_raw"] = round(e["file_MB_per_s"] / raw["MB_per_s"], 3)
env = {k: os.environ.get(k, "unset") for k in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "GLIBC_TUNABLES")}
env["threads_per_rank"] = "2 (step consumer + prefetch reader)"
res = {"file": "$data", "env": env, "raw_sequential_read": raw, "loader": runs, "video_decode": json.loads('''$vid''')}
json.dump(res, open(sys.argv[1], "w"), indent=2)
print(json.dumps(res, indent=2))
PY
