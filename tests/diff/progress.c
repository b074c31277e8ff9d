/* MPI must keep making progress while a process blocks in one window's
 * synchronization call, so that other processes can complete passive-target
 * operations on another window that targets it. Two windows:
 *   Wn  MPI_Win_allocate on the node communicator (synchronization the shim
 *       can serve in shared memory);
 *   Ww  MPI_Win_create on MPI_COMM_WORLD (with simulated nodes it spans
 *       them, so its locks go through MPI and need the target's progress).
 * On every node with two or more ranks, node rank 0 (A) blocks on Wn while
 * node rank 1 (B) first needs A's progress to lock Ww at A (or the other
 * way round), selected by the first argument:
 *   wait   A: MPI_Win_post to B, MPI_Win_wait.
 *          B: lock Ww at A, put, unlock; then start/put/complete on Wn.
 *   fence  A: MPI_Win_fence on Wn.
 *          B: lock Ww at A, put, unlock; then MPI_Win_fence on Wn.
 *   lock   A: holds MPI_LOCK_EXCLUSIVE on Wn at node rank 0, locks Ww at B.
 *          B: MPI_Win_lock(MPI_LOCK_EXCLUSIVE) on Wn at node rank 0.
 * A tells B (MPI_Send) right before it blocks; the order is then fixed
 * whatever the timing. Natively every blocking call drives progress, so all
 * of this completes; the values that travelled are checked. */
#include "tests/diff/diff_util.h"

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  const char* mode = argc > 1 ? argv[1] : "wait";
  const int me = du.rank;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int nr = 0, ns = 1;
  MPI_Comm_rank(node, &nr);
  MPI_Comm_size(node, &ns);
  int* node_world = malloc(sizeof(int) * (size_t)ns);
  MPI_Allgather(&me, 1, MPI_INT, node_world, 1, MPI_INT, node);

  int64_t* wn = NULL;
  MPI_Win win_n, win_w;
  MPI_Win_allocate(8 * 8, 8, MPI_INFO_NULL, node, &wn, &win_n);
  int64_t* ww = aligned_alloc(64, 8 * 8);
  for (int i = 0; i < 8; ++i) wn[i] = ww[i] = 0;
  MPI_Win_create(ww, 8 * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win_w);
  MPI_Barrier(MPI_COMM_WORLD);

  const int paired = ns >= 2 && nr <= 1;
  const int a_world = node_world[0];
  const int b_world = ns >= 2 ? node_world[1] : -1;
  const int64_t from_a = 1000 + me, from_b = 2000 + me;
  int token = 0;
  MPI_Group group, peer = MPI_GROUP_NULL;
  MPI_Win_get_group(win_n, &group);
  if (paired) {
    const int other = 1 - nr;
    MPI_Group_incl(group, 1, &other, &peer);
  }

  if (strcmp(mode, "wait") == 0) {
    du_step("wait: A in MPI_Win_wait, B locks the other window at A");
    if (paired && nr == 0) {
      MPI_Win_post(peer, 0, win_n);
      MPI_Send(&token, 1, MPI_INT, 1, 0, node);
      MPI_Win_wait(win_n);
    } else if (paired) {
      MPI_Recv(&token, 1, MPI_INT, 0, 0, node, MPI_STATUS_IGNORE);
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, a_world, 0, win_w);
      MPI_Put(&from_b, 1, MPI_INT64_T, a_world, 0, 1, MPI_INT64_T, win_w);
      MPI_Win_unlock(a_world, win_w);
      MPI_Win_start(peer, 0, win_n);
      MPI_Put(&from_b, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, win_n);
      MPI_Win_complete(win_n);
    }
  } else if (strcmp(mode, "fence") == 0) {
    du_step("fence: A in MPI_Win_fence, B locks the other window at A");
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win_n);
    if (paired && nr == 0) {
      MPI_Send(&token, 1, MPI_INT, 1, 0, node);
    } else if (paired) {
      MPI_Recv(&token, 1, MPI_INT, 0, 0, node, MPI_STATUS_IGNORE);
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, a_world, 0, win_w);
      MPI_Put(&from_b, 1, MPI_INT64_T, a_world, 0, 1, MPI_INT64_T, win_w);
      MPI_Win_unlock(a_world, win_w);
      MPI_Put(&from_b, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, win_n);
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win_n);
  } else if (strcmp(mode, "lock") == 0) {
    du_step("lock: B waits for A's lock, A locks the other window at B");
    if (paired && nr == 0) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win_n);
      MPI_Send(&token, 1, MPI_INT, 1, 0, node);
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, b_world, 0, win_w);
      MPI_Put(&from_a, 1, MPI_INT64_T, b_world, 0, 1, MPI_INT64_T, win_w);
      MPI_Win_unlock(b_world, win_w);
      MPI_Put(&from_a, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, win_n);
      MPI_Win_unlock(0, win_n);
    } else if (paired) {
      MPI_Recv(&token, 1, MPI_INT, 0, 0, node, MPI_STATUS_IGNORE);
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win_n);
      int64_t seen = -1;
      MPI_Get(&seen, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, win_n);
      MPI_Win_unlock(0, win_n);
      /* The lock was A's first, so A's put is visible. */
      du_check_i64("lock: B sees A's put after taking the lock", seen,
                   1000 + a_world);
    }
  } else {
    if (me == 0) fprintf(stderr, "unknown mode %s\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  du_step("barrier after the scenario");
  MPI_Barrier(MPI_COMM_WORLD);

  if (paired && strcmp(mode, "lock") == 0 && nr == 1) {
    du_check_i64("lock: A's put into Ww at B", ww[0], 1000 + a_world);
  }
  if (paired && strcmp(mode, "lock") != 0 && nr == 0) {
    du_check_i64("B's put into Ww at A", ww[0], 2000 + b_world);
    du_check_i64("B's put into Wn at A", wn[1], 2000 + b_world);
  }
  uint64_t h = du_hash(DU_HASH_INIT, ww, 8 * 8);
  h = du_hash(h, wn, 8 * 8);
  char label[64];
  snprintf(label, sizeof label, "%s: values delivered", mode);
  du_phase(label, h);
  du_print_per_rank("paired", paired);

  if (peer != MPI_GROUP_NULL) MPI_Group_free(&peer);
  MPI_Group_free(&group);
  MPI_Win_free(&win_w);
  MPI_Win_free(&win_n);
  free(ww);
  free(node_world);
  MPI_Comm_free(&node);
  return du_finish();
}
