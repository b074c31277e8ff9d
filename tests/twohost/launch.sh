#!/usr/bin/env bash
# hydra's launcher for the two simulated hosts (tests/twohost/hosts.sh):
# mpiexec.mpich -launcher ssh -launcher-exec launch.sh calls it as ssh,
#   launch.sh [-x ...] HOST COMMAND...
# and it runs COMMAND (hydra_pmi_proxy) in HOST's namespaces (network, UTS,
# mount, PID) beside the host's holder process, as `sh -c`, like sshd would.
# HOST is a management address; $RMASHIM_TWOHOST_DIR/host_HOST holds the
# holder's pid.
set -euo pipefail
while [[ $# -gt 0 && $1 == -* ]]; do shift; done
host=${1:?launch.sh: no host}
shift
state=${RMASHIM_TWOHOST_DIR:?launch.sh: RMASHIM_TWOHOST_DIR not set}
if [[ ! -f "$state/host_$host" ]]; then
  echo "launch.sh: unknown host $host (not one of hosts.sh's)" >&2
  exit 255
fi
exec nsenter --target "$(cat "$state/host_$host")" --net --uts --ipc --mount --pid \
  -- /bin/sh -c "$*"
