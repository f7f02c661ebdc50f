#!/usr/bin/env bash
# A real Slurm cluster on this one host, for trying `--launcher slurm` without a cluster and for
# the end-to-end tests: munge, slurmctld and one slurmd per emulated machine, each machine a
# network namespace on a bridge of its own (no route out) with a private view of the folders
# named by --private (an empty tmpfs in a mount namespace of its own), so that no machine sees a
# file another wrote. COMMAND runs on the "login node" (the controller's namespace) with
# SLURM_CONF set; everything is taken down when it ends, however it ends.
#
#   sudo bash scripts/emulated-slurm.sh [--nodes N] [--cpus C] [--bandwidth R] [--latency D]
#        [--harness PATH] [--private DIR]... [--keep-state DIR] -- COMMAND [ARG...]
#   sudo bash scripts/emulated-slurm.sh -- bash      # a shell on the login node: try sinfo
#
# Nodes are named n1..nN (10.98.0.1..N, the controller "ctl" 10.98.0.254); every machine's
# /etc/hosts names them (a bind mount: the host's own /etc/hosts is not touched). --bandwidth
# and --latency shape each node's link exactly as `cluster.network.inter_machine` shapes the
# harness's own emulated machines (`harness shape-link`; the harness is $HARNESS, --harness, or
# build/harness beside this script). Needs root, iproute2, slurmctld, slurmd, slurm-client and
# munge (Debian: apt install slurmd slurmctld slurm-client munge). Exit: COMMAND's status; 2
# when the cluster cannot be built (one line saying why), 77 when this host cannot make
# namespaces or lacks Slurm (a test skips).
set -euo pipefail

# What the cluster is made of, removed by force: every process in its machines (slurmstepd and
# the tasks under it outlive their slurmd), the machines, the state folder. The teardown ends
# with it; a reaper runs it when this script was killed without running its trap (SIGKILL).
# cluster_pids PREFIX NODES STATE: every process in its machines, and munged (in the host's
# namespace, its pid in the state folder).
cluster_pids() {
  local k
  for k in $(seq "$2"); do ip netns pids "$1n$k" 2>/dev/null; done
  ip netns pids "$1ctl" 2>/dev/null
  cat "$3/munge/pid" 2>/dev/null || true
}
# wait_gone PID...: until none of them is a process any more, not even one waiting to be reaped
# (a daemon's children go to init when it dies, which reaps them in its own time), at most 10 s:
# a caller that returns then leaves nothing of the cluster behind.
wait_gone() {
  local left=("$@") still pid
  for _ in $(seq 100); do
    still=()
    for pid in "${left[@]}"; do [[ -e /proc/$pid ]] && still+=("$pid"); done
    ((${#still[@]})) || return 0
    left=("${still[@]}")
    sleep 0.1
  done
  echo "emulated-slurm: processes of the cluster not reaped after 10 s: ${left[*]}" >&2
}
remove_machines() {  # prefix nodes state
  local k pids
  pids=$(cluster_pids "$@")
  # shellcheck disable=SC2086
  [[ -z $pids ]] || kill -KILL $pids 2>/dev/null
  # shellcheck disable=SC2086
  wait_gone $pids
  for k in $(seq "$2"); do ip netns del "$1n$k" 2>/dev/null; done
  ip netns del "$1ctl" 2>/dev/null
  ip netns del "$1sw" 2>/dev/null
  rm -rf "$3"
}
if [[ ${1:-} == --remove-machines ]]; then
  set +e
  remove_machines "$2" "$3" "$4"
  exit 0
fi

nodes=2 cpus=2 bandwidth="" latency="" keep_state=""
harness=${HARNESS:-$(dirname "$(realpath "$0")")/../build/harness}
private=()
usage() { echo "usage: $0 [--nodes N] [--cpus C] [--bandwidth R] [--latency D] [--harness PATH] [--private DIR]... [--keep-state DIR] -- COMMAND..." >&2; exit 2; }
while (($#)); do
  case $1 in
    --nodes | --cpus | --bandwidth | --latency | --harness | --private | --keep-state)
      (($# >= 2)) || { echo "error: $1: needs a value" >&2; exit 2; } ;;&
    --nodes) nodes=$2; shift 2 ;;
    --cpus) cpus=$2; shift 2 ;;
    --bandwidth) bandwidth=$2; shift 2 ;;
    --latency) latency=$2; shift 2 ;;
    --harness) harness=$2; shift 2 ;;
    --private) private+=("$(realpath -m "$2")"); shift 2 ;;
    --keep-state) keep_state=$(realpath -m "$2"); shift 2 ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
