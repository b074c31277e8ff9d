#!/usr/bin/env bash
# Model-checked fuzzing: runs rma_fuzz seeds under the shim (through
# tests/run_mpi.sh); every run must match the program's model of MPI's
# semantics (tests/fuzz/model.h: rma_fuzz exits 5 and names each divergence
# otherwise), finish, and show the shim engaged. On a divergence it prints
# the seed, shrinks the program (drops phases, then operations, while the
# divergence persists) and prints the smallest failing variant's listing
# and what differed. Native MPICH runs too (unless --no-native): it is one
# more implementation checked against the model, and what it gets wrong is
# reported ("NATIVE MPICH DIVERGES"), never taken as the reference.
#
#   fuzz_diff.sh --runner tests/run_mpi.sh --shim librmashim.so \
#       --program rma_fuzz --ranks N --layout node|oddeven|cliques3 \
#       --seeds 1-5,9 [--ops N] [--minimize SECONDS] [--timeout SECONDS]
#       [--tries N] [--exclude FEATURES] [--batch K] [--quiet]
#       [--no-native] [--skip-native-failures] [--checker check_engaged.py]
#
# Every shim run must also show that the shim engaged (--checker, default
# tests/profile/check_engaged.py beside this script's directory): its
# RMASHIM_PROFILE JSON must have the windows rma_fuzz --expect-file says the
# programs create, every one but dynamic managed, at least the operations it
# says the shim serves directly served directly, only the fallbacks the
# layout explains, and no "rmashim:" warning on stderr. Otherwise: "FUZZ
# SHIM NOT ENGAGED", exit 1.
#
# --batch K runs up to K consecutive seeds in one MPI job (rma_fuzz --count)
# to save start-up time; a job that fails is rerun seed by seed. A shim run
# that hangs or crashes (rather than diverging) is rerun natively: when
# native MPICH fails on the same job too (MPICH 4.0.2 sometimes hangs in
# oversubscribed lock storms) it is MPICH's flake, reported and not a
# finding; --skip-native-failures then goes on to the next seeds.
#
# Exit: 0 every shim run matched the model and engaged; 1 a shim run
# diverged, failed or did not engage (a finding); 2 native MPICH failed
# (hang or crash) where the shim did too; 64 usage.
set -uo pipefail

runner="" shim="" program="" ranks=2 layout=node seeds="" ops="" budget=120
timeout=60 quiet=0 tries=2 exclude="" batch=1 skip_native=0 native=1
checker=$(dirname "$(readlink -f "$0")")/../profile/check_engaged.py
usage() {
  sed -n '2,34p' "$0" >&2
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
    --no-native) native=0; shift ;;
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
readonly kDiverged=5  # rma_fuzz's exit status when a run differs from the model

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

# Fallbacks the layout explains (README.md, "Limitations"): on MPI_Win_create
# windows layouts with padding inside elements (pair types); on windows
# spanning nodes the accumulate family and PSCW. Otherwise windows on one
# node serve everything.
allowed_fallbacks=datatype:create
[[ $layout == node ]] ||
  allowed_fallbacks+=,multi_node_window:allocate,multi_node_window:create
check_engaged=1  # off while shrinking

rma_args() {  # the common rma_fuzz arguments for seed $1
  args=(--seed "$1" --timeout "$timeout")
  [[ -n "$ops" ]] && args+=(--ops "$ops")
  [[ -n "$exclude" ]] && args+=(--exclude "$exclude")
}

# run_shim SEED ARGS...: one shim run; sets $verdict to match, diverged
# (rma_fuzz found the run differing from the model), failed (a hang or
# crash) or not-engaged ($work/engaged.txt says why). Outputs stay in $work.
run_shim() {
  local seed=$1
  shift
  rma_args "$seed"
  local t0=$SECONDS
  rm -f "$work/profile.json" "$work/expect.txt"
  RMASHIM_PROFILE="$work/profile.json" \
    "$runner" "$ranks" "$layout" "$shim" "$program" "${args[@]}" "$@" \
    --expect-file "$work/expect.txt" >"$work/shim.out" 2>"$work/shim.err"
  shim_rc=$?
  shim_secs=$((SECONDS - t0))
  if [[ $shim_rc -eq $kDiverged ]]; then
    verdict=diverged
  elif [[ $shim_rc -ne 0 || ! -s "$work/shim.out" ]]; then
    verdict=failed
  else
    verdict=match
    if [[ $check_engaged -eq 1 ]] &&
       ! python3 "$checker" --profile "$work/profile.json" \
           --stderr "$work/shim.err" --ranks "$ranks" --layout "$layout" \
           --fuzz-expect "$work/expect.txt" \
           --allow-fallback "$allowed_fallbacks" >"$work/engaged.txt" 2>&1; then
      verdict=not-engaged
    fi
  fi
}

