#!/usr/bin/env bash
# Soak test: random RMA programs (tests/fuzz/rma_fuzz), each run natively and
# under librmashim.so, for as long as asked. Stops at the first difference
# and prints the seed and the shrunk failing program (tests/fuzz/fuzz_diff.sh),
# or at the first job whose profile shows the shim did not engage.
#
#   scripts/fuzz_soak.sh [--minutes M | --seeds N] [--start SEED]
#       [--ranks 2,3,4] [--layout node,oddeven] [--ops N] [--quick]
#       [--minimize SECONDS] [--timeout SECONDS] [--exclude FEATURES]
#       [--batch K]
#
# Seeds run in sequence from --start (default: derived from the time, and
# printed), K per MPI job (--batch, default 5; a differing batch is rerun
# seed by seed); (ranks, layout) rotate per batch. Everything lives
# in a private temporary directory, with private copies of the binaries, so
# several soaks may run at once (give them different --start values) while
# Bazel rebuilds. Seeds on which native MPICH keeps failing are skipped and
# counted. Exit status: 0 no difference, 1 the shim differs from native MPICH
# or did not engage.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes="" max_seeds="" start="" ranks_list=2,3,4 layouts=node,oddeven ops=""
minimize=300 timeout=30 exclude="" batch=5
usage() {
  sed -n '2,19p' "$0" >&2
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
   tests/profile/rmashim_profile.py "$work/"
chmod u+w "$work"/*

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
count=0 skipped=0 batches=0 flakes=0
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
  set +e
  "$work/fuzz_diff.sh" "${args[@]}" | tee "$work/batch.log"
  rc=${PIPESTATUS[0]}
  set -e
  skipped_now=$(grep -c '^SKIPPED seed' "$work/batch.log" || true)
  flakes=$((flakes + $(grep -c '^MPICH FLAKE' "$work/batch.log" || true)))
  if [[ $rc -ne 0 ]]; then
    [[ $tty -eq 1 ]] && echo
    echo "fuzz soak: FAILED in seeds $seed..$last ($n ranks, $l) after $count" \
         "identical seeds (${SECONDS} s); the seed is named above; again with:"
    echo "  tests/fuzz/fuzz_diff.sh --runner tests/run_mpi.sh" \
         "--shim bazel-bin/shim/librmashim.so --program bazel-bin/tests/fuzz/rma_fuzz" \
         "--ranks $n --layout $l --seeds SEED${ops:+ --ops $ops}${exclude:+ --exclude $exclude}"
    exit "$rc"
  fi
  count=$((count + k - skipped_now))
  skipped=$((skipped + skipped_now))
  batches=$((batches + 1))
  line=$(printf 'fuzz soak: %d seeds identical, %d skipped (last %d: %d ranks, %s), %d s' \
         "$count" "$skipped" "$last" "$n" "$l" "$SECONDS")
  if [[ $tty -eq 1 ]]; then
    printf '\r%s ' "$line"
  elif (( batches % 10 == 0 )); then
    echo "$line"
  fi
  seed=$((last + 1))
done
[[ $tty -eq 1 ]] && echo
echo "fuzz soak: done, $count seeds ($start..$((seed - 1))) identical in ${SECONDS} s;" \
     "$skipped skipped (native MPICH hung or crashed on them in every try);" \
     "$flakes batches whose one job hung under the shim and natively alike"
