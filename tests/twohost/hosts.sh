#!/usr/bin/env bash
# Two simulated hosts on this one machine, for running MPI jobs across a real
# (virtual) network rather than MPICH's simulated node splits, where every
# rank still shares memory, /dev/shm and PIDs:
#   host a and host b: each its own network, UTS (hostname rmhosta/rmhostb),
#     mount (a fresh tmpfs on /dev/shm, its own /proc, an /etc/hosts naming
#     the hosts) and PID namespace, held by one long-lived "holder" process
#     (PID 1 of the host's PID namespace) that every process of that host is
#     entered beside (nsenter), so the ranks of one host share all of it;
#   data network: a veth pair rmsh0 <-> rmsh0, 10.77.0.1 and 10.77.0.2 (UCX's
#     TCP transport is pinned to it: UCX_NET_DEVICES=rmsh0);
#   management network: a bridge in a third network namespace (the "head
#     node", 10.78.0.254) with a veth to each host (mgmt0, 10.78.0.1 and .2)
#     for hydra's control connections; mpiexec runs there, in this machine's
#     PID and mount namespaces, so it can enter both hosts' PID namespaces
#     (a process in one host could not enter its sibling's).
# Addresses exist only inside the namespaces; this machine's own network is
# untouched.
#
#   hosts.sh up DIR     creates them; DIR gets the state (names, holder pids)
#   hosts.sh down DIR   kills every process in them and deletes them
#   hosts.sh check      exit 0 if this machine lets us create them, else
#                       prints why not (exit 1)
# Names carry the pid of the process that ran "up" (rmth<pid>{a,b,l}, the
# calling script: it must outlive the hosts); "up" first removes leftovers
# of runs whose caller is gone (a test killed without its trap).
set -euo pipefail
export PATH=/usr/sbin:/sbin:$PATH

netns_pids_kill() {  # kills every process in network namespace $1
  local pids
  pids=$(ip netns pids "$1" 2>/dev/null || true)
  [[ -z "$pids" ]] || kill -9 $pids 2>/dev/null || true
}

remove_set() {  # prefix: kills and deletes rmth<pid>{a,b,l}
  local ns
  for ns in "$1"a "$1"b "$1"l; do
    ip netns list 2>/dev/null | grep -w "^$ns" >/dev/null || continue
    netns_pids_kill "$ns"
    ip netns del "$ns" 2>/dev/null || true
  done
}

remove_stale() {
  local ns pid
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^rmth[0-9]+[abl]$'); do
    pid=${ns#rmth}
    pid=${pid%?}
    # Gone, or a zombie nobody has reaped yet.
    if [[ ! -d /proc/$pid ]] || [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]]; then
      remove_set "rmth$pid"
    fi
  done
}

check() {
  local probe=rmthprobe$$
  if ! command -v ip >/dev/null || ! command -v nsenter >/dev/null ||
     ! command -v unshare >/dev/null; then
    echo "iproute2 (ip) or util-linux (unshare, nsenter) is not installed"
    return 1
  fi
  local err
  if ! err=$(ip netns add "$probe" 2>&1); then
    # ip may leave the name behind when it fails after creating it.
    ip netns del "$probe" >/dev/null 2>&1 || rm -f "/run/netns/$probe" 2>/dev/null || true
    echo "cannot create a network namespace (ip netns add: ${err:-failed}); needs root with CAP_SYS_ADMIN outside a sandbox"
    return 1
  fi
  if ! err=$(ip -n "$probe" link add name p0 type veth peer name p1 2>&1) ||
     ! err=$(ip -n "$probe" link add br0 type bridge 2>&1); then
    ip netns del "$probe" 2>/dev/null || true
    echo "cannot create veth pairs or a bridge in a network namespace: $err"
    return 1
  fi
  if ! err=$(ip netns exec "$probe" unshare --uts --mount --pid --fork \
      --mount-proc --propagation private \
      sh -c 'mount -t tmpfs tmpfs /dev/shm && hostname probe' 2>&1); then
    ip netns del "$probe" 2>/dev/null || true
    echo "cannot create UTS/mount/PID namespaces with a private /dev/shm: $err"
    return 1
  fi
  ip netns del "$probe"
  return 0
}

