// Node-local atomics and accumulates, native MPICH window vs rmashim window
// in the same run, with the CPU floor (the same atomic or loop on the peer's
// mapped memory). Rank 0 is the origin, rank 1 the target.
#include <mpi.h>

#include <atomic>
#include <vector>

#include "bench/bench_util.h"
#include "bench/pair_rma.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr size_t kMaxBytes = size_t{1} << 20;

std::vector<Row> Measure(MPI_Win native, MPI_Win shim, char* peer) {
  std::vector<Row> rows;
  const long one = 1;
  long result = 0;
  auto in_lock_all = [](MPI_Win win, int iters, auto body) {
    MPI_Win_lock_all(0, win);
    const double us = TimeUs(iters, body);
    MPI_Win_unlock_all(win);
    return us;
  };
  auto fetch_add = [&](MPI_Win win) {
    return in_lock_all(win, 20000, [&] {
      MPI_Fetch_and_op(&one, &result, MPI_LONG, kTarget, 0, MPI_SUM, win);
      MPI_Win_flush(kTarget, win);
    });
  };
  auto cas = [&](MPI_Win win) {
    return in_lock_all(win, 20000, [&] {
      const long compare = result;
      MPI_Compare_and_swap(&one, &compare, &result, MPI_LONG, kTarget, 0, win);
      MPI_Win_flush(kTarget, win);
    });
  };
  double fetch_floor = 0, cas_floor = 0;
  if (peer != nullptr) {
    std::atomic_ref<long> word(*reinterpret_cast<long*>(peer));
    fetch_floor = TimeUs(20000, [&] { result = word.fetch_add(1); });
    cas_floor = TimeUs(20000, [&] {
      long expected = result;
      word.compare_exchange_strong(expected, 1);
      result = expected;
    });
  }
  rows.push_back({"fetch_and_op+flush", 8, fetch_add(native), fetch_add(shim),
                  fetch_floor, "MPI_LONG MPI_SUM"});
  rows.push_back({"compare_and_swap+flush", 8, cas(native), cas(shim),
                  cas_floor, "MPI_LONG"});

  std::vector<double> data(kMaxBytes / sizeof(double), 1.0);
  for (size_t bytes : {size_t{8}, size_t{64}, size_t{512}, size_t{4096},
                       size_t{32768}, size_t{262144}, kMaxBytes}) {
    const int n = static_cast<int>(bytes / sizeof(double));
    const int iters = std::max(10, Iterations(bytes) / 4);
    auto accumulate = [&](MPI_Win win) {
      return in_lock_all(win, iters, [&] {
        MPI_Accumulate(data.data(), n, MPI_DOUBLE, kTarget, 0, n, MPI_DOUBLE,
                       MPI_SUM, win);
        MPI_Win_flush(kTarget, win);
      });
    };
    auto accumulate_exclusive = [&](MPI_Win win) {
      return TimeUs(iters, [&] {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, win);
        MPI_Accumulate(data.data(), n, MPI_DOUBLE, kTarget, 0, n, MPI_DOUBLE,
                       MPI_SUM, win);
        MPI_Win_unlock(kTarget, win);
      });
    };
    double loop_floor = 0;
    if (peer != nullptr) {
      double* target = reinterpret_cast<double*>(peer);
      loop_floor = TimeUs(iters, [&] {
        for (int i = 0; i < n; ++i) target[i] += data[i];
        std::atomic_thread_fence(std::memory_order_seq_cst);
      });
    }
    rows.push_back({"accumulate+flush", bytes, accumulate(native),
                    accumulate(shim), loop_floor,
                    "MPI_DOUBLE MPI_SUM, lock_all"});
    rows.push_back({"lock+accumulate+unlock", bytes,
                    accumulate_exclusive(native), accumulate_exclusive(shim),
                    loop_floor, "exclusive lock"});
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  return RunNativeVsShimTable(argc, argv, kMaxBytes, Measure);
}
