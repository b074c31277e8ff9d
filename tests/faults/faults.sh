#!/usr/bin/env bash
# Fault tests: each runs in its own mount namespace with a fresh, small tmpfs
# on /dev/shm, so it can exhaust /dev/shm and see every name left in it
# without other jobs on the machine interfering.
#
#   faults.sh exhaust SHIM PROGRAM RANKS LAYOUT TMPFS_MIB SPEC...
#     fault_rma windows SPEC... natively and under the shim in a TMPFS_MIB
#     tmpfs: both must pass their own checks and print identical output; the
#     shim must warn exactly once per window that does not fit ("u" specs).
#   faults.sh leftover SHIM PROGRAM RANKS LAYOUT MODE
#     fault_rma alive MODE (exit, abort, kill) under the shim; afterwards,
#     once every process of the job is gone, nothing of ours may remain in
#     /dev/shm: no name, and no space held by unnamed files (node segments
#     are unnamed; the space they held while alive is checked too).
#   faults.sh churn SHIM PROGRAM RANKS LAYOUT ROUNDS
#     ROUNDS times: fault_rma churn (windows created and freed in a loop),
#     one rank SIGKILLed from outside at a random moment; nothing of ours
#     may remain.
#
# Needs root (unshare --mount) or unprivileged user namespaces (unshare -rm);
# without either it FAILS: the tests must not silently not run.
set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

tmpfs_mib=256
[[ $1 == exhaust ]] && tmpfs_mib=$6

if [[ ${RMASHIM_FAULTS_NS:-} != "$$.ns" ]]; then
  # Re-run this script in a private mount namespace.
  self=$(readlink -f "$0")
  if [[ $(id -u) == 0 ]] && unshare --mount --propagation private true 2>/dev/null; then
    ns=(unshare --mount --propagation private)
  elif unshare -rm true 2>/dev/null; then
    ns=(unshare -rm)
  else
    fail "cannot create a private mount namespace: neither" \
      "'unshare --mount' (needs root) nor 'unshare -rm' (needs unprivileged" \
      "user namespaces, kernel.unprivileged_userns_clone=1) works here"
  fi
  # $$ inside the namespace is the same shell's pid after exec.
  exec "${ns[@]}" -- bash -c 'export RMASHIM_FAULTS_NS=$$.ns; exec "$@"' \
    bash "$self" "$@"
fi

mount -t tmpfs -o "size=${tmpfs_mib}m,mode=1777" rmashim-faults /dev/shm ||
  fail "cannot mount a tmpfs on /dev/shm in the private namespace"
[[ -z $(ls -A /dev/shm) ]] || fail "fresh /dev/shm is not empty"
size_kib=$(df -k --output=size /dev/shm | tail -1 | tr -d ' ')
((size_kib == tmpfs_mib * 1024)) ||
  fail "/dev/shm is ${size_kib} KiB, expected ${tmpfs_mib} MiB"

cmd=$1 shim=$(realpath "$2") program=$(realpath "$3") ranks=$4 layout=$5
shift 5
out=${TEST_TMPDIR:-$(mktemp -d)}
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-50}

layout_env=()
case "$layout" in
  node) ;;
  oddeven) layout_env+=(MPIR_CVAR_ODD_EVEN_CLIQUES=1) ;;
  cliques3) layout_env+=(MPIR_CVAR_NUM_CLIQUES=3) ;;
  *) fail "unknown layout $layout" ;;
esac

# mpirun.mpich with the shim preloaded (or not: PRELOAD=none).
run() {
  local preload=$1
  shift
  local env_args=("${layout_env[@]}")
  [[ $preload == none ]] || env_args+=("LD_PRELOAD=$preload" FAULT_RMA_SHIM=1)
  mpirun.mpich -n "$ranks" env "${env_args[@]}" "$program" "$@"
}

# KiB of the private /dev/shm used by files without a name there: node
# segments are unnamed tmpfs files, so a leaked one shows up here only.
unnamed_kib() {
  local used named
  used=$(df -k --output=used /dev/shm | tail -1 | tr -d ' ')
  named=$(find /dev/shm -maxdepth 1 -type f -printf '%b\n' | awk '{s += $1} END {print int(s / 2)}')
  echo $((used - named))
}

nothing_left() {
  local left unnamed
  left=$(find /dev/shm -maxdepth 1 -name 'rmashim*' -printf '%f ')
  [[ -z $left ]] || fail "$1: left in /dev/shm: $left"
  unnamed=$(unnamed_kib)
  ((unnamed == 0)) || fail "$1: ${unnamed} KiB of unnamed files left in /dev/shm"
}

