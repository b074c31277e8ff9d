// The endpoint flush window (mpi_flush.h).
#include "shim/sync/mpi_flush.h"

#include <cstdint>

namespace rmashim {
namespace {

MPI_Win g_flush_win = MPI_WIN_NULL;
uint64_t g_flush_word = 0;  // what the one-byte gets read

}  // namespace

int OpenEndpointFlush() {
  if (g_flush_win != MPI_WIN_NULL) return MPI_SUCCESS;
  int rc = PMPI_Win_create(&g_flush_word, sizeof(g_flush_word), 1,
                           MPI_INFO_NULL, MPI_COMM_WORLD, &g_flush_win);
  if (rc != MPI_SUCCESS) return rc;
  PMPI_Win_set_errhandler(g_flush_win, MPI_ERRORS_RETURN);
  rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, g_flush_win);
  if (rc != MPI_SUCCESS) PMPI_Win_free(&g_flush_win);
  return rc;
}

void CloseEndpointFlush() {
  if (g_flush_win == MPI_WIN_NULL) return;
  PMPI_Win_unlock_all(g_flush_win);
  PMPI_Win_free(&g_flush_win);
}

int FlushEndpoint(int world_rank) {
  if (g_flush_win == MPI_WIN_NULL || world_rank < 0) return MPI_SUCCESS;
  unsigned char byte = 0;
  const int rc =
      PMPI_Get(&byte, 1, MPI_BYTE, world_rank, 0, 1, MPI_BYTE, g_flush_win);
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Win_flush(world_rank, g_flush_win);
}

}  // namespace rmashim
