#!/usr/bin/env bash
# Runs one MPI program across the two simulated hosts of hosts.sh, with the
# calling convention of tests/run_mpi.sh (so tests/fuzz/fuzz_diff.sh can use
# it as its --runner):
#   run_twohost.sh RANKS twohost PRELOAD PROGRAM [ARGS...]
# RANKS are split in blocks, the first half (rounded up) on rmhosta, the rest
# on rmhostb: 2 ranks 1+1, 4 ranks 2+2. PRELOAD: a path to librmashim.so, or
# "none" for native MPICH. $RMASHIM_TWOHOST_DIR: hosts.sh's state directory.
# mpiexec runs on the head node (management network only) and launches one
# hydra proxy in each host through launch.sh; the ranks talk over UCX's TCP
# transport on the data veth (rmsh0) between hosts and over shared memory
# within a host.
#
# MPICH 4.0.2 over UCX between the hosts often hangs in MPI_Finalize when a
# host has two ranks (docs/testing.md "Tests"), natively and under the shim alike.
# libfinalize_guard.so (beside this script, preloaded after the shim in both
# runs) marks each rank's entry into MPI_Finalize after a barrier; once every
# rank's mark exists and the job has not exited within $FINALIZE_GRACE
# seconds (default 2), this script ends it (SIGTERM to mpiexec, which kills
# the ranks), says so on stderr and exits 0: all MPI work was done, the
# output is complete and the shim's profile written.
set -euo pipefail
ranks=$1 layout=$2 preload=$3
shift 3
program=$1
shift
if [[ $layout != twohost ]]; then
  echo "run_twohost.sh: layout must be twohost, not $layout" >&2
  exit 2
fi
state=${RMASHIM_TWOHOST_DIR:?run_twohost.sh: RMASHIM_TWOHOST_DIR not set (hosts.sh up)}
here=$(dirname "$(readlink -f "$0")")
guard=$here/libfinalize_guard.so
[[ -f "$guard" ]] || guard=$(readlink -f "$here/../../bazel-bin/tests/twohost/libfinalize_guard.so")
a=$(( (ranks + 1) / 2 )) b=$(( ranks / 2 ))
hosts="10.78.0.1:$a"
(( b == 0 )) || hosts+=",10.78.0.2:$b"

marks=$(mktemp -d "$state/marks.XXXXXX")
libs=("$guard")
[[ "$preload" == none ]] || libs=("$(realpath "$preload")" "$guard")
# Sanitizer builds (bazel --config=asan_ubsan etc.): the sanitizer runtimes
# these libraries link go first, ASan's before the others (as in
# tests/run_mpi.sh).
runtimes=$(ldd "${libs[@]}" | awk '$3 ~ /^\// && $1 ~ /^libasan\.so/ { a[$3] = 1 }
  $3 ~ /^\// && $1 ~ /^lib(ubsan|tsan)\.so/ { o[$3] = 1 }
  END { for (x in a) printf "%s:", x; for (x in o) printf "%s:", x }')
preloads=$runtimes$(IFS=:; echo "${libs[*]}")
env_args=(UCX_NET_DEVICES=rmsh0 "LD_PRELOAD=$preloads" "RMASHIM_TWOHOST_MARKS=$marks")
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-120}
export RMASHIM_TWOHOST_DIR=$state
grace=${FINALIZE_GRACE:-2}
: >"$marks/stdout"  # there before the streamer below opens it
/usr/bin/nsenter --net="/run/netns/$(cat "$state/prefix")l" -- \
  mpiexec.mpich -launcher ssh -launcher-exec "$here/launch.sh" \
  -localhost 10.78.0.254 -hosts "$hosts" -n "$ranks" \
  env "${env_args[@]}" "$(realpath "$program")" "$@" >"$marks/stdout" &
job=$!
# RMASHIM_TWOHOST_STREAM=1: the output also as it comes (for runners that
# watch a long job's progress, scripts/dash_suite_run.py), not only at the end.
streamer=""
if [[ "${RMASHIM_TWOHOST_STREAM:-0}" == 1 ]]; then
  tail -c +1 -f --pid="$job" "$marks/stdout" &
  streamer=$!
fi
all_since=""
while kill -0 "$job" 2>/dev/null; do
  if [[ $(find "$marks" -name 'final.*' | wc -l) -ge $ranks ]]; then
    all_since=${all_since:-$SECONDS}
    if (( SECONDS - all_since >= grace )); then
      # The program's output is complete; what mpiexec prints about the
      # killed ranks from now on is not the program's.
      bytes=$(stat -c %s "$marks/stdout")
      kill -TERM "$job" 2>/dev/null || true
      wait "$job" 2>/dev/null || true
      if [[ -n "$streamer" ]]; then
        wait "$streamer" 2>/dev/null || true
      else
        head -c "$bytes" "$marks/stdout"
      fi
      echo "run_twohost.sh: all $ranks ranks entered MPI_Finalize but the job" \
           "did not exit within ${grace} s (MPICH 4.0.2's UCX finalize hang" \
           "across hosts); ended it" >&2
      rm -rf "$marks"
      exit 0
    fi
  fi
  sleep 0.2
done
rc=0
wait "$job" || rc=$?
if [[ -n "$streamer" ]]; then
  wait "$streamer" 2>/dev/null || true
else
  cat "$marks/stdout"
fi
rm -rf "$marks"
exit "$rc"
