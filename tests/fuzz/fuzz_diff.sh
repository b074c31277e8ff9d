#!/usr/bin/env bash
# Differential fuzzing: runs rma_fuzz seeds natively and under the shim (both
# through tests/run_mpi.sh) and requires byte-identical digests. On a
# mismatch it prints the seed, shrinks the program (drops phases, then
# operations, while the mismatch persists) and prints the smallest failing
# variant's listing and the differing digest lines.
#
#   fuzz_diff.sh --runner tests/run_mpi.sh --shim librmashim.so \
#       --program rma_fuzz --ranks N --layout node|oddeven|cliques3 \
#       --seeds 1-5,9 [--ops N] [--minimize SECONDS] [--timeout SECONDS]
#       [--tries N] [--exclude FEATURES] [--batch K] [--quiet]
#       [--skip-native-failures] [--checker check_engaged.py]
#
# Every identical shim run must also show that the shim engaged
# (--checker, default tests/profile/check_engaged.py beside this script's
# directory): its RMASHIM_PROFILE JSON must have the windows rma_fuzz
# --expect-file says the programs create, every one but dynamic managed, at
# least the operations it says the shim serves directly served directly,
# only the fallbacks the layout explains, and no "rmashim:" warning on
# stderr. Otherwise: "FUZZ SHIM NOT ENGAGED", exit 1.
#
# --batch K runs up to K consecutive seeds in one MPI job (rma_fuzz --count)
# to save start-up time; a batch that differs is rerun seed by seed.
# A seed on which native MPICH fails is rerun (MPICH 4.0.2 sometimes hangs
# in oversubscribed lock storms); --skip-native-failures then reports it as
# "SKIPPED seed S" and goes on instead of stopping (for soaks).
#
# Exit: 0 all identical; 1 the shim differs from native or did not engage
# (a finding);
# 2 native MPICH itself failed (an invalid program or an MPICH bug: a
# finding about the generator); 64 usage.
set -uo pipefail

runner="" shim="" program="" ranks=2 layout=node seeds="" ops="" budget=120
timeout=60 quiet=0 tries=2 exclude="" batch=1 skip_native=0
checker=$(dirname "$(readlink -f "$0")")/../profile/check_engaged.py
usage() {
  sed -n '2,24p' "$0" >&2
  exit 64
}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runner) runner=$2; shift 2 ;;
    --shim) shim=$2; shift 2 ;;
    --program) program=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --layout) layout=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --minimize) budget=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --tries) tries=$2; shift 2 ;;
    --exclude) exclude=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    --skip-native-failures) skip_native=1; shift ;;
    --checker) checker=$2; shift 2 ;;
    *) usage ;;
  esac
done
[[ -n "$runner" && -n "$shim" && -n "$program" && -n "$seeds" ]] || usage
if [[ ! -f "$checker" ]]; then
  echo "fuzz_diff.sh: no engagement checker at $checker (--checker)" >&2
  exit 64
fi

work=$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/fuzz_diff.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The program's own watchdog fires first and names the stuck step; mpirun's
# timeout is the backstop.
export MPIEXEC_TIMEOUT=$((timeout + 15))

