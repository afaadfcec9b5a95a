#!/bin/bash
# Data-path benchmarks: writes outputs/bench/data_loader.json. Usage (from the repo root):
#   tests/data/run_data_bench.sh [BUILD_DIR]      (default build)
set -euo pipefail
build=${1:-build}
out=outputs/bench
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
export OPENBLAS_NUM_THREADS=1
data=$out/data_bench_gr00t.h5
[ -f "$data" ] || "$build/embpack" synth --family gr00t --episodes 200 --seed 1 --d-vl 128 -o "$data"
video=$out/data_bench_video.mp4
[ -f "$video" ] || ffmpeg -y -loglevel error -f lavfi -i "testsrc=size=224x224:rate=30,noise=alls=30:allf=t" \
  -frames:v 600 -c:v libx264 -pix_fmt yuv420p "$video"
bench=$build/tests/data/bench_data_loader
raw=$("$bench" raw "$data")
l1=$(mpirun -np 1 "$bench" loader "$data")
l2=$(mpirun -np 2 "$bench" loader "$data")
l4=$(mpirun -np 4 --oversubscribe "$bench" loader "$data")
vid=$("$bench" video "$video")
/usr/bin/python3 - "$out/data_loader.json" <<PY
import json, sys
raw = json.loads('''$raw''')
runs = [json.loads(s) for s in ('''$l1''', '''$l2''', '''$l4''')]
for r in runs:
    r["packed"]["vs_raw_read"] = round(r["packed"]["file_MB_per_s"] / raw["MB_per_s"], 3)
res = {"file": "$data", "raw_sequential_read": raw, "loader": runs, "video_decode": json.loads('''$vid''')}
json.dump(res, open(sys.argv[1], "w"), indent=2)
print(json.dumps(res, indent=2))
PY
