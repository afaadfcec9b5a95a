#!/bin/bash
# LeRobot v3.0 video seek benchmark: writes outputs/bench/lerobot_video_seek.json. Usage (from
# the repo root): tests/data/run_video_seek_bench.sh [BUILD_DIR]   (default build)
# The fixture's two episodes (../shared/fixtures/lerobot/g1_v21) concatenated into one video as
# a v3.0 dataset stores them; episode 11 (frames [290, 711)) decoded from a keyframe seek
# against decoding from frame 0, at 224x224 on one decoder thread, best of 5 (CPU and wall seconds).
set -euo pipefail
build=${1:-build}
out=outputs/bench
mkdir -p "$out"
videos=../shared/fixtures/lerobot/g1_v21/videos/chunk-000/observation.images.cam_high
video=$out/lerobot_v30_cam_high.mp4
list=$(mktemp)
trap 'rm -f "$list"' EXIT
printf "file '%s'\nfile '%s'\n" "$PWD/$videos/episode_000010.mp4" "$PWD/$videos/episode_000011.mp4" >"$list"
ffmpeg -y -loglevel error -f concat -safe 0 -i "$list" -c copy "$video"
"$build/tests/data/bench_data_loader" seek "$video" 290 711 | tee "$out/lerobot_video_seek.json"
