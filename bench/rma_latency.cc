// Node-local put/get latency and bandwidth, native MPICH window vs rmashim
// window in the same run, with the CPU floor (the same copy into the peer's
// mapped memory: FloorCopy, bench_util.h). Rank 0 is the origin, rank 1 the
// target; other ranks idle. Run under mpirun with librmashim.so preloaded
// (scripts/demo.sh does it).
#include <mpi.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "bench/bench_util.h"
#include "bench/pair_rma.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr size_t kMaxBytes = size_t{1} << 20;

std::vector<Row> Measure(MPI_Win native, MPI_Win shim, char* peer) {
  std::vector<Row> rows;
  std::vector<char> buf(kMaxBytes, 1);
  for (size_t bytes : {size_t{8}, size_t{64}, size_t{512}, size_t{4096},
                       size_t{32768}, size_t{262144}, kMaxBytes}) {
    const int n = static_cast<int>(bytes);
    const int iters = Iterations(bytes);
    auto in_lock_all = [&](MPI_Win win, int reps_per_op, auto body) {
      MPI_Win_lock_all(0, win);
      const double us = TimeUs(iters / reps_per_op, body);
      MPI_Win_unlock_all(win);
      return us / reps_per_op;
    };
    auto put_flush = [&](MPI_Win win) {
      return in_lock_all(win, 1, [&] {
        MPI_Put(buf.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
        MPI_Win_flush(kTarget, win);
      });
    };
    auto get_flush = [&](MPI_Win win) {
      return in_lock_all(win, 1, [&] {
        MPI_Get(buf.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
        MPI_Win_flush(kTarget, win);
      });
    };
    auto put_stream = [&](MPI_Win win) {  // 16 puts in flight, one flush
      return in_lock_all(win, 16, [&] {
        for (int k = 0; k < 16; ++k) {
          MPI_Put(buf.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
        }
        MPI_Win_flush(kTarget, win);
      });
    };
    auto put_lock = [&](MPI_Win win) {
      return TimeUs(iters, [&] {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, win);
        MPI_Put(buf.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
        MPI_Win_unlock(kTarget, win);
      });
    };
    double copy_floor = 0, read_floor = 0;
    if (peer != nullptr) {
      copy_floor = TimeUs(iters, [&] {
        FloorCopy(peer, buf.data(), bytes);
        std::atomic_thread_fence(std::memory_order_seq_cst);
      });
      read_floor = TimeUs(iters, [&] {
        FloorCopy(buf.data(), peer, bytes);
        std::atomic_thread_fence(std::memory_order_seq_cst);
      });
    }
    rows.push_back({"put+flush", bytes, put_flush(native), put_flush(shim),
                    copy_floor, ""});
    rows.push_back({"get+flush", bytes, get_flush(native), get_flush(shim),
                    read_floor, ""});
    rows.push_back({"lock+put+unlock", bytes, put_lock(native), put_lock(shim),
                    copy_floor, ""});
    rows.push_back({"put bandwidth", bytes, put_stream(native),
                    put_stream(shim), copy_floor, "per put, 16 in flight"});
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  return RunNativeVsShimTable(argc, argv, kMaxBytes, Measure);
}
