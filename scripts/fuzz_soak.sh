#!/usr/bin/env bash
# Soak test: random RMA programs (tests/fuzz/rma_fuzz), each run natively and
# under librmashim.so, for as long as asked. Stops at the first difference
# and prints the seed and the shrunk failing program (tests/fuzz/fuzz_diff.sh).
#
#   scripts/fuzz_soak.sh [--minutes M | --seeds N] [--start SEED]
#       [--ranks 2,3,4] [--layout node,oddeven] [--ops N] [--quick]
#       [--minimize SECONDS] [--timeout SECONDS] [--exclude FEATURES]
#
# Seeds run in sequence from --start (default: derived from the time, and
# printed); (ranks, layout) rotate through the given lists. Everything lives
# in a private temporary directory, with private copies of the binaries, so
# several soaks may run at once (give them different --start values) while
# Bazel rebuilds. Exit status: 0 no difference, 1 the shim differs from
# native MPICH, 2 native MPICH itself failed (generator or MPICH problem).
set -euo pipefail
cd "$(dirname "$0")/.."

minutes="" max_seeds="" start="" ranks_list=2,3,4 layouts=node,oddeven ops=""
minimize=300 timeout=60 exclude=""
usage() {
  sed -n '2,16p' "$0" >&2
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
    *) usage ;;
  esac
done
[[ -n "$minutes" || -n "$max_seeds" ]] || minutes=10
start=${start:-$(( $(date +%s) % 100000 * 10000 ))}

bazel build //tests/fuzz:rma_fuzz //shim:librmashim.so >&2
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz_soak.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp bazel-bin/tests/fuzz/rma_fuzz bazel-bin/shim/librmashim.so tests/run_mpi.sh "$work/"
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
count=0
while true; do
  [[ -n "$max_seeds" && $count -ge $max_seeds ]] && break
  [[ -n "$deadline" && $SECONDS -ge $deadline ]] && break
  read -r n l <<<"${configs[count % ${#configs[@]}]}"
  args=(--runner "$work/run_mpi.sh" --shim "$work/librmashim.so"
        --program "$work/rma_fuzz" --ranks "$n" --layout "$l" --seeds "$seed"
        --timeout "$timeout" --minimize "$minimize" --quiet)
  [[ -n "$ops" ]] && args+=(--ops "$ops")
  [[ -n "$exclude" ]] && args+=(--exclude "$exclude")
  set +e
  tests/fuzz/fuzz_diff.sh "${args[@]}"
  rc=$?
  set -e
  count=$((count + 1))
  if [[ $rc -ne 0 ]]; then
    [[ $tty -eq 1 ]] && echo
    echo "fuzz soak: FAILED at seed $seed ($n ranks, $l) after $count seeds" \
         "(${SECONDS} s); again with:"
    echo "  tests/fuzz/fuzz_diff.sh --runner tests/run_mpi.sh" \
         "--shim bazel-bin/shim/librmashim.so --program bazel-bin/tests/fuzz/rma_fuzz" \
         "--ranks $n --layout $l --seeds $seed${ops:+ --ops $ops}${exclude:+ --exclude $exclude}"
    exit "$rc"
  fi
  line=$(printf 'fuzz soak: %d seeds identical (last %d: %d ranks, %s), %d s' \
         "$count" "$seed" "$n" "$l" "$SECONDS")
  if [[ $tty -eq 1 ]]; then
    printf '\r%s ' "$line"
  elif (( count % 25 == 0 )); then
    echo "$line"
  fi
  seed=$((seed + 1))
done
[[ $tty -eq 1 ]] && echo
echo "fuzz soak: done, $count seeds ($start..$((seed - 1))) identical in ${SECONDS} s"
