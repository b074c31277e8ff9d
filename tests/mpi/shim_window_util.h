// What the window suites (shim_window_allocate_test.cc,
// shim_window_flavor_test.cc) share: a window's attributes as one struct,
// and an all-to-all put/get round that checks a window moves data.
#ifndef RMASHIM_TESTS_SHIM_WINDOW_UTIL_H_
#define RMASHIM_TESTS_SHIM_WINDOW_UTIL_H_

#include <mpi.h>

#include <vector>

namespace rmashim_test::window {

struct WinAttrs {
  bool ok = false;  // every attribute was present
  void* base = nullptr;
  MPI_Aint size = -1;
  int disp_unit = -1;
  int flavor = -1;
  int model = -1;
};

// MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR and
// MPI_WIN_MODEL of `win`.
WinAttrs GetAttrs(MPI_Win win);

// Every rank of `comm` puts a value into slot `rank` of every target, then
// reads every target's first `size` ints back. For a window of at least
// `size` ints at disp_unit sizeof(int), or a dynamic window (disp_unit 1)
// whose memory starts at address `dynamic_base[t]` on target t.
void ExpectAllToAllPutGet(MPI_Win win, int* local,
                          MPI_Comm comm = MPI_COMM_WORLD,
                          const std::vector<MPI_Aint>& dynamic_base = {});

}  // namespace rmashim_test::window

#endif  // RMASHIM_TESTS_SHIM_WINDOW_UTIL_H_
