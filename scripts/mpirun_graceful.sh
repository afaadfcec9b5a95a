#!/usr/bin/env bash
# Runs a launcher command (mpirun ... embtrain DECK) so that SIGTERM, SIGINT (Ctrl-C) or SIGUSR1 to this
# script, however many and however fast, becomes one SIGUSR1 to the launcher, which Open MPI
# forwards to every rank at once: each rank checkpoints at the next step boundary and exits 0
# (DESIGN.md "Checkpoints"), and so does the launcher. Open MPI 4.1's mpirun cannot be made to
# do this itself: it does not forward SIGTERM or SIGINT (ess_base_forward_signals refuses
# them), it answers the first with SIGCONT, then SIGTERM and SIGKILL to the ranks
# odls_base_sigkill_timeout apart and exits 1, and a second within 5 s makes it exit 1 at
# once (README "Stopping a run"). scripts/bin/mpirun, first on PATH after
# `source scripts/mpi_env.sh`, runs every plain `mpirun` through this script.
#   scripts/mpirun_graceful.sh mpirun -np 8 build/embtrain inputs/x.in
# The launcher runs in its own session, so a terminal's Ctrl-C reaches this script only; it
# gets SIGTERM (Open MPI's abort) if this script dies (kill -9), and so does a job that has not
# ended EMBTRAIN_STOP_GRACE_S seconds (default 600) after the stop request. SIGHUP (the
# terminal went away) is a stop request too. Exits with the launcher's status.
set -u
grace=${EMBTRAIN_STOP_GRACE_S:-600}
setsid setpriv --pdeathsig TERM "$@" &
launcher=$!
timer= stop_requested=
request_stop() {
  [ -n "$stop_requested" ] && return  # one request, however many signals
  stop_requested=1
  kill -USR1 "$launcher" 2>/dev/null
  setsid sleep "$grace" >/dev/null 2>&1 &  # its own session: a Ctrl-C to this group leaves it
  timer=$!
}
trap request_stop TERM INT USR1 HUP
while true; do
  finished=
  wait -n -p finished "$launcher" ${timer:+"$timer"}  # returns early when a trapped signal arrives
  status=$?
  [ "${finished:-}" = "$launcher" ] && break
  [ -z "${finished:-}" ] && [ "$status" = 127 ] && break  # nothing left to wait for
  if [ -n "$timer" ] && [ "${finished:-}" = "$timer" ]; then
    echo "mpirun_graceful: the job did not stop within $grace s of the stop request (EMBTRAIN_STOP_GRACE_S): aborting it" >&2
    kill -TERM "$launcher" 2>/dev/null
    timer=
  fi
done
[ -n "$timer" ] && kill "$timer" 2>/dev/null
exit "$status"
