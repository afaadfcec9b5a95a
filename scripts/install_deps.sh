#!/usr/bin/env bash
# Installs the Debian packages embtrain needs to build, run and test. Idempotent: packages
# already present are skipped, and nothing is fetched when everything is there.
# Usage: scripts/install_deps.sh   (as root, or with sudo available)
set -euo pipefail

packages=(
  build-essential cmake pkg-config git ccache
  openmpi-bin libopenmpi-dev libucx-dev
  libhdf5-openmpi-dev hdf5-tools zlib1g-dev
  libcli11-dev libboost-test-dev libboost-context-dev nlohmann-json3-dev libfmt-dev
  libopenblas-dev
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev ffmpeg
  libmujoco-dev libegl-dev libegl1 libgl1-mesa-dri
  libsnappy-dev libzstd-dev libdav1d-dev
  libutf8proc-dev libsentencepiece-dev sentencepiece
  python3-torch python3-h5py python3-numpy python3-matplotlib python3-pil
  python3-regex python3-jinja2 python3-sentencepiece
  slurm-wlm slurmctld slurmd munge
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install_deps: installing ${#missing[@]} missing packages: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install_deps: not root and no sudo; install as root: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install_deps: done"
