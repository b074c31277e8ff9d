/* DART in one page: start the runtime, allocate symmetric global memory,
 * put into a neighbour, count with atomics, serialize with a lock, share
 * private memory, reduce, and stop. Build against libdart.so (README.md,
 * "DART"); run with mpirun.mpich -n N. Exits non-zero if any check fails. */
#include <dart/dart.h>
#include <stdio.h>

/* Any failing call ends the whole run. */
static void check(dart_ret_t rc, const char *what) {
  if (rc != DART_OK) {
    fprintf(stderr, "%s failed: %d\n", what, (int)rc);
    dart_abort(1);
  }
}

int main(int argc, char **argv) {
  check(dart_init(&argc, &argv), "dart_init");
  dart_global_unit_t me;
  size_t n;
  check(dart_myid(&me), "dart_myid");
  check(dart_size(&n), "dart_size");
  int failures = 0;

  /* 1. One int per unit, at the same offset everywhere: any unit can point
   *    at any unit's int without asking. Write my id into my right
   *    neighbour's int. */
  dart_gptr_t ring;
  check(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_INT, &ring),
        "dart_team_memalloc_aligned");
  dart_gptr_t right = ring, mine = ring;
  check(dart_gptr_setunit(&right, DART_TEAM_UNIT_ID((me.id + 1) % (int)n)),
        "dart_gptr_setunit");
  check(dart_gptr_setunit(&mine, DART_TEAM_UNIT_ID(me.id)),
        "dart_gptr_setunit");
  check(dart_put_blocking(right, &me.id, 1, DART_TYPE_INT, DART_TYPE_INT),
        "dart_put_blocking");
  check(dart_barrier(DART_TEAM_ALL), "dart_barrier");
  int *local;
  check(dart_gptr_getaddr(mine, (void **)&local), "dart_gptr_getaddr");
  if (*local != (me.id + (int)n - 1) % (int)n) ++failures;

  /* 2. A counter on unit 0, incremented atomically by everyone. */
  dart_gptr_t counter;
  check(dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_LONG, &counter),
        "dart_team_memalloc_aligned");
  long zero = 0, one = 1, old;
  if (me.id == 0) {
    check(dart_put_blocking(counter, &zero, 1, DART_TYPE_LONG, DART_TYPE_LONG),
          "dart_put_blocking");
  }
  check(dart_barrier(DART_TEAM_ALL), "dart_barrier");
  for (int i = 0; i < 10; ++i) {
    check(dart_fetch_and_op(counter, &one, &old, DART_TYPE_LONG, DART_OP_SUM),
          "dart_fetch_and_op");
  }

  /* 3. A lock making a read-modify-write with plain get/put safe. */
  dart_lock_t lock;
  check(dart_team_lock_init(DART_TEAM_ALL, &lock), "dart_team_lock_init");
  check(dart_lock_acquire(lock), "dart_lock_acquire");
  long value;
  check(dart_get_blocking(&value, counter, 1, DART_TYPE_LONG, DART_TYPE_LONG),
        "dart_get_blocking");
  value += 100;
  check(dart_put_blocking(counter, &value, 1, DART_TYPE_LONG, DART_TYPE_LONG),
        "dart_put_blocking");
  check(dart_lock_release(lock), "dart_lock_release");
  check(dart_barrier(DART_TEAM_ALL), "dart_barrier");
  check(dart_get_blocking(&value, counter, 1, DART_TYPE_LONG, DART_TYPE_LONG),
        "dart_get_blocking");
  if (value != 110L * (long)n) ++failures;

  /* 4. Non-collective memory: my own block, readable by everyone once they
   *    know the global pointer (here: shared with an allgather). */
  dart_gptr_t block;
  check(dart_memalloc(4, DART_TYPE_DOUBLE, &block), "dart_memalloc");
  double *b;
  check(dart_gptr_getaddr(block, (void **)&b), "dart_gptr_getaddr");
  for (int i = 0; i < 4; ++i) b[i] = me.id + i / 4.0;
  dart_gptr_t blocks[64];
  if (n > 64) dart_abort(1);
  check(dart_allgather(&block, blocks, sizeof(block), DART_TYPE_BYTE,
                       DART_TEAM_ALL),
        "dart_allgather");
  double theirs[4];
  dart_handle_t h;
  const int left = (me.id + (int)n - 1) % (int)n;
  check(dart_get_handle(theirs, blocks[left], 4, DART_TYPE_DOUBLE,
                        DART_TYPE_DOUBLE, &h),
        "dart_get_handle");
  check(dart_wait(&h), "dart_wait");
  for (int i = 0; i < 4; ++i) {
    if (theirs[i] != left + i / 4.0) ++failures;
  }

  /* 5. Agree on the outcome. */
  int all_failures = 0;
  check(dart_allreduce(&failures, &all_failures, 1, DART_TYPE_INT, DART_OP_SUM,
                       DART_TEAM_ALL),
        "dart_allreduce");
  if (me.id == 0) {
    printf("DART example on %zu units: %s\n", n,
           all_failures == 0 ? "all checks passed" : "FAILED");
  }
  check(dart_barrier(DART_TEAM_ALL), "dart_barrier");
  check(dart_memfree(block), "dart_memfree");
  check(dart_team_lock_destroy(&lock), "dart_team_lock_destroy");
  check(dart_team_memfree(counter), "dart_team_memfree");
  check(dart_team_memfree(ring), "dart_team_memfree");
  check(dart_exit(), "dart_exit");
  return all_failures == 0 ? 0 : 1;
}
