#!/usr/bin/env bash
# A single-node Slurm on localhost for CI (issue 17): munged, slurmctld and slurmd run as
# background processes of this machine (no systemd), from a generated slurm.conf in DIR, on
# ports nobody else here uses. The node offers every core of this machine.
#   local_cluster.sh start DIR    # prints `export SLURM_CONF=DIR/slurm.conf` for the caller
#   local_cluster.sh stop DIR     # stops the daemons it started (by their pid files)
set -euo pipefail
cmd=$1
dir=$(realpath -m "$2")

stop() {
  # Jobs first, while the daemons can still end them (their step daemons outlive slurmd).
  if [ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    SLURM_CONF=$dir/slurm.conf scancel --full $(SLURM_CONF=$dir/slurm.conf squeue -h -o %i) 2>/dev/null || true
    for _ in $(seq 50); do
      [ -z "$(SLURM_CONF=$dir/slurm.conf squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  for daemon in slurmd slurmctld munged; do
    local pidfile="$dir/$daemon.pid"
    [ -f "$pidfile" ] || continue
    local pid
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  done
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: local_cluster.sh start|stop DIR" >&2; exit 2; }
for tool in munged slurmctld slurmd sbatch scontrol; do
  command -v "$tool" >/dev/null || { echo "local_cluster: $tool not found (Debian: slurm-wlm slurmctld slurmd munge)" >&2; exit 77; }
done
mkdir -p "$dir"/{spool,state,munge,log}
chmod 755 "$dir/munge"  # clients reach the socket through it
host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
# Ports from the directory's hash: parallel CI jobs on one machine do not collide.
base=$(( 20000 + $(cksum <<<"$dir" | cut -d' ' -f1) % 20000 ))
key=$dir/munge/munge.key
dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
chmod 400 "$key"
cat > "$dir/slurm.conf" <<CONF
ClusterName=embtrain-ci
SlurmctldHost=$host
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobRequeue=1
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=600
KillWait=10
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
munged --socket="$dir/munge/munge.socket" --key-file="$key" --pid-file="$dir/munged.pid" \
  --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" --force
export SLURM_CONF=$dir/slurm.conf
slurmctld -D -f "$SLURM_CONF" >"$dir/log/slurmctld.out" 2>&1 &
echo $! > "$dir/slurmctld.pid"
slurmd -D -f "$SLURM_CONF" -N "$host" >"$dir/log/slurmd.out" 2>&1 &
echo $! > "$dir/slurmd.pid"
for _ in $(seq 100); do
  if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.3
done
echo "local_cluster: the node did not come up; logs in $dir/log:" >&2
tail -n 5 "$dir"/log/* >&2 || true
stop
exit 1