expand() {  # "1-3,7" -> "1 2 3 7"
  local item out=()
  for item in ${1//,/ }; do
    if [[ $item == *-* ]]; then
      out+=($(seq "${item%-*}" "${item#*-}"))
    else
      out+=("$item")
    fi
  done
  echo "${out[@]}"
}

compress() {  # sorted ints on stdin -> "1-3,7"
  awk 'BEGIN { s = -1 }
       { if (s < 0) { s = p = $1 } else if ($1 == p + 1) { p = $1 }
         else { out = out (out ? "," : "") (s == p ? s : s "-" p); s = p = $1 } }
       END { if (s >= 0) out = out (out ? "," : "") (s == p ? s : s "-" p); print out }'
}

# Fallbacks the layout explains (README "Limitations"): on MPI_Win_create
# windows layouts with padding inside elements (pair types); on windows
# spanning nodes the accumulate family and PSCW. Otherwise windows on one
# node serve everything.
allowed_fallbacks=datatype:create
[[ $layout == node ]] ||
  allowed_fallbacks+=,multi_node_window:allocate,multi_node_window:create
check_engaged=1  # off while shrinking a mismatch

# run_pair SEED ARGS...: runs both sides; sets $verdict to same, differ,
# not-engaged (identical, but the shim run's profile does not show the shim
# engaged: $work/engaged.txt says why) or native-failed. Outputs stay in
# $work.
run_pair() {
  local seed=$1
  shift
  local args=(--seed "$seed" --timeout "$timeout")
  [[ -n "$ops" ]] && args+=(--ops "$ops")
  [[ -n "$exclude" ]] && args+=(--exclude "$exclude")
  local t0=$SECONDS
  "$runner" "$ranks" "$layout" none "$program" "${args[@]}" "$@" \
    >"$work/native.out" 2>"$work/native.err"
  native_rc=$?
  native_secs=$((SECONDS - t0))
  rm -f "$work/profile.json" "$work/expect.txt"
  RMASHIM_PROFILE="$work/profile.json" \
    "$runner" "$ranks" "$layout" "$shim" "$program" "${args[@]}" "$@" \
    --expect-file "$work/expect.txt" >"$work/shim.out" 2>"$work/shim.err"
  shim_rc=$?
  if [[ $native_rc -ne 0 || ! -s "$work/native.out" ]]; then
    verdict=native-failed
  elif [[ $shim_rc -eq 0 ]] && cmp -s "$work/native.out" "$work/shim.out"; then
    verdict=same
    if [[ $check_engaged -eq 1 ]] &&
       ! python3 "$checker" --profile "$work/profile.json" \
           --stderr "$work/shim.err" --ranks "$ranks" --layout "$layout" \
           --fuzz-expect "$work/expect.txt" \
           --allow-fallback "$allowed_fallbacks" >"$work/engaged.txt" 2>&1; then
      verdict=not-engaged
    fi
  else
    verdict=differ
  fi
}

# native_job_fails FIRST K SECS: whether native MPICH fails (in up to
# 2 * $tries runs) on the job of K seeds from FIRST, which took SECS when it
# passed (a run three times as long is a hang).
native_job_fails() {
  local try args=(--seed "$1" --count "$2" --timeout "$timeout")
  [[ -n "$ops" ]] && args+=(--ops "$ops")
  [[ -n "$exclude" ]] && args+=(--exclude "$exclude")
  for (( try = 0; try < 2 * tries; ++try )); do
    MPIEXEC_TIMEOUT=$((3 * $3 + 30)) "$runner" "$ranks" "$layout" none \
      "$program" "${args[@]}" >/dev/null 2>&1 || return 0
  done
  return 1
}

# run_pair for one seed, rerun while native MPICH is what failed.
run_seed() {
  local try=0
  run_pair "$1"
  while [[ $verdict == native-failed ]] && (( try++ < tries )); do
    run_pair "$1"
  done
}

# Whether the variant with kept phases $1 and dropped ops $2 still differs
# (in any of $tries runs: races and hangs need not show every time).
still_fails() {
  local extra=() try
  [[ -n "$1" ]] && extra+=(--keep-phases "$1")
  [[ -n "$2" ]] && extra+=(--drop-ops "$2")
  for (( try = 0; try < tries; ++try )); do
    (( try == 0 || SECONDS < deadline )) || break
    run_pair "$seed" "${extra[@]}"
    [[ $verdict == differ ]] && return 0
  done
  return 1
}

# Delta debugging over a list of ids (complements only): $1 = "phases" or
# "ops"; reads and updates the globals keep_phases / kept_ops.
shrink() {
  local what=$1 list n chunk i j candidate kept rest
  if [[ $what == phases ]]; then list=($keep_phases_list); else list=($kept_ops); fi
  n=2
  while [[ ${#list[@]} -ge 1 ]] && (( SECONDS < deadline )); do
    chunk=$(( (${#list[@]} + n - 1) / n ))
    local reduced=0
    for (( i = 0; i < ${#list[@]}; i += chunk )); do
      (( SECONDS < deadline )) || break
      candidate=("${list[@]:0:i}" "${list[@]:i+chunk}")
      if [[ $what == phases ]]; then
        kept=$(printf '%s\n' "${candidate[@]}" | sed '/^$/d' | compress)
        [[ -z "$kept" ]] && continue  # an empty list would mean "all"
        still_fails "$kept" "" || continue
        keep_phases_list="${candidate[*]}"
      else
        rest=$(printf '%s\n' "${all_ops[@]}" "${candidate[@]}" | sed '/^$/d' |
               sort -n | uniq -u | compress)
        still_fails "$keep_phases" "$rest" || continue
        kept_ops="${candidate[*]}"
      fi
      list=("${candidate[@]}")
      (( n > 2 )) && n=$((n - 1))
      reduced=1
      break
    done
    if [[ $reduced -eq 0 ]]; then
      (( n >= ${#list[@]} )) && break
      n=$(( n * 2 > ${#list[@]} ? ${#list[@]} : n * 2 ))
    fi
  done
}

report_failure() {
  local kind=$1
  check_engaged=0
  cp "$work/native.out" "$work/first_native.out"
  cp "$work/shim.out" "$work/first_shim.out"
  cp "$work/native.err" "$work/first_native.err"
  cp "$work/shim.err" "$work/first_shim.err"
  echo "=================================================================="
  echo "FUZZ $kind: seed $seed, $ranks ranks, layout $layout${ops:+, --ops $ops}${exclude:+, --exclude $exclude}"
  echo "  native rc $native_rc, shim rc $shim_rc"
  echo "  reproduce: $0 --runner $runner --shim $shim --program $program" \
       "--ranks $ranks --layout $layout --seeds $seed${ops:+ --ops $ops}${exclude:+ --exclude $exclude}"
  local print_args=(--seed "$seed")
  [[ -n "$ops" ]] && print_args+=(--ops "$ops")
  [[ -n "$exclude" ]] && print_args+=(--exclude "$exclude")
  if [[ $kind == "SHIM NOT ENGAGED" ]]; then
    echo "---- shim run's profile against rma_fuzz --expect-file ($(cat "$work/expect.txt" 2>/dev/null)) ----"
    cat "$work/engaged.txt"
  fi
  if [[ $kind == MISMATCH && $budget -gt 0 ]]; then
    "$runner" "$ranks" "$layout" none "$program" "${print_args[@]}" --print \
      >"$work/listing.txt" 2>/dev/null
    local phases
    phases=$(head -1 "$work/listing.txt" | sed -n 's/.* \([0-9]*\) phases.*/\1/p')
    keep_phases_list=$(seq 0 $((phases - 1)) | tr '\n' ' ')
    deadline=$((SECONDS + budget))
    shrink phases
    keep_phases=$(printf '%s\n' $keep_phases_list | compress)
    "$runner" "$ranks" "$layout" none "$program" "${print_args[@]}" --print \
      --keep-phases "$keep_phases" >"$work/listing.txt" 2>/dev/null
    all_ops=($(sed -n 's/^ *#\([0-9]*\) .*/\1/p' "$work/listing.txt" | sort -n))
    kept_ops="${all_ops[*]}"
    shrink ops
    drop=$(printf '%s\n' "${all_ops[@]}" $kept_ops | sed '/^$/d' | sort -n |
           uniq -u | compress)
    local min_args=(--keep-phases "$keep_phases")
    [[ -n "$drop" ]] && min_args+=(--drop-ops "$drop")
    (( SECONDS >= deadline )) && echo "  (minimization stopped at its ${budget} s budget)"
    echo "  minimized: rma_fuzz --seed $seed${ops:+ --ops $ops}${exclude:+ --exclude $exclude} ${min_args[*]}"
    echo "---- minimized program ----"
    "$runner" "$ranks" "$layout" none "$program" "${print_args[@]}" --print \
      "${min_args[@]}" 2>/dev/null
    # Full contents of the minimized variant's digests, both sides.
    run_pair "$seed" "${min_args[@]}" --dump
    if [[ $verdict != differ ]]; then
      echo "  (the minimized variant did not fail again: flaky; showing the first failure)"
      cp "$work/first_native.out" "$work/native.out"
      cp "$work/first_shim.out" "$work/shim.out"
      cp "$work/first_native.err" "$work/native.err"
      cp "$work/first_shim.err" "$work/shim.err"
    fi
  fi
  if [[ $kind == "SHIM NOT ENGAGED" ]]; then
    echo "---- shim warnings on stderr ----"
    grep -a "rmashim: " "$work/shim.err" | cut -c1-400 | head -20
  else
    echo "---- native vs shim digest (diff) ----"
    diff "$work/native.out" "$work/shim.out" | cut -c1-400 | head -40
  fi
  echo "---- native stderr (tail) ----"
  tail -n 8 "$work/native.err" | cut -c1-400
  echo "---- shim stderr (tail) ----"
  tail -n 8 "$work/shim.err" | cut -c1-400
  echo "=================================================================="
}

all_seeds=($(expand "$seeds"))
count=0 skipped=0 i=0
while (( i < ${#all_seeds[@]} )); do
  # Up to $batch consecutive seeds in one job.
  first=${all_seeds[i]} k=1
  while (( k < batch && i + k < ${#all_seeds[@]} )) &&
        [[ ${all_seeds[i + k]} -eq $((first + k)) ]]; do
    k=$((k + 1))
  done
  start=$SECONDS
  seed=$first
  export MPIEXEC_TIMEOUT=$((timeout * k + 15))
  if (( k > 1 )); then run_pair "$first" --count "$k"; else run_seed "$first"; fi
  export MPIEXEC_TIMEOUT=$((timeout + 15))
  if [[ $verdict != same && $verdict != not-engaged && $k -gt 1 ]]; then
    # Find the seed on its own (a batch on which only native MPICH failed
    # and whose seeds all pass alone was an MPICH flake). Engagement is
    # checked per job: a job that did not engage is reported as it is.
    batch_verdict=$verdict batch_native_rc=$native_rc batch_shim_rc=$shim_rc
    batch_native_secs=$native_secs
    for f in native.out shim.out native.err shim.err; do
      cp "$work/$f" "$work/batch_$f"
    done
    for (( j = 0; j < k; ++j )); do
      seed=$((first + j))
      run_seed "$seed"
      [[ $verdict != same ]] && break
    done
    if [[ $verdict == same && $batch_verdict == differ && $batch_shim_rc -ne 0 ]] &&
       native_job_fails "$first" "$k" "$batch_native_secs"; then
      # The shim's job failed (a hang, typically), every seed alone is
      # identical, and native MPICH fails on the very same job too: MPICH's
      # flake (4.0.2's passive-target locks can hang), not a difference.
      echo "MPICH FLAKE seeds $first..$((first + k - 1)): their one job failed" \
           "under the shim (rc $batch_shim_rc) and natively too; each seed alone is identical"
      batch_verdict=mpich-flake
    fi
    if [[ $verdict == same && $batch_verdict == differ ]]; then
      echo "FUZZ MISMATCH only when seeds $first..$((first + k - 1)) run in one" \
           "job ($ranks ranks, layout $layout); rerun with --batch $k:"
      echo "  native rc $batch_native_rc, shim rc $batch_shim_rc"
      diff "$work/batch_native.out" "$work/batch_shim.out" | cut -c1-400 | head -40
      echo "---- native stderr (tail) ----"
      tail -n 8 "$work/batch_native.err" | cut -c1-400
      echo "---- shim stderr (tail) ----"
      tail -n 8 "$work/batch_shim.err" | cut -c1-400
      exit 1
    fi
  fi
  case $verdict in
    same)
      count=$((count + k))
      if [[ $quiet -eq 0 ]]; then
        if (( k > 1 )); then
          echo "seeds $first..$((first + k - 1)): identical ($((SECONDS - start)) s)"
        else
          echo "seed $first: identical ($(head -1 "$work/native.out" | cut -d' ' -f6-), $((SECONDS - start)) s)"
        fi
      fi
      ;;
    differ)
      report_failure MISMATCH
      exit 1
      ;;
    not-engaged)
      (( k == 1 )) || echo "(seeds $first..$((first + k - 1)) in one job, --batch $k)"
      report_failure "SHIM NOT ENGAGED"
      exit 1
      ;;
    native-failed)
      if [[ $skip_native -eq 1 ]]; then
        echo "SKIPPED seed $seed: native MPICH failed $((tries + 1)) times (rc $native_rc)"
        # The seeds before it in its batch were identical; the ones after
        # it still need their comparison.
        count=$((count + seed - first))
        skipped=$((skipped + 1))
        i=$((i + seed - first + 1))
        continue
      fi
      report_failure NATIVE-FAILED
      exit 2
      ;;
  esac
  i=$((i + k))
done
if [[ $quiet -eq 0 ]]; then
  echo "all $count seeds identical ($ranks ranks, layout $layout)"
fi
(( skipped == 0 )) || echo "$skipped seeds skipped: native MPICH failed on them"
exit 0
