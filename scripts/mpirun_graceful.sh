#!/usr/bin/env bash
# Runs a launcher command (mpirun ... embtrain DECK) so that SIGTERM or SIGINT to this script,
# however many and however fast, becomes SIGUSR1 to the launcher, which Open MPI forwards to
# every rank at once: each rank checkpoints at the next step boundary and exits cleanly
# (DESIGN.md "Checkpoints"). mpirun's own SIGTERM handling kills the ranks
# odls_base_sigkill_timeout (default 1 s) after forwarding SIGTERM, and a second SIGTERM
# kills them at once, losing the checkpoint (README "Stopping a run").
#   scripts/mpirun_graceful.sh mpirun -np 8 build/embtrain inputs/x.in
# Exits with the launcher's status.
set -u
"$@" &
launcher=$!
trap 'kill -USR1 "$launcher" 2>/dev/null' TERM INT
while true; do
  wait "$launcher"
  status=$?
  kill -0 "$launcher" 2>/dev/null || exit "$status"  # a trapped signal interrupted wait: wait again
done
