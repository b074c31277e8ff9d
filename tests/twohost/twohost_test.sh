#!/usr/bin/env bash
# The two-host tier: runs the differential programs of tests/diff
# and the rma_fuzz seeds of tests/fuzz across two simulated hosts on this
# machine (hosts.sh: separate network, UTS, IPC, mount (/dev/shm, /proc) and
# PID namespaces, UCX over TCP on a veth pair), on 2 ranks (1+1) and 4 ranks
# (2+2), natively and with librmashim.so preloaded. Unlike MPICH's simulated
# splits (MPIR_CVAR_ODD_EVEN_CLIQUES), ranks on different hosts here share no
# memory, no /dev/shm and no PIDs, so a shim that took a remote rank for a
# node-local one could not map its memory and would fail.
# Each comparison requires byte-identical stdout, the shim's profile to show
# every window of the program managed (tests/profile/check_engaged.py: at
# least the measured number of operations served directly, only the
# multi_node_window fallbacks windows spanning hosts explain, no "rmashim:"
# warning), and check_twohost.py: operations to the other host counted as
# remote (passed to MPI), and on 2+2 node-local ones on the same host served
# by the shim; on 1+1 none counted node-local.
#
#   twohost_test.sh --shim librmashim.so --diff-bin DIR --fuzz rma_fuzz
#       --fuzz-diff fuzz_diff.sh --checker check_engaged.py
#       [--agent-test shim_agent_test_bin] [--dart-bin DIR] [--real-app DIR]
#       [--quick]
# DIR holds tests/diff's *_bin programs. --quick: only put_get and one fuzz
# batch (for trying the setup). --dart-bin: tests/dart's directory with the
# dart_*_test_bin programs; their atomic and lock suites run with the agent
# (libdart, nothing preloaded). --real-app: tests/real_app's directory; then
# NWChem's SCF and BAGEL's FCI run on 1+1 ranks, and BAGEL's on 2+2, with
# the agent (run_real_app.py: native and shim, right answers under the shim,
# node-local operations served), where their Debian packages are installed.
# (NWChem on 2+2: native MPICH gave no answer within the tier's timeout, the
# shim the right one in most of it, its remote gets waiting for targets to
# enter MPI: too long for this tier.)
#
# Where this machine does not let us create the namespaces (not root, no
# CAP_SYS_ADMIN, a sandbox), it prints "SKIPPED: ..." with the reason and
# exits 0; with RMASHIM_TWOHOST_REQUIRED=1 it fails instead.
set -uo pipefail
export PATH=/usr/sbin:/sbin:$PATH
here=$(dirname "$(readlink -f "$0")")
if ! why=$(bash "$here/hosts.sh" check); then
  echo "SKIPPED: two-host tier: $why"
  [[ "${RMASHIM_TWOHOST_REQUIRED:-0}" == 1 ]] && { echo "RMASHIM_TWOHOST_REQUIRED=1: failing"; exit 1; }
  exit 0
fi
shim="" diff_bin="" fuzz="" fuzz_diff="" checker="" agent_test="" real_app=""
dart_bin=""
quick=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --shim) shim=$(readlink -f "$2"); shift 2 ;;
    --diff-bin) diff_bin=$(readlink -f "$2"); shift 2 ;;
    --fuzz) fuzz=$(readlink -f "$2"); shift 2 ;;
    --fuzz-diff) fuzz_diff=$(readlink -f "$2"); shift 2 ;;
    --checker) checker=$(readlink -f "$2"); shift 2 ;;
    --agent-test) agent_test=$(readlink -f "$2"); shift 2 ;;
    --dart-bin) dart_bin=$(readlink -f "$2"); shift 2 ;;
    --real-app) real_app=$(readlink -f "$2"); shift 2 ;;
    --quick) quick=1; shift ;;
    *) sed -n '2,26p' "$0" >&2; exit 64 ;;
  esac
done
[[ -n "$shim" && -n "$diff_bin" && -n "$fuzz" && -n "$fuzz_diff" && -n "$checker" ]] ||
  { sed -n '2,26p' "$0" >&2; exit 64; }