(($#)) || usage
[[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 1 && nodes <= 64)) ||
  { echo "error: --nodes: expected 1..64, got '$nodes'" >&2; exit 2; }
[[ $cpus =~ ^[0-9]+$ ]] && ((cpus >= 1)) || { echo "error: --cpus: expected >= 1, got '$cpus'" >&2; exit 2; }

for folder in "${private[@]}"; do
  [[ -d $folder ]] || { echo "error: --private: $folder is not a folder" >&2; exit 2; }
done

unavailable() { echo "emulated-slurm: unavailable here: $*" >&2; exit 77; }
[[ $(id -u) == 0 ]] || unavailable "needs root (network and mount namespaces)"
for program in ip tc nsenter unshare setpriv slurmctld slurmd srun sinfo munged; do
  command -v "$program" >/dev/null ||
    unavailable "no '$program' on PATH (apt install iproute2 slurmd slurmctld slurm-client munge)"
done
# Slurm 22.05's slurmd starts its cgroup plugin whatever the configuration asks (it has no
# disabled one) and gives up where no cgroup file system is mounted: a chroot given a bare sysfs.
findmnt /sys/fs/cgroup >/dev/null ||
  unavailable "slurmd needs a cgroup file system at /sys/fs/cgroup, and none is mounted here"

prefix=harness-$$-  # the harness removes namespaces of this shape whose process is gone
state=$(mktemp -d /run/harness-slurm.XXXXXX 2>/dev/null || mktemp -d /var/tmp/harness-slurm.XXXXXX)
switch=${prefix}sw login=${prefix}ctl
node_ns() { echo "${prefix}n$1"; }
daemons=()

teardown() {
  local code=$?
  trap - EXIT INT TERM
  set +e
  # Every process of the cluster as it is now: the daemons' children that outlive them go to
  # init, and are waited for (remove_machines) however they end.
  local all_pids
  all_pids=$(cluster_pids "$prefix" "$nodes" "$state")
  # Jobs first (their steps end with them), then the daemons, then the machines.
  if [[ -e $state/slurm.conf ]] && ((${#daemons[@]})); then
    SLURM_CONF=$state/slurm.conf nsenter --net="/run/netns/$login" scancel --quiet --full \
      --user=root >/dev/null 2>&1
    for _ in $(seq 50); do
      [[ -z $(SLURM_CONF=$state/slurm.conf nsenter --net="/run/netns/$login" squeue -h 2>/dev/null) ]] &&
        break
      sleep 0.1
    done
  fi
  for pid in "${daemons[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${daemons[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [[ -n $keep_state ]]; then
    mkdir -p "$keep_state" && cp -r "$state"/. "$keep_state"/ 2>/dev/null
  fi
  remove_machines "$prefix" "$nodes" "$state"
  # shellcheck disable=SC2086
  wait_gone $all_pids
  kill -KILL "$reaper" 2>/dev/null
  wait "$reaper" 2>/dev/null
  exit "$code"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The reaper: told by the kernel when this script is gone (a parent-death signal), however it
# went; the teardown stops it first when it runs.
setpriv --pdeathsig TERM bash -c 'trap "bash \"$0\" --remove-machines \"$1\" \"$2\" \"$3\"; exit 0" TERM
  while :; do sleep 0.2; done' "$(realpath "$0")" "$prefix" "$nodes" "$state" &
reaper=$!

cannot() { echo "error: emulated-slurm: $*" >&2; exit 2; }

# The machines: a bridge in a switch namespace, the controller and every node on it.
machine() {  # namespace address port
  ip netns add "$1"
  ip -n "$1" link set lo up
  ip -n "$1" link add eth0 type veth peer name "$3" netns "$switch"
  ip -n "$switch" link set "$3" master br0
  ip -n "$switch" link set "$3" up
  ip -n "$1" addr add "$2/24" dev eth0
  ip -n "$1" link set eth0 up
}
{
  ip netns add "$switch"
  ip -n "$switch" link set lo up
  ip -n "$switch" link add br0 type bridge
  ip -n "$switch" link set br0 up
  machine "$login" 10.98.0.254 ctl
  for k in $(seq "$nodes"); do machine "$(node_ns "$k")" "10.98.0.$k" "n$k"; done
} 2>"$state/ip.err" || unavailable "cannot build network namespaces: $(head -1 "$state/ip.err")"
# Each node's link shaped by the harness itself, exactly as it shapes `cluster.machines`.
if [[ -n $bandwidth || -n $latency ]]; then
  shaping=()
  [[ -n $bandwidth ]] && shaping+=(--bandwidth "$bandwidth")
  [[ -n $latency ]] && shaping+=(--latency "$latency")
  [[ -x $harness ]] || cannot "--bandwidth/--latency need the harness binary (--harness PATH; $harness is none)"
  for k in $(seq "$nodes"); do
    "$harness" shape-link --netns "$(node_ns "$k")" "${shaping[@]}" 2>"$state/shape.err" ||
      cannot "$(head -1 "$state/shape.err" | sed 's/^error: //')"
  done
fi

{
  echo "127.0.0.1 localhost"
  echo "10.98.0.254 ctl"
  for k in $(seq "$nodes"); do echo "10.98.0.$k n$k"; done
} >"$state/hosts"

# munge: a key of our own, a socket in the state folder (a path socket crosses namespaces).
mkdir -p "$state/munge" "$state/ctld"
chmod 700 "$state/munge"
head -c 1024 /dev/urandom >"$state/munge/munge.key"
chmod 400 "$state/munge/munge.key"
setpriv --pdeathsig KILL munged --foreground --force --key-file="$state/munge/munge.key" \
  --socket="$state/munge/socket" --pid-file="$state/munge/pid" --seed-file="$state/munge/seed" \
  --log-file="$state/munge/log" >/dev/null 2>&1 &
daemons+=($!)

node_names="n[1-$nodes]"
((nodes == 1)) && node_names=n1
cat >"$state/slurm.conf" <<CONF
ClusterName=emulated
SlurmctldHost=ctl(10.98.0.254)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$state/munge/socket
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/%n
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/%n.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=10
KillWait=2
InactiveLimit=0
MinJobAge=2
NodeName=DEFAULT CPUs=$cpus State=UNKNOWN
$(for k in $(seq "$nodes"); do echo "NodeName=n$k NodeAddr=10.98.0.$k"; done)
PartitionName=main Nodes=$node_names Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$state/slurm.conf

for _ in $(seq 50); do [[ -S $state/munge/socket ]] && break; sleep 0.1; done
[[ -S $state/munge/socket ]] || cannot "munged did not start: $(tail -1 "$state/munge/log" 2>/dev/null)"

# A machine's own view: its network namespace, its host name (a UTS namespace: slurmctld and
# slurmd know themselves by it), a mount namespace where /etc/hosts names the
# cluster and (on the nodes) every --private folder is an empty tmpfs. Propagation is slave:
# the host's mounts still reach it, its own never reach the host. The login node sees the
# host's folders: the harness there writes the results.
on_machine() {  # namespace name node|login command...; replaces the (sub)shell that calls it
  local ns=$1 name=$2 role=$3
  shift 3
  local mounts="hostname $name && mount --bind '$state/hosts' /etc/hosts"
  if [[ $role == node ]]; then
    for folder in "${private[@]}"; do mounts+=" && mount -t tmpfs -o mode=0755 harness-private '$folder'"; done
  fi
  exec setpriv --pdeathsig KILL nsenter --net="/run/netns/$ns" unshare --uts --mount --propagation slave \
    sh -c "$mounts && exec \"\$0\" \"\$@\"" "$@"
}

on_machine "$login" ctl login slurmctld -D -i -f "$SLURM_CONF" >/dev/null 2>&1 &
daemons+=($!)
for k in $(seq "$nodes"); do
  mkdir -p "$state/n$k"
  on_machine "$(node_ns "$k")" "n$k" node slurmd -D -N "n$k" -f "$SLURM_CONF" >/dev/null 2>&1 &
  daemons+=($!)
done

# Up when every node is idle (about 4 s here); 30 s at most.
ready=0
for _ in $(seq 300); do
  idle=$(nsenter --net="/run/netns/$login" sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
  if ((idle == nodes)); then ready=1; break; fi
  sleep 0.1
done
if ((!ready)); then
  # A node's first error says why it never registered; else the controller's last words.
  why=$(tail -2 "$state/slurmctld.log" 2>/dev/null | tr '\n' ' ')
  for k in $(seq "$nodes"); do
    if error=$(grep -m1 'error: ' "$state/n$k.log" 2>/dev/null); then
      why="slurmd n$k: ${error#*error: }"
      break
    fi
  done
  cannot "the nodes did not come up within 30 s: $why"
fi
echo "emulated-slurm: $nodes node(s) n1..n$nodes idle; SLURM_CONF=$SLURM_CONF" >&2

# COMMAND on the login node. Not exec: the trap takes the cluster down when it returns. In the
# background, waited for: bash runs a trap (SIGTERM, SIGINT) only once a foreground command has
# ended, but at once during `wait`. Its standard input stays this script's (`-- bash` works).
set +e
exec 3<&0
(on_machine "$login" ctl login "$@") <&3 &
wait $!
exit $?