# Every process of the job (ranks and their launcher proxies) must be gone
# before /dev/shm is looked at.
wait_job_gone() {
  local piddir=$1 pids=() deadline=$((SECONDS + 30)) alive
  ls "$piddir"/rank.* >/dev/null 2>&1 || fail "no rank wrote its pid"
  read -r -a pids <<<"$(cat "$piddir"/rank.* | tr '\n' ' ')"
  while :; do
    alive=()
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null && alive+=("$pid")
    done
    ((${#alive[@]} == 0)) && return 0
    ((SECONDS < deadline)) || fail "job processes still alive after 30 s: ${alive[*]}"
    sleep 0.2
  done
}

case "$cmd" in
  exhaust)
    shift  # TMPFS_MIB
    specs=("$@")
    expected_warnings=0
    for s in "${specs[@]}"; do [[ $s == *:*:u || $s == *:*:u:* ]] && expected_warnings=$((expected_warnings + 1)); done
    start=$SECONDS
    run none windows "${specs[@]}" >"$out/native.out" 2>"$out/native.err" ||
      { cat "$out/native.err" >&2; fail "native run failed"; }
    run "$shim" windows "${specs[@]}" >"$out/shim.out" 2>"$out/shim.err" ||
      { cat "$out/shim.err" >&2; fail "shim run failed"; }
    cat "$out/shim.err" >&2
    [[ -s $out/native.out ]] || fail "native run printed nothing"
    diff -u "$out/native.out" "$out/shim.out" || fail "shim output differs from native MPICH"
    warnings=$(grep -c '^rmashim: node-shared memory exhausted; window left to MPI$' "$out/shim.err" || true)
    others=$(grep -c '^rmashim:' "$out/shim.err" || true)
    ((warnings == expected_warnings)) ||
      fail "$warnings exhaustion warnings, expected $expected_warnings"
    ((others == warnings)) || fail "unexpected rmashim lines on stderr"
    nothing_left "after the run"
    cat "$out/shim.out"
    echo "ok: identical to native, $warnings warning line(s), $((SECONDS - start)) s"
    ;;
  leftover)
    mode=$1
    piddir=$out/pids
    rm -rf "$piddir" && mkdir -p "$piddir"
    rc=0
    run "$shim" alive "$mode" "$piddir" >"$out/run.out" 2>"$out/run.err" || rc=$?
    cat "$out/run.out" "$out/run.err" >&2
    if grep -q FAIL "$out/run.err"; then fail "a rank failed its checks"; fi
    case "$mode" in
      exit)
        ((rc == 0)) || fail "normal run exited $rc"
        grep -qx 'alive exit ok' "$out/run.out" || fail "no 'alive exit ok'"
        ;;
      abort | kill)
        ((rc != 0)) || fail "$mode run exited 0"
        grep -qx "rank $((ranks - 1)): $mode amid RMA traffic" "$piddir/victim" ||
          fail "the victim did not $mode amid traffic (mpirun.mpich exit $rc)"
        ;;
      *) fail "unknown mode $mode" ;;
    esac
    wait_job_gone "$piddir"
    alive_kib=$(cat "$piddir/alive_unnamed_growth_kib") || fail "no usage recorded while alive"
    # Every rank's 1 MiB MPI_Win_allocate segment, give or take what MPICH's
    # own unnamed shared memory (about 12 MiB at 3 ranks, in both measures)
    # moved by in between: tens of KiB (3024 KiB against the usual 3120 was
    # seen once). Without the segments the growth is under 20 KiB.
    ((alive_kib >= ranks * 1024 * 3 / 4)) ||
      fail "unnamed /dev/shm use grew by only ${alive_kib} KiB with windows alive"
    nothing_left "after $mode"
    echo "ok: $mode, mpirun.mpich exit $rc, ${alive_kib} KiB of unnamed segments while alive, nothing left in /dev/shm"
    ;;
  churn)
    rounds=$1
    for ((round = 0; round < rounds; ++round)); do
      piddir=$out/pids.$round
      mkdir -p "$piddir"
      run "$shim" churn "$piddir" >"$piddir.out" 2>"$piddir.err" &
      job=$!
      deadline=$((SECONDS + 40))
      until grep -q churning "$piddir.out"; do
        ((SECONDS < deadline)) || fail "round $round: no window churn after 40 s"
        kill -0 "$job" 2>/dev/null || { cat "$piddir.err" >&2; fail "round $round: job ended early"; }
        sleep 0.1
      done
      sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
      victim=$((RANDOM % ranks))
      read -r vpid _ <"$piddir/rank.$victim"
      kill -KILL "$vpid"
      rc=0
      wait "$job" || rc=$?
      ((rc != 0)) || fail "round $round: job exited 0 after a SIGKILL"
      if grep -q FAIL "$piddir.err"; then cat "$piddir.err" >&2; fail "round $round: a rank failed its checks"; fi
      wait_job_gone "$piddir"
      nothing_left "round $round (rank $victim killed)"
    done
    echo "ok: $rounds rounds, a rank killed amid window creation each time, nothing left"
    ;;
  *) fail "unknown command $cmd" ;;
esac