work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/twohost.XXXXXX")
state=$work/hosts
cleanup() {
  bash "$here/hosts.sh" down "$state"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bash "$here/hosts.sh" up "$state" || { echo "FAIL: could not set up the two hosts"; exit 1; }
export RMASHIM_TWOHOST_DIR=$state
run=$here/run_twohost.sh
start=$SECONDS
failures=0 passed=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# The hosts are what they claim: 2+2 ranks on two hostnames, each host with
# its own /dev/shm, PID and network namespace, none of them this machine's.
"$run" 4 twohost none /bin/sh -c \
  'echo "$(hostname) $(stat -f -c %i /dev/shm) $(readlink /proc/self/ns/pid) $(readlink /proc/self/ns/net)"' \
  >"$work/hosts.txt" 2>&1
mine="$(stat -f -c %i /dev/shm) $(readlink /proc/self/ns/pid) $(readlink /proc/self/ns/net)"
if [[ $(sort "$work/hosts.txt" | uniq -c | awk '{print $1, $2}' | tr '\n' ' ') != "2 rmhosta 2 rmhostb " ]] ||
   [[ $(sort -u "$work/hosts.txt" | wc -l) -ne 2 ]] ||
   [[ $(awk '{print $2; print $3; print $4}' "$work/hosts.txt" | sort -u | wc -l) -ne 6 ]] ||
   grep -qF -e "$(echo "$mine" | cut -d' ' -f1) " -e "$(echo "$mine" | cut -d' ' -f2)" \
     -e "$(echo "$mine" | cut -d' ' -f3)" "$work/hosts.txt"; then
  fail "the two hosts are not separate (hostname, /dev/shm fs id, pid ns, net ns per rank):"
  cat "$work/hosts.txt"
else
  echo "hosts: $(sort -u "$work/hosts.txt" | tr '\n' ';')"
  passed=$((passed + 1))
fi

# Differential programs: name | program and arguments | check_engaged.py
# options | check_twohost.py options | least operations served directly on
# 2 (1+1) and 4 (2+2) ranks (measured 2026-11-25, as in tests/diff/BUILD:
# deterministic but for the compare_and_swap retry loops of atomics and
# create_sync, which only add; on 1+1 only the ranks' own window parts are
# node-local). --node-served: the shim must serve more operations than
# those to the rank itself on 2+2 (for programs whose same-host operations
# are not all accumulates, which go to MPI on windows spanning hosts).
# Each program also checks its own results against a serial reference. A
# subset of tests/diff, for CI time: errors on other flavors and with NULL
# buffers, progress, win_queries and darray are left out.
MN="multi_node_window"
A="--managed=allocate"
DIFF=(
  "put_get|put_get_bin|$A|--node-served|120|450"
  "datatypes|datatypes_bin|$A|--node-served|56|226"
  "fence_halo|fence_halo_bin|$A --allow-fallback=$MN:allocate|--node-served|4|112"
  "pscw_ring|pscw_ring_bin|$A --allow-fallback=$MN:allocate|--node-served|4|82"
  "atomics|atomics_bin|$A --allow-fallback=$MN:allocate||25|52"
  "window_mix|window_mix_bin|--managed=allocate,create,shared --unmanaged=dynamic|--node-served|10|34"
  "create_sync|create_sync_bin|--managed=create --allow-fallback=$MN:create||12|28"
  "errors_allocate|errors_bin allocate|$A|--node-served|0|2"
  "split_accumulate|split_accumulate_bin|--managed=allocate,create --allow-fallback=$MN:allocate,$MN:create||96|384"
)
(( quick )) && DIFF=("${DIFF[0]}")

# run_once OUT PRELOAD ARGV...: one run. A native run that hangs (the
# watchdog's exit code, or its message with another code: hydra may report
# 1 when it tears the other ranks down) is run again once: MPICH 4.0.2's
# own PSCW hangs now and then on 2+2 ranks (pscw_ring: its per-window post
# count, shim/sync/mpi_pscw.h), and the native run is only the reference. The
# shim's run is never run again: a hang there is a failure.
run_once() {
  local out=$1 preload=$2 rc=0
  shift 2
  "$run" "$n" twohost "$preload" "$@" >"$out" 2>"$out.err" || rc=$?
  if [[ $preload == none ]] &&
     { [[ $rc -eq 124 ]] ||
       { [[ $rc -ne 0 ]] && grep -q 'watchdog: stuck for' "$out.err"; }; }; then
    echo "MPICH hang ($name, $n ranks, native, run again):" \
         "$(grep -m2 'watchdog' "$out.err" | tr '\n' ' ')"
    hangs=$((hangs + 1))
    rc=0
    "$run" "$n" twohost "$preload" "$@" >"$out" 2>"$out.err" || rc=$?
  fi
  return $rc
}
hangs=0

diff_one() {  # ranks, then a DIFF entry's fields
  local n=$1 name=$2 prog=$3 opts=$4 placement=$5 floor=$6 out=$work/$name.$1
  local -a argv=($prog)
  argv[0]=$diff_bin/${argv[0]}
  local t0=$SECONDS rc=0
  run_once "$out.native" none "${argv[@]}" || rc=$?
  if [[ $rc -ne 0 || ! -s "$out.native" ]]; then
    fail "$name, $n ranks: native MPICH failed (exit $rc)"
    tail -n 5 "$out.native.err"
    return
  fi
  rm -f "$out.json"
  rc=0
  RMASHIM_PROFILE=$out.json run_once "$out.shim" "$shim" "${argv[@]}" || rc=$?
  if [[ $rc -ne 0 ]]; then
    fail "$name, $n ranks: the shim run failed (exit $rc)"
    tail -n 5 "$out.shim.err"
    return
  fi
  if ! diff -u "$out.native" "$out.shim" >"$out.diff"; then
    fail "$name, $n ranks: shim output differs from native MPICH"
    head -40 "$out.diff"
    return
  fi
  local -a check=($opts)
  if ! python3 "$checker" --profile "$out.json" --stderr "$out.shim.err" \
       --ranks "$n" --layout twohost --min-served "$floor" "${check[@]}" \
       >"$out.engaged" 2>&1; then
    fail "$name, $n ranks: the shim did not engage as expected"
    cat "$out.engaged"
    return
  fi
  if ! python3 "$here/check_twohost.py" --profile "$out.json" --ranks "$n" \
       $placement >"$out.twohost" 2>&1; then
    fail "$name, $n ranks: operations not where the hosts put them"
    cat "$out.twohost"
    return
  fi
  echo "$name, $n ranks: identical ($(wc -l <"$out.native") lines, $((SECONDS - t0)) s);" \
       "$(sed 's/ ([0-9]* ranks, layout twohost)$//' "$out.engaged"); $(cat "$out.twohost")"
  passed=$((passed + 1))
}

for n in 2 4; do
  for entry in "${DIFF[@]}"; do
    IFS='|' read -r name prog opts placement floor2 floor4 <<<"$entry"
    diff_one "$n" "$name" "$prog" "$opts" "$placement" \
      "$([[ $n == 2 ]] && echo "$floor2" || echo "$floor4")"
  done
done

ended=$(cat "$work"/*.err 2>/dev/null | grep -c 'did not exit within' || true)
echo "differential jobs MPICH left hanging in MPI_Finalize and the runner ended: $ended of $((4 * ${#DIFF[@]}))"
echo "native differential runs that hung inside MPICH and were run again: $hangs"

# rma_fuzz seeds, the ones CI runs on the odd/even split (tests/fuzz/BUILD),
# through fuzz_diff.sh with this tier's runner.
FUZZ=("2|4001-4012|40" "4|6001-6005|40")
(( quick )) && FUZZ=("2|4001-4005|40")
for entry in "${FUZZ[@]}"; do
  IFS='|' read -r n seeds ops <<<"$entry"
  t0=$SECONDS
  if bash "$fuzz_diff" --runner "$run" --shim "$shim" --program "$fuzz" \
       --ranks "$n" --layout twohost --seeds "$seeds" --ops "$ops" \
       --timeout 40 --minimize 60 --tries 1 --batch 5 --quiet \
       --checker "$checker" >"$work/fuzz.$n" 2>&1; then
    echo "rma_fuzz, $n ranks: seeds $seeds match the model, engaged ($((SECONDS - t0)) s)"
    passed=$((passed + 1))
  else
    fail "rma_fuzz, $n ranks, seeds $seeds"
    cat "$work/fuzz.$n"
  fi
done

# The agent (shim/agent/agent.h) across the hosts, started as in any job
# spanning nodes (nothing set): UCX over the data veth, each host its own
# network namespace. tests/mpi/shim_agent_test_bin's counters (every
# origin, every passive epoch, exact totals, nothing to MPI, every remote
# call applied by an agent; unlock_all completing every target's updates)
# and a remote origin against a target that computes without calling MPI;
# at 16 ranks (8 a host, oversubscribed) the counters alone.
if [[ -n "$agent_test" ]]; then
  for n in 2 4 16; do
    t0=$SECONDS want='12 tests' filter=() what='counters, unlock_all, locks and progress'
    if [[ $n -eq 16 ]]; then
      want='[0-9]+ tests' filter=(--gtest_filter='*CountersAddUpInEveryEpoch*')
      what=counters
    fi
    if run_once "$work/agent.$n" "$shim" "$agent_test" "${filter[@]}" &&
       grep -qE "\[  PASSED  \] $want" "$work/agent.$n" &&
       ! grep -q '\[  FAILED  \]' "$work/agent.$n"; then
      echo "agent, $n ranks: $what pass ($((SECONDS - t0)) s)"
      passed=$((passed + 1))
    else
      fail "agent, $n ranks"
      tail -n 20 "$work/agent.$n" "$work/agent.$n.err"
    fi
  done
fi

# libdart with the agent across the hosts (docs/dart.md "Atomics and locks
# across nodes"): team memory's atomics and team locks, node-local units by
# CPU atomics, remote ones by their agents; the atomic suite checks that the
# agents applied every remote atomic, the lock suite that they served the
# remote acquisitions.
if [[ -n "$dart_bin" ]]; then
  for n in 2 4; do
    for suite in atomic lock; do
      name=dart_${suite}_agent t0=$SECONDS
      if run_once "$work/$name.$n" none "$dart_bin/dart_${suite}_test_bin" &&
         grep -q '\[  PASSED  \]' "$work/$name.$n" &&
         ! grep -q '\[  FAILED  \]' "$work/$name.$n"; then
        echo "libdart $suite suite, $n ranks with the agent: passes ($((SECONDS - t0)) s)"
        passed=$((passed + 1))
      else
        fail "libdart $suite suite, $n ranks with the agent"
        tail -n 20 "$work/$name.$n" "$work/$name.$n.err"
      fi
    done
  done
fi

# Real applications across the hosts with the agent (tests/real_app): the
# answer natively and under the shim, and the shim's share of the
# node-local operations (each rank's own and its host peer's).
real_app_run() {  # name, ranks, input ("": none), min served, program, args
  local name=$1 ranks=$2 input=$3 min=$4
  shift 4
  [[ -x "$1" ]] || { echo "real app $name: $1 not installed, not run"; return; }
  local t0=$SECONDS inputs=()
  [[ -z "$input" ]] || inputs=(--input "$real_app/$input")
  if (cd "$work" && python3 "$real_app/run_real_app.py" \
        --name "$name" --ranks "$ranks" --layout twohost --runner "$run" \
        --shim "$shim" --native-timeout 60 --shim-timeout 120 \
        "${inputs[@]}" "${real_app_values[@]}" \
        "${real_app_profile[@]}" --profile-arg=--min-served="$min" \
        -- "$@") >"$work/$name.out" 2>&1; then
    echo "real app $name, $ranks ranks with the agent: $(grep '^served' "$work/$name.out") ($((SECONDS - t0)) s)"
    grep -E '^(native MPICH|REAL_APP)' "$work/$name.out"
    passed=$((passed + 1))
  else
    fail "real app $name"
    tail -n 30 "$work/$name.out"
  fi
}
if [[ -n "$real_app" && $quick == 0 ]]; then
  real_app_profile=(--profile-arg=--managed=allocate)
  real_app_values=(--value "SCF energy" "Total SCF energy = *([-0-9.]+)" -75.984077653763 1e-7)
  real_app_run nwchem_scf_twohost_agent 2 nwchem/h2o_scf.nw 2500 /usr/bin/nwchem.mpich h2o_scf.nw
  # CCSD, 2 ranks (1+1): on 4 a 2-core machine is oversubscribed and the
  # run takes minutes (native MPICH's SCF stagnated and timed out there).
  real_app_profile=(--profile-arg=--managed=allocate --profile-arg=--min-via-agent=10000)
  real_app_values+=(--value "CCSD energy" "Total CCSD energy: *([-0-9.]+)" -76.119282183306 1e-7)
  real_app_run nwchem_ccsd_twohost_agent 2 nwchem/h2o_ccsd.nw 10000 /usr/bin/nwchem.mpich h2o_ccsd.nw
  real_app_profile=(--profile-arg=--managed=allocate)
  real_app_values=(--value "FCI energy" "ci vector +0, <S\^2> = +-?0\.0000, E = *([-0-9.]+)" -76.02832868 1.5e-8
                   --answered "ci vector|EXCEPTION RAISED")
  real_app_run bagel_fci_twohost_agent 2 bagel/h2o_fci.json 400 /usr/bin/BAGEL h2o_fci.json
  real_app_run bagel_fci_twohost_agent_4 4 bagel/h2o_fci.json 500 /usr/bin/BAGEL h2o_fci.json
  # OpenCoarrays: atomics on scalar coarrays (MPI_Win_create memory) and
  # event counts, 3 images (two on one host); the served floor as on the
  # odd-even split (its wait loops make the count timing-dependent).
  real_app_profile=(--profile-arg=--managed=allocate,create --profile-arg=--unmanaged=dynamic)
  real_app_values=(--line "^RESULT ok" --answered "^RESULT")
  real_app_run caf_atomics_twohost_agent 3 "" 100 "$real_app/caf_atomics_bin" 20
fi

echo "two-host tier: $((SECONDS - start)) s"
echo "$passed passed, $failures failed"
[[ $failures -eq 0 ]]