# run_native SEED ARGS...: the same job natively; reports (never fails on)
# a divergence of native MPICH from the model. Sets $native_rc.
run_native() {
  local seed=$1
  shift
  rma_args "$seed"
  MPIEXEC_TIMEOUT=$((3 * shim_secs + timeout + 15)) \
    "$runner" "$ranks" "$layout" none "$program" "${args[@]}" "$@" \
    >"$work/native.out" 2>"$work/native.err"
  native_rc=$?
  if [[ $native_rc -eq $kDiverged ]]; then
    echo "NATIVE MPICH DIVERGES from the model: seed $seed${*:+ ($*)}," \
         "$ranks ranks, layout $layout (recorded, not a failure of the shim):"
    grep -a "MODEL DIVERGENCE" "$work/native.err" | cut -c1-300 | head -8
  elif [[ $native_rc -ne 0 ]]; then
    echo "NATIVE MPICH FAILED (exit $native_rc, a hang or crash): seed $seed${*:+ ($*)}," \
         "$ranks ranks, layout $layout (recorded, not a failure of the shim):"
    grep -a "watchdog\|failed in\|Abort\|signal" "$work/native.err" | cut -c1-300 | head -4
  fi
}

# Whether the variant with kept phases $1 and dropped ops $2 still diverges
# (in any of $tries runs: races need not show every time).
still_fails() {
  local extra=() try
  [[ -n "$1" ]] && extra+=(--keep-phases "$1")
  [[ -n "$2" ]] && extra+=(--drop-ops "$2")
  for (( try = 0; try < tries; ++try )); do
    (( try == 0 || SECONDS < deadline )) || break
    run_shim "$seed" "${extra[@]}"
    [[ $verdict == diverged || $verdict == failed ]] && return 0
  done
  return 1
}

# Delta debugging over a list of ids (complements only): $1 = "phases" or
# "ops"; reads and updates the globals keep_phases_list / kept_ops.
shrink() {
  local what=$1 list n chunk i candidate kept rest
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
  cp "$work/shim.err" "$work/first_shim.err"
  echo "=================================================================="
  echo "FUZZ $kind: seed $seed, $ranks ranks, layout $layout${ops:+, --ops $ops}${exclude:+, --exclude $exclude}"
  echo "  shim rc $shim_rc${native_rc:+, native rc $native_rc}"
  echo "  reproduce: $0 --runner $runner --shim $shim --program $program" \
       "--ranks $ranks --layout $layout --seeds $seed${ops:+ --ops $ops}${exclude:+ --exclude $exclude}"
  local print_args=(--seed "$seed")
  [[ -n "$ops" ]] && print_args+=(--ops "$ops")
  [[ -n "$exclude" ]] && print_args+=(--exclude "$exclude")
  if [[ $kind == "SHIM NOT ENGAGED" ]]; then
    echo "---- shim run's profile against rma_fuzz --expect-file ($(cat "$work/expect.txt" 2>/dev/null)) ----"
    cat "$work/engaged.txt"
    echo "---- shim warnings on stderr ----"
    grep -a "rmashim: " "$work/shim.err" | cut -c1-400 | head -20
  elif [[ $budget -gt 0 ]]; then
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
    run_shim "$seed" "${min_args[@]}"
    if [[ $verdict != diverged && $verdict != failed ]]; then
      echo "  (the minimized variant did not fail again; showing the first failure)"
      cp "$work/first_shim.err" "$work/shim.err"
    fi
  fi
  echo "---- what differed from the model (shim run) ----"
  grep -a "MODEL DIVERGENCE" "$work/shim.err" | cut -c1-400 | head -20
  echo "---- shim stderr (tail) ----"
  tail -n 8 "$work/shim.err" | cut -c1-400
  echo "=================================================================="
}

