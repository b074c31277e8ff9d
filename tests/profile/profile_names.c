/* A window whose name (MPI_Win_set_name) holds a quote, a backslash,
 * control bytes, bytes that are not UTF-8 and well-formed multi-byte UTF-8:
 * the profile must still be JSON that a strict parser reads, with the name
 * escaped (check_names.py knows the expected string). One put to itself, so
 * the window has something to report. */
#include <mpi.h>
#include <stdio.h>

/* Kept in step with check_names.py's NAME_BYTES. */
static const char kName[] =
    "q\"b\\c\x01\x1f|\xff|\xc3(|\xe2\x82|\xed\xa0\x80|\xf4\x90\x80\x80|"
    "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80|\x7f";

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long* base;
  MPI_Win win;
  MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  MPI_Win_set_name(win, kName);
  long one = 1;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  MPI_Put(&one, 1, MPI_LONG, rank, 0, 1, MPI_LONG, win);
  MPI_Win_unlock(rank, win);
  int ok = *base == 1;
  MPI_Win_free(&win);
  MPI_Finalize();
  if (!ok) fprintf(stderr, "put lost\n");
  return ok ? 0 : 1;
}
