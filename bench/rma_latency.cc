// Node-local RMA latency and bandwidth, native MPICH window vs rmashim window
// in the same run, with the CPU floor (memcpy into the peer's mapped memory).
//
// Run under mpirun with librmashim.so preloaded (scripts/demo.sh does it).
// Rank 0 is the origin, rank 1 the target; other ranks idle. The native
// window opts out of the shim with the info key rmashim_managed=false.
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kOrigin = 0;
constexpr int kTarget = 1;
constexpr size_t kMaxBytes = size_t{1} << 20;

struct Windows {
  MPI_Win native = MPI_WIN_NULL;
  MPI_Win shim = MPI_WIN_NULL;
  char* peer = nullptr;  // the target's memory, mapped (floor); may be null
};

MPI_Win AllocateWindow(bool managed, char** base) {
  MPI_Info info;
  MPI_Info_create(&info);
  if (!managed) MPI_Info_set(info, "rmashim_managed", "false");
  MPI_Win win;
  MPI_Win_allocate(kMaxBytes, 1, info, MPI_COMM_WORLD, base, &win);
  MPI_Info_free(&info);
  return win;
}

bool ShimManages(MPI_Win win) {
  using Fn = int (*)(MPI_Win, int*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_win_is_managed"));
  int flag = 0;
  return fn != nullptr && fn(win, &flag) == MPI_SUCCESS && flag;
}

int Iterations(size_t bytes) {
  return static_cast<int>(std::clamp<size_t>((size_t{64} << 20) / (bytes + 4096), 20, 20000));
}

// Median over `reps` batches of the mean time of one `op()` in microseconds.
template <typename Op>
double TimeUs(int iters, Op op) {
  constexpr int kReps = 7;
  std::vector<double> batches;
  for (int w = 0; w < std::max(1, iters / 10); ++w) op();  // warm-up
  for (int rep = 0; rep < kReps; ++rep) {
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) op();
    batches.push_back((MPI_Wtime() - t0) * 1e6 / iters);
  }
  std::nth_element(batches.begin(), batches.begin() + kReps / 2, batches.end());
  return batches[kReps / 2];
}

struct Row {
  std::string test;
  size_t bytes;
  double native_us, shim_us, floor_us;
};

void Measure(const Windows& w, std::vector<char>& buf, std::vector<Row>& rows) {
  for (size_t bytes : {size_t{8}, size_t{64}, size_t{512}, size_t{4096},
                       size_t{32768}, size_t{262144}, kMaxBytes}) {
    const int n = static_cast<int>(bytes);
    const int iters = Iterations(bytes);
    auto put_flush = [&](MPI_Win win) {
      MPI_Win_lock_all(0, win);
      const double us = TimeUs(iters, [&] {
        MPI_Put(buf.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
        MPI_Win_flush(kTarget, win);
      });
      MPI_Win_unlock_all(win);
      return us;
    };
    auto get_flush = [&](MPI_Win win) {
      MPI_Win_lock_all(0, win);
      const double us = TimeUs(iters, [&] {
        MPI_Get(buf.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
        MPI_Win_flush(kTarget, win);
      });
      MPI_Win_unlock_all(win);
      return us;
    };
    auto put_lock = [&](MPI_Win win) {
      return TimeUs(iters, [&] {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, win);
        MPI_Put(buf.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
        MPI_Win_unlock(kTarget, win);
      });
    };
    // Bandwidth: 16 puts in flight, one flush; reported as time per put.
    auto put_stream = [&](MPI_Win win) {
      MPI_Win_lock_all(0, win);
      const double us = TimeUs(std::max(1, iters / 16), [&] {
        for (int k = 0; k < 16; ++k) {
          MPI_Put(buf.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
        }
        MPI_Win_flush(kTarget, win);
      });
      MPI_Win_unlock_all(win);
      return us / 16;
    };
    double floor_copy = 0, floor_read = 0;
    if (w.peer != nullptr) {
      floor_copy = TimeUs(iters, [&] {
        std::memcpy(w.peer, buf.data(), bytes);
        std::atomic_thread_fence(std::memory_order_seq_cst);
      });
      floor_read = TimeUs(iters, [&] {
        std::memcpy(buf.data(), w.peer, bytes);
        std::atomic_thread_fence(std::memory_order_seq_cst);
      });
    }
    rows.push_back({"put+flush", bytes, put_flush(w.native), put_flush(w.shim), floor_copy});
    rows.push_back({"get+flush", bytes, get_flush(w.native), get_flush(w.shim), floor_read});
    rows.push_back({"lock+put+unlock", bytes, put_lock(w.native), put_lock(w.shim), floor_copy});
    rows.push_back({"put bandwidth", bytes, put_stream(w.native), put_stream(w.shim), floor_copy});
  }
}

void Print(const std::vector<Row>& rows, bool csv) {
  if (csv) {
    std::printf("test,bytes,native_us,shim_us,floor_us\n");
    for (const Row& r : rows) {
      std::printf("%s,%zu,%.4f,%.4f,%.4f\n", r.test.c_str(), r.bytes,
                  r.native_us, r.shim_us, r.floor_us);
    }
    return;
  }
  std::printf("%-16s %8s %11s %11s %11s %9s %10s\n", "test", "bytes",
              "native us", "shim us", "floor us", "speedup", "shim/floor");
  for (const Row& r : rows) {
    const bool bw = r.test == "put bandwidth";
    std::printf("%-16s %8zu %11.3f %11.3f %11.3f %8.1fx %9.2fx%s\n",
                r.test.c_str(), r.bytes, r.native_us, r.shim_us, r.floor_us,
                r.native_us / r.shim_us,
                r.floor_us > 0 ? r.shim_us / r.floor_us : 0.0,
                bw ? "  (per put, 16 in flight)" : "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool csv = argc > 1 && std::strcmp(argv[1], "--csv") == 0;
  if (size < 2) {
    if (rank == 0) std::fprintf(stderr, "needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Windows w;
  char* base = nullptr;
  w.native = AllocateWindow(false, &base);
  w.shim = AllocateWindow(true, &base);
  if (rank == kOrigin && !ShimManages(w.shim)) {
    std::fprintf(stderr,
                 "warning: librmashim.so is not preloaded; both columns are "
                 "native MPICH\n");
  }
  MPI_Aint peer_size;
  int peer_unit;
  if (MPI_Win_shared_query(w.shim, kTarget, &peer_size, &peer_unit, &w.peer) !=
          MPI_SUCCESS || peer_size == 0) {
    w.peer = nullptr;
  }
  std::vector<char> buf(kMaxBytes, 1);
  std::vector<Row> rows;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == kOrigin) Measure(w, buf, rows);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == kOrigin) Print(rows, csv);
  MPI_Win_free(&w.shim);
  MPI_Win_free(&w.native);
  MPI_Finalize();
  return 0;
}