all_seeds=($(expand "$seeds"))
count=0 skipped=0 native_diverged=0 i=0
while (( i < ${#all_seeds[@]} )); do
  # Up to $batch consecutive seeds in one job.
  first=${all_seeds[i]} k=1
  while (( k < batch && i + k < ${#all_seeds[@]} )) &&
        [[ ${all_seeds[i + k]} -eq $((first + k)) ]]; do
    k=$((k + 1))
  done
  start=$SECONDS
  seed=$first
  native_rc=""
  export MPIEXEC_TIMEOUT=$((timeout * k + 15))
  count_args=()
  (( k > 1 )) && count_args=(--count "$k")
  run_shim "$first" "${count_args[@]}"
  if [[ $verdict == match || $verdict == not-engaged ]] && [[ $native -eq 1 ]]; then
    run_native "$first" "${count_args[@]}"
    [[ $native_rc -eq $kDiverged ]] && native_diverged=$((native_diverged + 1))
  fi
  export MPIEXEC_TIMEOUT=$((timeout + 15))
  if [[ $verdict == diverged || $verdict == failed ]] && (( k > 1 )); then
    # Find the seed on its own.
    batch_verdict=$verdict batch_rc=$shim_rc batch_secs=$shim_secs
    cp "$work/shim.err" "$work/batch_shim.err"
    for (( j = 0; j < k; ++j )); do
      seed=$((first + j))
      run_shim "$seed"
      [[ $verdict == match || $verdict == not-engaged ]] || break
    done
    if [[ $verdict == match || $verdict == not-engaged ]]; then
      echo "FUZZ $batch_verdict only when seeds $first..$((first + k - 1)) run" \
           "in one job ($ranks ranks, layout $layout; shim rc $batch_rc);" \
           "rerun with --batch $k:"
      grep -a "MODEL DIVERGENCE\|watchdog" "$work/batch_shim.err" | cut -c1-400 | head -20
      tail -n 8 "$work/batch_shim.err" | cut -c1-400
      if [[ $batch_verdict == failed ]]; then
        shim_secs=$batch_secs
        for (( try = 0; try < 2 * tries; ++try )); do
          run_native "$first" --count "$k"
          [[ $native_rc -ne 0 && $native_rc -ne $kDiverged ]] && break
        done
        if [[ $native_rc -ne 0 && $native_rc -ne $kDiverged ]]; then
          echo "MPICH FLAKE seeds $first..$((first + k - 1)): their job failed" \
               "under the shim and natively too; each seed alone matches"
          i=$((i + k))
          count=$((count + k))
          continue
        fi
      fi
      exit 1
    fi
  fi
  if [[ $verdict == failed ]]; then
    # A hang or crash: MPICH's own when native MPICH fails on the same seed
    # too, in any of 2 * tries runs (4.0.2's locks hang now and then with
    # oversubscribed ranks on the splits).
    for (( try = 0; try < 2 * tries; ++try )); do
      run_native "$seed"
      if [[ $native_rc -ne 0 && $native_rc -ne $kDiverged ]]; then
        verdict=both-failed
        break
      fi
    done
  fi
  case $verdict in
    match)
      count=$((count + k))
      if [[ $quiet -eq 0 ]]; then
        if (( k > 1 )); then
          echo "seeds $first..$((first + k - 1)): match the model ($((SECONDS - start)) s)"
        else
          echo "seed $first: matches the model ($(head -1 "$work/shim.out" | cut -d' ' -f6-), $((SECONDS - start)) s)"
        fi
      fi
      ;;
    diverged)
      report_failure "SHIM DIVERGES FROM THE MODEL"
      exit 1
      ;;
    failed)
      report_failure "SHIM RUN FAILED"
      exit 1
      ;;
    not-engaged)
      (( k == 1 )) || echo "(seeds $first..$((first + k - 1)) in one job, --batch $k)"
      report_failure "SHIM NOT ENGAGED"
      exit 1
      ;;
    both-failed)
      if [[ $skip_native -eq 1 ]]; then
        echo "SKIPPED seed $seed: the shim run and native MPICH both failed" \
             "(rc $shim_rc / $native_rc)"
        count=$((count + seed - first))
        skipped=$((skipped + 1))
        i=$((i + seed - first + 1))
        continue
      fi
      report_failure "RUN FAILED, NATIVELY TOO"
      exit 2
      ;;
  esac
  i=$((i + k))
done
if [[ $quiet -eq 0 ]]; then
  echo "all $count seeds match the model under the shim ($ranks ranks, layout $layout)"
fi
(( native_diverged == 0 )) ||
  echo "native MPICH diverged from the model in $native_diverged jobs (above)"
(( skipped == 0 )) || echo "$skipped seeds skipped: the shim and native MPICH both failed on them"
exit 0
