/* Error classes for erroneous RMA calls that native MPICH rejects cleanly
 * (no crash, no memory corruption), on windows with an error handler that
 * returns: bad target ranks, negative displacements, bad counts, types and
 * ops, operations outside any epoch or to targets outside the epoch,
 * unlock/flush/complete/wait without the matching epoch, epochs opened
 * twice. Out-of-range accesses are not among them: native MPICH corrupts
 * memory on those.
 *
 * The same cases run on an MPI_Win_allocate window, an MPI_Win_create
 * window or an MPI_Win_allocate_shared window (on the node communicator),
 * chosen by the first argument.
 * For every case rank 0 prints each rank's error class and how many times
 * the window's error handler ran. Afterwards a valid epoch must still work:
 * each rank puts to its right neighbour and the data is checked. */
#include "tests/diff/diff_util.h"

#define WORDS 64

static int g_handler_calls;
static int g_handler_class;

static void CountingHandler(MPI_Win* win, int* code, ...) {
  (void)win;
  ++g_handler_calls;
  MPI_Error_class(*code, &g_handler_class);
}

typedef struct {
  const char* window;
  MPI_Win win;
  MPI_Comm comm;
  int rank, size;
  int right, left;
  int32_t* base;
  int cases;
  int32_t buf[WORDS]; /* origin data of the erroneous calls */
  int32_t result[WORDS];
  /* Per case: class and handler calls, for the report. */
  int classes[128];
  int calls[128];
  const char* names[128];
} ctx_t;

static void Record(ctx_t* c, const char* name, int rc) {
  const int i = c->cases++;
  c->names[i] = name;
  c->classes[i] = du_error_class(rc);
  c->calls[i] = g_handler_calls;
  g_handler_calls = 0;
}

static char g_step[160];
#define CASE(c, name, call)                                          \
  do {                                                               \
    snprintf(g_step, sizeof g_step, "%s | %s", (c)->window, (name)); \
    du_step(g_step);                                                 \
    Record((c), (name), (call));                                     \
  } while (0)