up() {
  local dir=$1 p=rmth$PPID h i pid
  remove_stale
  mkdir -p "$dir"
  echo "$p" >"$dir/prefix"
  ip netns add "${p}a"
  ip netns add "${p}b"
  ip netns add "${p}l"
  # Data network: the veth pair between the hosts.
  ip link add name rmsh0 netns "${p}a" type veth peer name rmsh0 netns "${p}b"
  ip -n "${p}a" addr add 10.77.0.1/24 dev rmsh0
  ip -n "${p}b" addr add 10.77.0.2/24 dev rmsh0
  # Management network: each host to the head node's bridge.
  ip -n "${p}l" link add br0 type bridge
  ip -n "${p}l" addr add 10.78.0.254/24 dev br0
  i=1
  for h in a b; do
    ip link add name mgmt0 netns "${p}$h" type veth peer name "to$h" netns "${p}l"
    ip -n "${p}l" link set "to$h" master br0 up
    ip -n "${p}$h" addr add "10.78.0.$i/24" dev mgmt0
    ip -n "${p}$h" link set mgmt0 up
    ip -n "${p}$h" link set rmsh0 up
    ip -n "${p}$h" link set lo up
    i=$((i + 1))
  done
  ip -n "${p}l" link set br0 up
  ip -n "${p}l" link set lo up
  # The kernel reports carrier (operstate UP) up to a second after both ends
  # are up; UCX ignores a device that is not RUNNING yet.
  local ns dev state
  for ns in "${p}a:rmsh0" "${p}a:mgmt0" "${p}b:rmsh0" "${p}b:mgmt0" "${p}l:br0"; do
    dev=${ns#*:}
    ns=${ns%%:*}
    for i in $(seq 100); do
      state=$(ip -n "$ns" -br link show dev "$dev" | awk '{print $2}')
      [[ $state == UP ]] && break
      sleep 0.05
    done
    if [[ $state != UP ]]; then
      echo "hosts.sh: $dev in $ns stays $state" >&2
      return 1
    fi
  done
  printf '127.0.0.1\tlocalhost\n10.77.0.1\trmhosta\n10.77.0.2\trmhostb\n10.78.0.254\trmhead\n' \
    >"$dir/hosts"
  # PID 1 of a PID namespace inherits the processes orphaned in it (ranks of
  # a job whose hydra proxy was killed at a timeout) and must reap them.
  local python
  python=$(command -v /usr/bin/python3 || command -v python3)
  local REAPER='import os, time
while True:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
    time.sleep(0.2)'
  # The holders: PID 1 of each host's PID namespace, in its own UTS and mount
  # namespaces with a fresh /dev/shm, its own /proc and the hosts file.
  for h in a b; do
    rm -f "$dir/ready_$h"
    ip netns exec "${p}$h" unshare --uts --ipc --mount --pid --fork --mount-proc \
      --propagation private sh -c "
        hostname rmhost$h &&
        mount -t tmpfs -o size=2g,mode=1777 tmpfs /dev/shm &&
        mount --bind '$dir/hosts' /etc/hosts &&
        touch '$dir/ready_$h' && exec $python -c '$REAPER'" \
      </dev/null >"$dir/holder_$h.log" 2>&1 &
    echo $! >"$dir/unshare_$h"
  done
  for h in a b; do
    for i in $(seq 100); do
      [[ -e "$dir/ready_$h" ]] && break
      sleep 0.05
    done
    pid=$(cat "/proc/$(cat "$dir/unshare_$h")/task/"*/children 2>/dev/null | awk '{print $1}')
    if [[ ! -e "$dir/ready_$h" || -z "$pid" ]]; then
      echo "hosts.sh: host $h did not start: $(cat "$dir/holder_$h.log")" >&2
      return 1
    fi
    echo "$pid" >"$dir/holder_$h"
  done
  # The launcher maps hydra's host names (management addresses) to holders.
  echo "$(cat "$dir/holder_a")" >"$dir/host_10.78.0.1"
  echo "$(cat "$dir/holder_b")" >"$dir/host_10.78.0.2"
}

down() {
  local dir=$1
  [[ -f "$dir/prefix" ]] || return 0
  remove_set "$(cat "$dir/prefix")"
  rm -f "$dir/prefix"
}

case "${1:-}" in
  up) up "$2" ;;
  down) down "$2" ;;
  check) check ;;
  *) sed -n '2,25p' "$0" >&2; exit 64 ;;
esac
