#!/usr/bin/env bash
# Checks before the job step starts, each failing with one line that says what is wrong:
# the executable exists and its libraries resolve under the loaded modules, the deck parses,
# every dataset file is readable, and with run.device = cuda every node sees its GPUs.
#   preflight.sh DECK [embtrain --set arguments...]
set -euo pipefail
deck=$1
shift
exe=./build/embtrain
[ -x "$exe" ] || { echo "preflight: $exe not built (make build on the cluster, with the modules loaded)" >&2; exit 1; }
if missing=$(ldd "$exe" | grep 'not found'); then
  echo "preflight: $exe does not match the loaded modules: $missing" >&2
  exit 1
fi
resolved=$("$exe" "$deck" --print-deck "$@") || { echo "preflight: $deck does not parse" >&2; exit 1; }
value() { sed -n "/^\[$1\]/,/^\[/p" <<<"$resolved" | sed -n "s/^$2 *= *//p" | sed 's/ *#.*$//' | head -1; }
IFS=',' read -ra patterns <<<"$(value data paths)"
for pattern in "${patterns[@]}"; do
  pattern=$(xargs <<<"$pattern")
  found=0
  for f in $pattern; do
    [ -r "$f" ] || { echo "preflight: dataset $f is not readable (data.paths = $pattern)" >&2; exit 1; }
    found=1
  done
  [ $found = 1 ] || { echo "preflight: data.paths = $pattern matches no file" >&2; exit 1; }
done
if [ "$(value run device)" = cuda ]; then
  srun --ntasks-per-node=1 bash -c 'n=$(nvidia-smi -L | wc -l); [ "$n" -ge "${SLURM_GPUS_ON_NODE:-1}" ] ||
    { echo "preflight: $(hostname) sees $n GPUs" >&2; exit 1; }' || exit 1
fi
echo "preflight: ok ($deck, $(wc -w <<<"${patterns[*]}") dataset pattern(s))"