static void RunCases(ctx_t* c) {
  MPI_Win win = c->win;
  const int n = c->size, right = c->right;
  int32_t* b = c->buf;
  int32_t* r = c->result;
  const int32_t one = 1;
  int32_t cmp = 0;
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Datatype uncommitted;
  MPI_Type_vector(2, 1, 2, MPI_INT32_T, &uncommitted);
  MPI_Group world_group, right_group, left_group;
  MPI_Win_get_group(win, &world_group);
  MPI_Group_incl(world_group, 1, &c->right, &right_group);
  MPI_Group_incl(world_group, 1, &c->left, &left_group);
  g_handler_calls = 0;

  /* No epoch. */
  CASE(c, "no epoch: put to rank size",
       MPI_Put(b, 1, MPI_INT32_T, n, 0, 1, MPI_INT32_T, win));
  CASE(c, "no epoch: put to rank -5",
       MPI_Put(b, 1, MPI_INT32_T, -5, 0, 1, MPI_INT32_T, win));
  CASE(c, "no epoch: put disp -1",
       MPI_Put(b, 1, MPI_INT32_T, right, -1, 1, MPI_INT32_T, win));
  CASE(c, "no epoch: put",
       MPI_Put(b, 1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, win));
  CASE(c, "no epoch: put to MPI_PROC_NULL",
       MPI_Put(b, 1, MPI_INT32_T, MPI_PROC_NULL, 0, 1, MPI_INT32_T, win));
  CASE(c, "no epoch: get",
       MPI_Get(r, 1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, win));
  CASE(c, "no epoch: accumulate",
       MPI_Accumulate(b, 1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, MPI_SUM,
                      win));
  CASE(c, "no epoch: fetch_and_op",
       MPI_Fetch_and_op(&one, r, MPI_INT32_T, right, 0, MPI_SUM, win));
  CASE(c, "no epoch: compare_and_swap",
       MPI_Compare_and_swap(&one, &cmp, r, MPI_INT32_T, right, 0, win));
  CASE(c, "no epoch: rput",
       MPI_Rput(b, 1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, win, &req));
  /* Request-based calls: their arguments are checked before the epoch. */
  CASE(c, "no epoch: rput MPI_DATATYPE_NULL",
       MPI_Rput(b, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT32_T, win, &req));
  CASE(c, "no epoch: rput to rank size",
       MPI_Rput(b, 1, MPI_INT32_T, n, 0, 1, MPI_INT32_T, win, &req));
  CASE(c, "no epoch: rget count -1",
       MPI_Rget(r, -1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, win, &req));
  CASE(c, "no epoch: rget disp -1",
       MPI_Rget(r, 1, MPI_INT32_T, right, -1, 1, MPI_INT32_T, win, &req));
  CASE(c, "no epoch: raccumulate MPI_OP_NULL",
       MPI_Raccumulate(b, 1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, MPI_OP_NULL,
                       win, &req));
  CASE(c, "no epoch: raccumulate MPI_DATATYPE_NULL",
       MPI_Raccumulate(b, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT32_T,
                       MPI_SUM, win, &req));
  CASE(c, "no epoch: rget_accumulate to rank -5",
       MPI_Rget_accumulate(b, 1, MPI_INT32_T, r, 1, MPI_INT32_T, -5, 0, 1,
                           MPI_INT32_T, MPI_SUM, win, &req));
  CASE(c, "no epoch: unlock", MPI_Win_unlock(right, win));
  CASE(c, "no epoch: unlock_all", MPI_Win_unlock_all(win));
  CASE(c, "no epoch: flush", MPI_Win_flush(right, win));
  CASE(c, "no epoch: flush_local", MPI_Win_flush_local(right, win));
  CASE(c, "no epoch: flush_all", MPI_Win_flush_all(win));
  CASE(c, "no epoch: complete", MPI_Win_complete(win));
  CASE(c, "no epoch: wait", MPI_Win_wait(win));
  CASE(c, "no epoch: lock type 12345", MPI_Win_lock(12345, right, 0, win));
  CASE(c, "no epoch: lock rank size", MPI_Win_lock(MPI_LOCK_SHARED, n, 0, win));
  CASE(c, "no epoch: put count -1",
       MPI_Put(b, -1, MPI_INT32_T, right, 0, -1, MPI_INT32_T, win));
  CASE(c, "no epoch: put MPI_DATATYPE_NULL",
       MPI_Put(b, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT32_T, win));
  CASE(c, "no epoch: put uncommitted type",
       MPI_Put(b, 1, uncommitted, right, 0, 1, uncommitted, win));
  CASE(c, "no epoch: put disp -1 to rank size",
       MPI_Put(b, 1, MPI_INT32_T, n, -1, 1, MPI_INT32_T, win));
  CASE(c, "no epoch: put count -1 to rank size",
       MPI_Put(b, -1, MPI_INT32_T, n, 0, 1, MPI_INT32_T, win));
  /* Assert bits a call does not accept. */
  CASE(c, "no epoch: lock assert 12345",
       MPI_Win_lock(MPI_LOCK_SHARED, right, 12345, win));
  CASE(c, "no epoch: unlock after lock with bad assert",
       MPI_Win_unlock(right, win));
  CASE(c, "no epoch: lock assert NOCHECK|NOSTORE",
       MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE,
                    win));
  CASE(c, "no epoch: unlock after lock NOCHECK|NOSTORE",
       MPI_Win_unlock(right, win));
  CASE(c, "no epoch: lock_all assert 12345", MPI_Win_lock_all(12345, win));
  CASE(c, "no epoch: unlock_all after lock_all with bad assert",
       MPI_Win_unlock_all(win));
  CASE(c, "no epoch: post assert 12345", MPI_Win_post(world_group, 12345, win));
  CASE(c, "no epoch: start assert 12345",
       MPI_Win_start(world_group, 12345, win));
  CASE(c, "no epoch: complete after start with bad assert",
       MPI_Win_complete(win));
  CASE(c, "no epoch: wait after post with bad assert", MPI_Win_wait(win));

  /* lock_all epoch. */
  CASE(c, "lock_all", MPI_Win_lock_all(0, win));
  CASE(c, "lock_all: put to rank size",
       MPI_Put(b, 1, MPI_INT32_T, n, 0, 1, MPI_INT32_T, win));
  CASE(c, "lock_all: get from rank -3",
       MPI_Get(r, 1, MPI_INT32_T, -3, 0, 1, MPI_INT32_T, win));
  CASE(c, "lock_all: put disp -4",
       MPI_Put(b, 1, MPI_INT32_T, right, -4, 1, MPI_INT32_T, win));
  CASE(c, "lock_all: get disp -1",
       MPI_Get(r, 1, MPI_INT32_T, right, -1, 1, MPI_INT32_T, win));
  CASE(c, "lock_all: put to MPI_PROC_NULL",
       MPI_Put(b, 1, MPI_INT32_T, MPI_PROC_NULL, 0, 1, MPI_INT32_T, win));
  CASE(c, "lock_all: get count -2",
       MPI_Get(r, -2, MPI_INT32_T, right, 0, -2, MPI_INT32_T, win));
  CASE(c, "lock_all: accumulate to rank size",
       MPI_Accumulate(b, 1, MPI_INT32_T, n, 0, 1, MPI_INT32_T, MPI_SUM, win));
  CASE(c, "lock_all: accumulate disp -1",
       MPI_Accumulate(b, 1, MPI_INT32_T, right, -1, 1, MPI_INT32_T, MPI_SUM,
                      win));
  CASE(c, "lock_all: accumulate MPI_OP_NULL",
       MPI_Accumulate(b, 1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, MPI_OP_NULL,
                      win));
  CASE(c, "lock_all: fetch_and_op rank size",
       MPI_Fetch_and_op(&one, r, MPI_INT32_T, n, 0, MPI_SUM, win));
  CASE(c, "lock_all: compare_and_swap rank -7",
       MPI_Compare_and_swap(&one, &cmp, r, MPI_INT32_T, -7, 0, win));
  CASE(c, "lock_all: get_accumulate disp -2",
       MPI_Get_accumulate(b, 1, MPI_INT32_T, r, 1, MPI_INT32_T, right, -2, 1,
                          MPI_INT32_T, MPI_SUM, win));
  CASE(c, "lock_all: rget rank size",
       MPI_Rget(r, 1, MPI_INT32_T, n, 0, 1, MPI_INT32_T, win, &req));
  CASE(c, "lock_all: accumulate MPI_NO_OP",
       MPI_Accumulate(b, 1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, MPI_NO_OP,
                      win));
  {
    const double d = 1.0, dc = 0.0;
    double dr = 0.0;
    CASE(c, "lock_all: compare_and_swap MPI_DOUBLE",
         MPI_Compare_and_swap(&d, &dc, &dr, MPI_DOUBLE, right, 0, win));
  }
  CASE(c, "lock_all: lock", MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  CASE(c, "lock_all: lock_all again", MPI_Win_lock_all(0, win));
  CASE(c, "lock_all: fence", MPI_Win_fence(0, win));
  CASE(c, "lock_all: start", MPI_Win_start(right_group, 0, win));
  CASE(c, "lock_all: unlock", MPI_Win_unlock(right, win));
  CASE(c, "lock_all: flush rank size", MPI_Win_flush(n, win));
  CASE(c, "lock_all: flush_local rank -9", MPI_Win_flush_local(-9, win));
  CASE(c, "lock_all: flush MPI_PROC_NULL", MPI_Win_flush(MPI_PROC_NULL, win));

  CASE(c, "lock_all: unlock_all", MPI_Win_unlock_all(win));

  /* Lock on the right neighbour only. Not here, as native MPICH does not
   * reject them cleanly: data movement to a target that is not locked
   * (accepted by some operations, depending on the target, then an
   * assertion fails in MPI_Win_fence), flush or unlock of such a target (an
   * assertion fails when it was never accessed). */
  CASE(c, "lock", MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  CASE(c, "lock: lock same target again",
       MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  CASE(c, "lock: lock_all", MPI_Win_lock_all(0, win));
  CASE(c, "lock: fence", MPI_Win_fence(0, win));
  CASE(c, "lock: unlock_all", MPI_Win_unlock_all(win));
  CASE(c, "lock: unlock", MPI_Win_unlock(right, win));
  CASE(c, "after unlock: put",
       MPI_Put(b, 1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, win));

  /* Fence epochs. */
  CASE(c, "fence assert NOCHECK", MPI_Win_fence(MPI_MODE_NOCHECK, win));
  CASE(c, "fence", MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  CASE(c, "fence: put to rank size",
       MPI_Put(b, 1, MPI_INT32_T, n, 0, 1, MPI_INT32_T, win));
  CASE(c, "fence: get disp -1",
       MPI_Get(r, 1, MPI_INT32_T, right, -1, 1, MPI_INT32_T, win));
  CASE(c, "fence: unlock_all", MPI_Win_unlock_all(win));
  CASE(c, "fence: unlock", MPI_Win_unlock(right, win));
  CASE(c, "fence: flush", MPI_Win_flush(right, win));
  CASE(c, "fence: complete", MPI_Win_complete(win));
  CASE(c, "fence nosucceed", MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  CASE(c, "after nosucceed: put",
       MPI_Put(b, 1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, win));
  CASE(c, "after nosucceed: accumulate",
       MPI_Accumulate(b, 1, MPI_INT32_T, right, 0, 1, MPI_INT32_T, MPI_SUM,
                      win));

  /* PSCW: expose to the left neighbour, access the right one. */
  CASE(c, "post", MPI_Win_post(left_group, 0, win));
  CASE(c, "start", MPI_Win_start(right_group, 0, win));
  CASE(c, "start: put to rank size",
       MPI_Put(b, 1, MPI_INT32_T, n, 0, 1, MPI_INT32_T, win));
  CASE(c, "start: put disp -3",
       MPI_Put(b, 1, MPI_INT32_T, right, -3, 1, MPI_INT32_T, win));
  CASE(c, "start: start again", MPI_Win_start(right_group, 0, win));
  CASE(c, "start: lock", MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
  CASE(c, "start: lock_all", MPI_Win_lock_all(0, win));
  CASE(c, "start: unlock_all", MPI_Win_unlock_all(win));
  CASE(c, "start: flush", MPI_Win_flush(right, win));
  CASE(c, "complete", MPI_Win_complete(win));
  CASE(c, "post: post again", MPI_Win_post(left_group, 0, win));
  CASE(c, "wait", MPI_Win_wait(win));
  CASE(c, "after wait: wait again", MPI_Win_wait(win));
  CASE(c, "after complete: complete again", MPI_Win_complete(win));

  /* Epoch rules MPICH enforces: MPI_Win_sync only inside a passive-target
   * epoch; no fence while an exposure epoch (post without wait) is open.
   * (MPI_Win_free in an exposure epoch is refused too, but native MPICH
   * 4.0.2 then drops a reference to the window's error handler and a later
   * MPI_Errhandler_free aborts: tests/mpi/shim_call_shapes_test.cc has it.) */
  CASE(c, "sync outside any epoch", MPI_Win_sync(c->win));
  MPI_Win_fence(0, c->win);
  CASE(c, "sync in a fence epoch", MPI_Win_sync(c->win));
  MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win);
  MPI_Win_lock_all(0, c->win);
  CASE(c, "sync in a lock_all epoch", MPI_Win_sync(c->win));
  MPI_Win_unlock_all(c->win);
  MPI_Group win_group, self_group;
  MPI_Win_get_group(c->win, &win_group);
  MPI_Group_incl(win_group, 1, &c->rank, &self_group);
  CASE(c, "post to self", MPI_Win_post(self_group, 0, c->win));
  CASE(c, "fence in an exposure epoch", MPI_Win_fence(0, c->win));
  CASE(c, "start on self", MPI_Win_start(self_group, 0, c->win));
  CASE(c, "complete", MPI_Win_complete(c->win));
  CASE(c, "wait", MPI_Win_wait(c->win));
  MPI_Group_free(&self_group);
  MPI_Group_free(&win_group);

  MPI_Type_free(&uncommitted);
  MPI_Group_free(&world_group);
  MPI_Group_free(&right_group);
  MPI_Group_free(&left_group);
}

/* Collective over the world: prints, per case, every rank's class and
 * handler call count. Every rank ran the same cases. */
static void Report(ctx_t* c) {
  const int n = du.size, k = c->cases;
  int* mine = malloc(sizeof(int) * 2 * k);
  for (int i = 0; i < k; ++i) {
    mine[2 * i] = c->classes[i];
    mine[2 * i + 1] = c->calls[i];
  }
  int* all = du.rank == 0 ? malloc(sizeof(int) * 2 * k * n) : NULL;
  MPI_Gather(mine, 2 * k, MPI_INT, all, 2 * k, MPI_INT, 0, MPI_COMM_WORLD);
  if (du.rank == 0) {
    for (int i = 0; i < k; ++i) {
      int same = 1;
      for (int r = 1; r < n; ++r) {
        same &= all[2 * k * r + 2 * i] == all[2 * i] &&
                all[2 * k * r + 2 * i + 1] == all[2 * i + 1];
      }
      printf("%s | %s:", c->window, c->names[i]);
      if (same) {
        printf(" all ranks %s (handler x%d)\n", du_class_name(all[2 * i]),
               all[2 * i + 1]);
        continue;
      }
      for (int r = 0; r < n; ++r) {
        printf(" [%d] %s (handler x%d)", r,
               du_class_name(all[2 * k * r + 2 * i]),
               all[2 * k * r + 2 * i + 1]);
      }
      printf("\n");
    }
    fflush(stdout);
    free(all);
  }
  free(mine);
}

/* A valid epoch after all the errors: put to the right neighbour. */
static void StillWorks(ctx_t* c, const char* label) {
  int32_t v[4];
  for (int j = 0; j < 4; ++j) v[j] = 7000 + 10 * c->rank + j;
  for (int j = 0; j < WORDS; ++j) c->base[j] = -1;
  MPI_Barrier(c->comm);
  MPI_Win_lock_all(0, c->win);
  MPI_Put(v, 4, MPI_INT32_T, c->right, 8, 4, MPI_INT32_T, c->win);
  MPI_Win_unlock_all(c->win);
  MPI_Barrier(c->comm);
  for (int j = 0; j < 4; ++j) {
    du_check_i64("valid put after errors", c->base[8 + j],
                 7000 + 10 * c->left + j);
  }
  du_phase_local(label, du_hash(DU_HASH_INIT, c->base, 4 * WORDS));
}

static void Setup(ctx_t* c, const char* window, MPI_Win win, MPI_Comm comm,
                  int32_t* base, MPI_Errhandler handler) {
  c->window = window;
  c->win = win;
  c->comm = comm;
  c->base = base;
  c->cases = 0;
  MPI_Comm_rank(comm, &c->rank);
  MPI_Comm_size(comm, &c->size);
  c->right = (c->rank + 1) % c->size;
  c->left = (c->rank + c->size - 1) % c->size;
  for (int j = 0; j < WORDS; ++j) {
    base[j] = -1;
    c->buf[j] = 100 + j;
    c->result[j] = 0;
  }
  MPI_Win_set_errhandler(win, handler);
  MPI_Barrier(comm);
}

/* The case list on one kind of window: "allocate", "allocate_shared" or
 * "create"; or "null_buffer": data movement with a NULL origin buffer and a
 * non-zero count (native MPICH: MPI_ERR_BUFFER), kept apart since it may
 * crash. Each is its own test, so one kind's crash or hang does not hide the
 * others' results. */
int main(int argc, char** argv) {
  du_init(&argc, &argv);
  const char* kind = argc > 1 ? argv[1] : "allocate";
  MPI_Errhandler handler;
  MPI_Win_create_errhandler(CountingHandler, &handler);
  static ctx_t c;
  MPI_Win win = MPI_WIN_NULL;
  MPI_Comm comm = MPI_COMM_WORLD, node = MPI_COMM_NULL;
  int32_t* base = NULL;
  int32_t* user = NULL;
  char label[96];

  if (strcmp(kind, "allocate") == 0 || strcmp(kind, "null_buffer") == 0) {
    MPI_Win_allocate(WORDS * 4, 4, MPI_INFO_NULL, comm, &base, &win);
  } else if (strcmp(kind, "allocate_shared") == 0) {
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                        &node);
    comm = node;
    MPI_Win_allocate_shared(WORDS * 4, 4, MPI_INFO_NULL, comm, &base, &win);
  } else if (strcmp(kind, "create") == 0) {
    user = aligned_alloc(64, WORDS * 4);
    base = user;
    MPI_Win_create(user, WORDS * 4, 4, MPI_INFO_NULL, comm, &win);
  } else {
    if (du.rank == 0) fprintf(stderr, "unknown window kind %s\n", kind);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Setup(&c, kind, win, comm, base, handler);

  if (strcmp(kind, "null_buffer") == 0) {
    MPI_Win_lock_all(0, win);
    CASE(&c, "lock_all: put from NULL buffer",
         MPI_Put(NULL, 1, MPI_INT32_T, c.right, 0, 1, MPI_INT32_T, win));
    CASE(&c, "lock_all: get into NULL buffer",
         MPI_Get(NULL, 1, MPI_INT32_T, c.right, 0, 1, MPI_INT32_T, win));
    CASE(&c, "lock_all: accumulate from NULL buffer",
         MPI_Accumulate(NULL, 1, MPI_INT32_T, c.right, 0, 1, MPI_INT32_T,
                        MPI_SUM, win));
    CASE(&c, "lock_all: put from NULL buffer, count 0",
         MPI_Put(NULL, 0, MPI_INT32_T, c.right, 0, 0, MPI_INT32_T, win));
    MPI_Win_unlock_all(win);
    Report(&c);
  } else {
    RunCases(&c);
    Report(&c);
  }
  snprintf(label, sizeof label, "%s: valid epoch after errors", kind);
  StillWorks(&c, label);

  MPI_Win_free(&win);
  free(user);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  MPI_Errhandler_free(&handler);
  return du_finish();
}
