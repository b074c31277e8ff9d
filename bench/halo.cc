// Nearest-neighbour halo exchange of the MPICH RMA synchronization paper:
// ranks on a periodic 2D grid each send one message to each of their four
// neighbours per step, with point-to-point (MPI_Isend/MPI_Irecv) and with
// puts under fence, post-start-complete-wait and lock-unlock. Reported as
// the paper's Tables 1-2 do: time of one step with one-sided communication
// divided by the time with point-to-point (smaller is better), per message
// size, on a native MPICH window and on an rmashim window in the same run.
// Each version's received data is checked.
#include <mpi.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "bench/bench_util.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr int kNeighbours = 4;
constexpr size_t kMaxBytes = size_t{256} << 10;  // the paper's largest size

enum class Version { kP2p, kFence, kPscw, kLock };

const char* Name(Version v) {
  switch (v) {
    case Version::kP2p:
      return "p2p";
    case Version::kFence:
      return "fence";
    case Version::kPscw:
      return "pscw";
    case Version::kLock:
      return "lock";
  }
  return "?";
}

// Slot j of a receive buffer holds what came from neighbour j; neighbour j
// sends from its slot Opposite(j) (the direction pointing back here).
int Opposite(int j) { return j ^ 1; }

struct Grid {
  MPI_Comm comm;
  int nbr[kNeighbours];  // -x, +x, -y, +y; may repeat, may be this rank
  MPI_Group group;       // the distinct neighbours

  Grid() {
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(Size(), 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, /*reorder=*/0, &comm);
    MPI_Cart_shift(comm, 0, 1, &nbr[0], &nbr[1]);
    MPI_Cart_shift(comm, 1, 1, &nbr[2], &nbr[3]);
    const std::set<int> distinct(nbr, nbr + kNeighbours);
    const std::vector<int> ranks(distinct.begin(), distinct.end());
    MPI_Group all;
    MPI_Comm_group(comm, &all);
    MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &group);
    MPI_Group_free(&all);
  }
  ~Grid() {
    MPI_Group_free(&group);
    MPI_Comm_free(&comm);
  }
};

// One halo-exchange step: `send` slot j goes to neighbour j and lands in its
// receive slot Opposite(j) (the window itself for the one-sided versions).
void Step(Version v, const Grid& g, MPI_Win win, const char* send, char* recv,
          int n) {
  switch (v) {
    case Version::kP2p: {
      MPI_Request req[2 * kNeighbours];
      for (int j = 0; j < kNeighbours; ++j) {
        MPI_Irecv(recv + j * n, n, MPI_BYTE, g.nbr[j], Opposite(j), g.comm,
                  &req[j]);
      }
      for (int j = 0; j < kNeighbours; ++j) {
        MPI_Isend(send + j * n, n, MPI_BYTE, g.nbr[j], j, g.comm,
                  &req[kNeighbours + j]);
      }
      MPI_Waitall(2 * kNeighbours, req, MPI_STATUSES_IGNORE);
      return;
    }
    case Version::kFence:  // the paper's Figure 1
      MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
      for (int j = 0; j < kNeighbours; ++j) {
        MPI_Put(send + j * n, n, MPI_BYTE, g.nbr[j], Opposite(j) * n, n,
                MPI_BYTE, win);
      }
      MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOSUCCEED,
                    win);
      return;
    case Version::kPscw:
      MPI_Win_post(g.group, 0, win);
      MPI_Win_start(g.group, 0, win);
      for (int j = 0; j < kNeighbours; ++j) {
        MPI_Put(send + j * n, n, MPI_BYTE, g.nbr[j], Opposite(j) * n, n,
                MPI_BYTE, win);
      }
      MPI_Win_complete(win);
      MPI_Win_wait(win);
      return;
    case Version::kLock:  // the targets learn of the data from the barrier
      for (int j = 0; j < kNeighbours; ++j) {
        MPI_Win_lock(MPI_LOCK_SHARED, g.nbr[j], 0, win);
        MPI_Put(send + j * n, n, MPI_BYTE, g.nbr[j], Opposite(j) * n, n,
                MPI_BYTE, win);
        MPI_Win_unlock(g.nbr[j], win);
      }
      MPI_Barrier(g.comm);
      return;
  }
}

char Pattern(int rank, int slot, size_t i, int tag) {
  return static_cast<char>(rank * 37 + slot * 11 + i * 3 + tag);
}

// One more step with fresh data; every receive slot must hold what its
// neighbour sent.
void Verify(Version v, const Grid& g, const Window* w, std::vector<char>& send,
            std::vector<char>& recv, size_t bytes, int tag,
            Verifier& verifier) {
  const int me = Rank(g.comm);
  for (int j = 0; j < kNeighbours; ++j) {
    for (size_t i = 0; i < bytes; ++i)
      send[j * bytes + i] = Pattern(me, j, i, tag);
  }
  char* into = w ? w->base : recv.data();
  MPI_Barrier(g.comm);
  if (w)
    OnOwnMemory(w->win, true,
                [&] { std::memset(into, 0, kNeighbours * bytes); });
  MPI_Barrier(g.comm);
  Step(v, g, w ? w->win : MPI_WIN_NULL, send.data(), into,
       static_cast<int>(bytes));
  bool ok = true;
  auto check = [&] {
    for (int j = 0; j < kNeighbours; ++j) {
      for (size_t i = 0; i < bytes; ++i) {
        ok =
            ok && into[j * bytes + i] == Pattern(g.nbr[j], Opposite(j), i, tag);
      }
    }
  };
  if (w) {
    OnOwnMemory(w->win, v == Version::kLock, check);
  } else {
    check();
  }
  verifier.Expect(ok, std::string(w ? w->name : "") + " " + Name(v) + " " +
                          std::to_string(bytes) +
                          " B: a neighbour's data is missing");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Flags flags = ParseFlags(argc, argv);
  Verifier verifier("halo");
  {
    Grid grid;
    WindowPair windows(kNeighbours * kMaxBytes, grid.comm);
    std::vector<char> send(kNeighbours * kMaxBytes, 1),
        recv(kNeighbours * kMaxBytes);
    const std::vector<size_t> sizes =
        flags.quick ? std::vector<size_t>{16, 1024, 65536}
                    : std::vector<size_t>{16,   64,    256,   1024,
                                          4096, 16384, 65536, kMaxBytes};
    Table table({"bytes", "ranks", "sync", "p2p_us", "native_us", "shim_us",
                 "native_ratio", "shim_ratio", "speedup"});
    int tag = 0;
    for (size_t bytes : sizes) {
      const int n = static_cast<int>(bytes);
      auto time = [&](Version v, const Window* w) {
        Verify(v, grid, w, send, recv, bytes, ++tag, verifier);
        char* into = w ? w->base : recv.data();
        return TimeOnAll(grid.comm, BatchMs(flags), [&] {
          Step(v, grid, w ? w->win : MPI_WIN_NULL, send.data(), into, n);
        });
      };
      const double p2p = time(Version::kP2p, nullptr);
      for (Version v : {Version::kFence, Version::kPscw, Version::kLock}) {
        const double native = time(v, &windows.native);
        const double shim = time(v, &windows.shim);
        table.Add({std::to_string(bytes), std::to_string(Size()), Name(v),
                   Num(p2p), Num(native), Num(shim), Num(native / p2p),
                   Num(shim / p2p), Ratio(native, shim)});
      }
    }
    if (Rank() == 0) table.Print(flags.csv);
  }
  const int rc = verifier.Finish();
  MPI_Finalize();
  return rc;
}
