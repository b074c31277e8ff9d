#!/usr/bin/env bash
# The whole test suite: the code's style, unit tests, MPI suites on 2-4 ranks
# on one node and on simulated two-node layouts, oversubscribed stress runs,
# differential native-vs-shim runs, the real applications, the two-host
# tier, valgrind memcheck; then ASan+UBSan builds of one configuration of
# every MPI suite and TSan on the threaded tests (docs/testing.md "Tests").
#   scripts/test.sh [--quick] [--no-sanitizers] [bazel test options...]
# --quick: style, unit tests and one configuration of every MPI suite
# (tests/pick_configs.py), no sanitizers: a developer's inner loop.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizers=1 quick=0
while [[ "${1:-}" == --no-sanitizers || "${1:-}" == --quick ]]; do
  [[ $1 == --quick ]] && quick=1
  sanitizers=0
  shift
done
# One configuration of every MPI suite of at most 4 ranks (query: tests of
# //tests/... that are neither manual, valgrind nor large_memory).
one_config_per_suite() {
  bazel query --noshow_progress \
    'tests(//tests/...) except attr(tags, "valgrind|manual|large_memory", tests(//tests/...))' \
    2>/dev/null | python3 tests/pick_configs.py
}
scripts/install_deps.sh
# The code's style: .clang-format and .clang-tidy (under a minute).
tools/check_style.sh
start=$SECONDS
if [[ $quick -eq 1 ]]; then
  mapfile -t picked < <(one_config_per_suite)
  [[ ${#picked[@]} -gt 0 ]] || { echo "test.sh: no MPI suite picked" >&2; exit 1; }
  quick_tests=(//tests/unit/... //tests/docs/... //tests/profile:check_engaged_test
    //tests/fuzz:model_catches_wrong_rma_test "${picked[@]}")
  bazel build "$@" -- "${quick_tests[@]}"
  bazel test --local_test_jobs=1 "$@" -- "${quick_tests[@]}"
  echo "test.sh --quick: ${#picked[@]} MPI suites in $((SECONDS - start)) s"
  exit 0
fi
# MPI tests oversubscribe the 2 cores; running them one at a time is faster
# than letting their busy-polling ranks compete. Everything is built first:
# bazel starts a test as soon as its inputs are built, beside the compiles
# still running, and a compiler on one of two cores turns every 2-rank test
# into an oversubscribed one (a 0.6 s test took 10 s so).
bazel build //... "$@"
bazel test //... --local_test_jobs=1 "$@"
echo "test.sh: main suite in $((SECONDS - start)) s"
# The two-host tier (tests/twohost) passes with "SKIPPED: ..." where this
# machine does not permit network namespaces; repeat that here.
grep -h '^SKIPPED: two-host tier' bazel-testlogs/tests/twohost/twohost_test/test.log \
  2>/dev/null || true
[[ $sanitizers -eq 1 ]] || exit 0

# ASan + UBSan in one build, on one configuration of every MPI suite
# (tests/pick_configs.py: 3 ranks on the odd-even split where the suite has
# it, which runs node-local and remote targets together), the fault tests
# and the lock and table unit tests. The whole suite passes under them too
# (`bazel test --config=asan_ubsan //...`) but takes several times as long.
start=$SECONDS
mapfile -t subset < <(one_config_per_suite
  bazel query --noshow_progress '(tests(//tests/faults:all)
    + //tests/unit:shm_lock_test + //tests/unit:shm_lock_announce_test
    + //tests/unit:window_table_test) except attr(tags, "manual", tests(//tests/...))' \
    2>/dev/null)
[[ ${#subset[@]} -gt 0 ]] || { echo "test.sh: empty sanitizer subset" >&2; exit 1; }
bazel build --config=asan_ubsan "$@" -- "${subset[@]}"
bazel test --config=asan_ubsan --local_test_jobs=1 "$@" -- "${subset[@]}"
echo "test.sh: ASan+UBSan: ${#subset[@]} tests in $((SECONDS - start)) s"

# TSan on the tests that call into the shim from several threads at once.
start=$SECONDS
# The agent off (RMASHIM_AGENT=0): its UCX traffic between processes goes
# through shared memory TSan cannot see the other side of, and every such
# read inside libucp is reported as a race; the agent tests stay out of
# this list for the same reason (docs/testing.md).
tsan_tests=(//tests/unit:shm_lock_test //tests/unit:shm_lock_announce_test
  //tests/unit:shm_lock_bias_test //tests/mpi:shim_threads_test //tests/unit:word_atomics_test)
bazel build --config=tsan "$@" -- "${tsan_tests[@]}"
bazel test --config=tsan --local_test_jobs=1 --test_env=RMASHIM_AGENT=0 "$@" -- "${tsan_tests[@]}"
echo "test.sh: TSan: $((SECONDS - start)) s"
