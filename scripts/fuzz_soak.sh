#!/usr/bin/env bash
# Soak test: random RMA programs (tests/fuzz/rma_fuzz), each run under
# librmashim.so and checked against the program's model of MPI's semantics
# (tests/fuzz/model.h), and natively as one more implementation checked
# against the same model, for as long as asked. Every divergence of the
# shim is reported with its shrunk program (tests/fuzz/fuzz_diff.sh) and the
# soak goes on; so is every job whose profile shows the shim did not
# engage. Native MPICH's divergences are listed, not counted against the
# shim. At the end: seeds per hour, and every finding again.
#
#   scripts/fuzz_soak.sh [--minutes M | --seeds N] [--start SEED]
#       [--ranks 2,3,4,8] [--layout node,oddeven,cliques3] [--ops N]
#       [--quick] [--minimize SECONDS] [--timeout SECONDS]
#       [--exclude FEATURES] [--batch K] [--no-native] [--stop-at-first]
#
# Seeds run in sequence from --start (default: derived from the time, and
# printed), K per MPI job (--batch, default 5; a failing batch is rerun
# seed by seed); (ranks, layout) rotate per batch. Everything lives in a
# private temporary directory, with private copies of the binaries, so
# several soaks may run at once (give them different --start values) while
# Bazel rebuilds. Seeds on which the shim run and native MPICH both hang or
# crash are skipped and counted. Exit status: 0 no finding, 1 the shim
# diverged from the model, failed or did not engage.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes="" max_seeds="" start="" ranks_list=2,3,4 layouts=node,oddeven ops=""
minimize=300 timeout=30 exclude="" batch=5 native_flag="" stop_at_first=0
usage() {
  sed -n '2,23p' "$0" >&2
  exit 64
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --seeds) max_seeds=$2; shift 2 ;;
    --start) start=$2; shift 2 ;;
    --ranks) ranks_list=$2; shift 2 ;;
    --layout) layouts=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --quick) ops=${ops:-40}; shift ;;
    --minimize) minimize=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --exclude) exclude=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --no-native) native_flag=--no-native; shift ;;
    --stop-at-first) stop_at_first=1; shift ;;
    *) usage ;;
  esac
done
[[ -n "$minutes" || -n "$max_seeds" ]] || minutes=10
start=${start:-$(( $(date +%s) % 100000 * 10000 ))}

bazel build //tests/fuzz:rma_fuzz //shim:librmashim.so >&2
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz_soak.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp bazel-bin/tests/fuzz/rma_fuzz bazel-bin/shim/librmashim.so tests/run_mpi.sh \
   tests/fuzz/fuzz_diff.sh tests/profile/check_engaged.py \
   tools/rmashim_profile.py "$work/"
chmod u+w "$work"/*
findings="$work/findings.log" native_log="$work/native.log"
: >"$findings"
: >"$native_log"

configs=()
for n in ${ranks_list//,/ }; do
  for l in ${layouts//,/ }; do configs+=("$n $l"); done
done
deadline=""
[[ -n "$minutes" ]] && deadline=$((SECONDS + minutes * 60))
echo "fuzz soak: seeds from $start, configs: ${configs[*]/%/;}" \
     "${ops:+ops $ops, }${exclude:+excluding $exclude, }${minutes:+$minutes min}${max_seeds:+$max_seeds seeds}"

tty=0
[[ -t 1 ]] && tty=1
seed=$start
count=0 skipped=0 batches=0 flakes=0 failed_batches=0
while true; do
  [[ -n "$max_seeds" && $((count + skipped)) -ge $max_seeds ]] && break
  [[ -n "$deadline" && $SECONDS -ge $deadline ]] && break
  read -r n l <<<"${configs[batches % ${#configs[@]}]}"
  k=$batch
  [[ -n "$max_seeds" ]] && (( k > max_seeds - count - skipped )) && k=$((max_seeds - count - skipped))
  last=$((seed + k - 1))
  args=(--runner "$work/run_mpi.sh" --shim "$work/librmashim.so"
        --program "$work/rma_fuzz" --ranks "$n" --layout "$l"
        --seeds "$seed-$last" --batch "$k" --timeout "$timeout"
        --minimize "$minimize" --quiet --skip-native-failures
        --checker "$work/check_engaged.py")
  [[ -n "$ops" ]] && args+=(--ops "$ops")
  [[ -n "$exclude" ]] && args+=(--exclude "$exclude")
  [[ -n "$native_flag" ]] && args+=("$native_flag")
  set +e
  "$work/fuzz_diff.sh" "${args[@]}" >"$work/batch.log" 2>&1
  rc=$?
  set -e
  skipped_now=$(grep -c '^SKIPPED seed' "$work/batch.log" || true)
  flakes=$((flakes + $(grep -c '^MPICH FLAKE' "$work/batch.log" || true)))
  if grep -q '^NATIVE MPICH' "$work/batch.log"; then
    grep -A8 '^NATIVE MPICH' "$work/batch.log" | grep -v '^--$' |
      grep -v '^seed\|^all \|^native MPICH diverged' >>"$native_log"
  fi
  batches=$((batches + 1))
  if [[ $rc -ne 0 ]]; then
    [[ $tty -eq 1 ]] && echo
    failed_batches=$((failed_batches + 1))
    {
      echo "fuzz soak: FINDING in seeds $seed..$last ($n ranks, $l), exit $rc; again with:"
      echo "  tests/fuzz/fuzz_diff.sh --runner tests/run_mpi.sh" \
           "--shim bazel-bin/shim/librmashim.so --program bazel-bin/tests/fuzz/rma_fuzz" \
           "--ranks $n --layout $l --seeds SEED${ops:+ --ops $ops}${exclude:+ --exclude $exclude}"
      cat "$work/batch.log"
    } | tee -a "$findings"
    [[ $stop_at_first -eq 1 ]] && break
  else
    count=$((count + k - skipped_now))
  fi
  skipped=$((skipped + skipped_now))
  line=$(printf 'fuzz soak: %d seeds match the model, %d findings, %d skipped (last %d: %d ranks, %s), %d s' \
         "$count" "$failed_batches" "$skipped" "$last" "$n" "$l" "$SECONDS")
  if [[ $tty -eq 1 ]]; then
    printf '\r%s ' "$line"
  elif (( batches % 10 == 0 )); then
    echo "$line"
  fi
  seed=$((last + 1))
done
[[ $tty -eq 1 ]] && echo
per_hour=$(( SECONDS > 0 ? (count + skipped) * 3600 / SECONDS : 0 ))
echo "fuzz soak: done, seeds $start..$((seed - 1)) in ${SECONDS} s ($per_hour seeds per hour):" \
     "$count matched the model under the shim; $failed_batches batches with a finding;" \
     "$skipped skipped (the shim run and native MPICH both hung or crashed on them);" \
     "$flakes batches whose one job hung under the shim and natively alike"
if [[ -s "$native_log" ]]; then
  echo "native MPICH diverged from the model in $(grep -c '^NATIVE MPICH DIVERGES' "$native_log")" \
       "jobs and hung or crashed in $(grep -c '^NATIVE MPICH FAILED' "$native_log"):"
  cat "$native_log"
else
  echo "native MPICH matched the model wherever it ran${native_flag:+ (not run: --no-native)}"
fi
if [[ -s "$findings" ]]; then
  echo "fuzz soak: FINDINGS (above, repeated in full):"
  cat "$findings"
  exit 1
fi
exit 0
