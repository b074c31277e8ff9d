/* Several window flavors side by side, in interleaved epochs:
 *   Wa  MPI_Win_allocate on MPI_COMM_WORLD, sizes differ by rank, disp 4
 *   Wr  MPI_Win_allocate on a communicator with the ranks reversed
 *   Wc  MPI_Win_create over malloc'd memory, disp 8
 *   Ws  MPI_Win_allocate_shared on the node communicator, disp 2, one rank
 *       of every node of two or more contributes no memory
 *   Wd  MPI_Win_create_dynamic with attached memory
 * Phase 1: fence epochs open on four windows at once: puts to a
 *   neighbour, then gets of what the neighbour received.
 * Phase 2: different epochs at the same time: lock_all on Wa and Wd,
 *   PSCW around the node on Ws, shared per-target locks on Wc.
 * Phase 3: MPI_Win_shared_query on Ws, then load/store through the
 *   returned pointers with MPI_Win_sync and a node barrier.
 * Also printed: MPI_Win_get_attr (flavor, size, disp_unit, model),
 * MPI_Win_get_group compared with the communicator's group, window names,
 * and how often a keyval's delete callback ran on MPI_Win_free. */
#include "tests/diff/diff_util.h"

enum { kWa, kWr, kWc, kWs, kWd, kNumWins };
static const char* const kNames[kNumWins] = {"Wa", "Wr", "Wc", "Ws", "Wd"};

static int g_deleted;
static int CountDelete(MPI_Win win, int keyval, void* value, void* extra) {
  (void)win;
  (void)keyval;
  (void)extra;
  g_deleted += *(int*)value == 42;
  return MPI_SUCCESS;
}

static int32_t PutA(int o, int j) { return o * 1000 + j; }
static int64_t PutC(int o, int j) { return (int64_t)o * 1000000007 + j; }
static int16_t PutS(int o, int j) { return (int16_t)(o * 100 + j + 1); }
static int64_t PutD(int o, int j) { return (int64_t)o * 77 + j * 3; }

/* Prints one attribute row per window: the values every rank sees. */
static void PrintAttrs(const char* name, MPI_Win win, MPI_Comm comm) {
  int *flavor = NULL, *model = NULL, *disp = NULL, flag = 0;
  MPI_Aint* size = NULL;
  long long mine[4] = {-1, -1, -1, -1};
  if (MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag) ==
          MPI_SUCCESS &&
      flag) {
    mine[0] = *flavor;
  }
  if (MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag) == MPI_SUCCESS &&
      flag) {
    mine[1] = *model;
  }
  if (MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag) == MPI_SUCCESS &&
      flag) {
    mine[2] = *size;
  }
  if (MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &disp, &flag) == MPI_SUCCESS &&
      flag) {
    mine[3] = *disp;
  }
  MPI_Group wg, cg;
  int cmp = -1;
  MPI_Win_get_group(win, &wg);
  MPI_Comm_group(comm, &cg);
  MPI_Group_compare(wg, cg, &cmp);
  MPI_Group_free(&wg);
  MPI_Group_free(&cg);
  char wname[MPI_MAX_OBJECT_NAME] = "";
  int len = 0;
  MPI_Win_get_name(win, wname, &len);
  long long row[6] = {mine[0], mine[1],          mine[2],
                      mine[3], cmp == MPI_IDENT, len};
  long long* all = du.rank == 0 ? malloc(sizeof row * du.size) : NULL;
  MPI_Gather(row, 6, MPI_LONG_LONG, all, 6, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (du.rank == 0) {
    printf("%s name \"%s\" attrs (flavor model size disp_unit group_ident):",
           name, wname);
    for (int r = 0; r < du.size; ++r) {
      printf(" [%lld %lld %lld %lld %lld]", all[6 * r], all[6 * r + 1],
             all[6 * r + 2], all[6 * r + 3], all[6 * r + 4]);
    }
    printf("\n");
    free(all);
  }
}

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  const int me = du.rank, n = du.size;
  const int right = (me + 1) % n, left = (me + n - 1) % n;

  MPI_Comm rev, node;
  MPI_Comm_split(MPI_COMM_WORLD, 0, n - 1 - me, &rev);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int nr = 0, ns = 1, rr = 0;
  MPI_Comm_rank(node, &nr);
  MPI_Comm_size(node, &ns);
  MPI_Comm_rank(rev, &rr);
  /* World ranks of the node's members, for the reference. */
  int* node_world = malloc(sizeof(int) * ns);
  MPI_Allgather(&me, 1, MPI_INT, node_world, 1, MPI_INT, node);

  MPI_Win win[kNumWins];
  /* Wa: (me + 1) * 64 ints, and 4 more per rank for phase 2's puts (at
   * int 16 + 4 * origin of every target). */
  const int a_ints = (me + 1) * 64 + 4 * n;
  int32_t* wa = NULL;
  MPI_Win_allocate((MPI_Aint)a_ints * 4, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &wa,
                   &win[kWa]);
  /* Wr: 32 ints on the reversed communicator. */
  int32_t* wr = NULL;
  MPI_Win_allocate(32 * 4, 4, MPI_INFO_NULL, rev, &wr, &win[kWr]);
  /* Wc: (me + 2) * 16 int64 in user memory, and 2 more per rank for
   * phase 2's puts (at word 16 + 2 * origin of every target). */
  const int c_words = (me + 2) * 16 + 2 * n;
  int64_t* wc = NULL;
  /* aligned_alloc wants a size that is a multiple of the alignment. */
  wc = aligned_alloc(64, ((size_t)c_words * 8 + 63) / 64 * 64);
  MPI_Win_create(wc, (MPI_Aint)c_words * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD,
                 &win[kWc]);
  /* Ws: node rank 1 contributes nothing; the others (nr + 1) * 32 shorts. */
  const int s_shorts = nr == 1 ? 0 : (nr + 1) * 32;
  int16_t* ws = NULL;
  MPI_Win_allocate_shared((MPI_Aint)s_shorts * 2, 2, MPI_INFO_NULL, node, &ws,
                          &win[kWs]);
  /* Wd: 32 int64 attached. */
  int64_t* wd = calloc(32, 8);
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win[kWd]);
  MPI_Win_attach(win[kWd], wd, 32 * 8);
  MPI_Aint my_addr, *addrs = malloc(sizeof(MPI_Aint) * n);
  MPI_Get_address(wd, &my_addr);
  MPI_Allgather(&my_addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);

  /* Base attributes must be the memory the application got. */
  {
    void* base = NULL;
    int flag = 0;
    MPI_Win_get_attr(win[kWa], MPI_WIN_BASE, &base, &flag);
    DU_CHECK(flag && base == wa, "Wa base attribute");
    MPI_Win_get_attr(win[kWc], MPI_WIN_BASE, &base, &flag);
    DU_CHECK(flag && base == wc, "Wc base attribute");
    MPI_Win_get_attr(win[kWr], MPI_WIN_BASE, &base, &flag);
    DU_CHECK(flag && base == wr, "Wr base attribute");
    if (s_shorts > 0) {
      MPI_Win_get_attr(win[kWs], MPI_WIN_BASE, &base, &flag);
      DU_CHECK(flag && base == ws, "Ws base attribute");
    }
  }
  MPI_Win_set_name(win[kWa], "allocate world");
  MPI_Win_set_name(win[kWc], "create");
  int keyval;
  MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, CountDelete, &keyval, NULL);
  static int kAttrValue = 42;
  for (int i = 0; i < kNumWins; ++i) {
    MPI_Win_set_attr(win[i], keyval, &kAttrValue);
  }
  for (int i = 0; i < kNumWins; ++i) {
    int* v = NULL;
    int flag = 0;
    MPI_Win_get_attr(win[i], keyval, &v, &flag);
    DU_CHECK(flag && v == &kAttrValue, "keyval attribute on %s", kNames[i]);
  }
  PrintAttrs("Wa", win[kWa], MPI_COMM_WORLD);
  PrintAttrs("Wr", win[kWr], rev);
  PrintAttrs("Wc", win[kWc], MPI_COMM_WORLD);
  PrintAttrs("Ws", win[kWs], node);
  PrintAttrs("Wd", win[kWd], MPI_COMM_WORLD);

  for (int j = 0; j < a_ints; ++j) wa[j] = -1;
  for (int j = 0; j < 32; ++j) wr[j] = -1;
  for (int j = 0; j < c_words; ++j) wc[j] = -1;
  for (int j = 0; j < s_shorts; ++j) ws[j] = -1;
  for (int j = 0; j < 32; ++j) wd[j] = -1;

  /* The next node rank that has memory in Ws, and the previous one. */
  int s_next = nr, s_prev = nr;
  for (int k = 1; k <= ns; ++k) {
    const int c = (nr + k) % ns;
    if (c != 1 || ns == 1) {
      s_next = c;
      break;
    }
  }
  for (int k = 1; k <= ns; ++k) {
    const int c = (nr + ns - k) % ns;
    if (c != 1 || ns == 1) {
      s_prev = c;
      break;
    }
  }
  /* Who puts into my Ws memory: the node ranks whose s_next is me. */
  const int has_s = s_shorts > 0;

  /* Phase 1: fences on four windows at once. */
  int32_t pa[8], ga[8], pr[8], gr[8];
  int64_t pc[8], gc[8];
  int16_t ps[4], gs[4];
  for (int j = 0; j < 8; ++j) {
    pa[j] = PutA(me, j);
    pr[j] = PutA(me + 50, j);
    pc[j] = PutC(me, j);
  }
  for (int j = 0; j < 4; ++j) ps[j] = PutS(me, j);
  const int rev_right = (rr + 1) % n; /* in rev's ranks */
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win[kWa]);
  MPI_Win_fence(0, win[kWc]);
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win[kWs]);
  MPI_Win_fence(0, win[kWr]);
  MPI_Put(pa, 8, MPI_INT32_T, right, 0, 8, MPI_INT32_T, win[kWa]);
  MPI_Put(pr, 8, MPI_INT32_T, rev_right, 4, 8, MPI_INT32_T, win[kWr]);
  MPI_Put(pc, 8, MPI_INT64_T, right, 8, 8, MPI_INT64_T, win[kWc]);
  if (nr != 1 || ns == 1) {
    /* Node ranks with memory pass data around the ring of such ranks. */
    MPI_Put(ps, 4, MPI_INT16_T, s_next, 0, 4, MPI_INT16_T, win[kWs]);
  }
  MPI_Win_fence(0, win[kWr]);
  MPI_Win_fence(MPI_MODE_NOSTORE, win[kWa]);
  MPI_Win_fence(0, win[kWs]);
  MPI_Win_fence(MPI_MODE_NOSTORE, win[kWc]);
  /* Get what the left neighbour received from its own left. */
  MPI_Get(ga, 8, MPI_INT32_T, left, 0, 8, MPI_INT32_T, win[kWa]);
  MPI_Get(gr, 8, MPI_INT32_T, (rr + n - 1) % n, 4, 8, MPI_INT32_T, win[kWr]);
  MPI_Get(gc, 8, MPI_INT64_T, left, 8, 8, MPI_INT64_T, win[kWc]);
  if (nr != 1 || ns == 1) {
    MPI_Get(gs, 4, MPI_INT16_T, s_prev, 0, 4, MPI_INT16_T, win[kWs]);
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win[kWc]);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win[kWa]);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win[kWr]);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win[kWs]);

  {
    const int ll = (me + n - 2) % n;
    for (int j = 0; j < 8; ++j) {
      du_check_i64("fence Wa received", wa[j], PutA(left, j));
      du_check_i64("fence Wa got", ga[j], PutA(ll, j));
      du_check_i64("fence Wc received", wc[8 + j], PutC(left, j));
      du_check_i64("fence Wc got", gc[j], PutC(ll, j));
    }
    /* Reversed communicator: rev rank rr - 1 is world rank me + 1. */
    const int rev_left_world = (me + 1) % n, rev_ll_world = (me + 2) % n;
    for (int j = 0; j < 8; ++j) {
      du_check_i64("fence Wr received", wr[4 + j],
                   PutA(rev_left_world + 50, j));
      du_check_i64("fence Wr got", gr[j], PutA(rev_ll_world + 50, j));
    }
    if (has_s) {
      const int from = node_world[s_prev];
      for (int j = 0; j < 4; ++j) {
        du_check_i64("fence Ws received", ws[j], PutS(from, j));
      }
    }
    if (nr != 1 || ns == 1) {
      /* s_prev's memory holds what its own s_prev put. */
      int pp = s_prev;
      for (int k = 1; k <= ns; ++k) {
        const int c = (s_prev + ns - k) % ns;
        if (c != 1 || ns == 1) {
          pp = c;
          break;
        }
      }
      for (int j = 0; j < 4; ++j) {
        du_check_i64("fence Ws got", gs[j], PutS(node_world[pp], j));
      }
    }
  }
  uint64_t h = du_hash(DU_HASH_INIT, wa, 8 * 4);
  h = du_hash(h, ga, sizeof ga);
  h = du_hash(h, wr, 32 * 4);
  h = du_hash(h, gr, sizeof gr);
  h = du_hash(h, wc, 16 * 8);
  h = du_hash(h, gc, sizeof gc);
  if (has_s) h = du_hash(h, ws, 4 * 2);
  du_phase_local("fence on allocate/create/shared/reversed windows", h);

  /* Phase 2: different epochs at once. Everyone has finished reading its
   * phase-1 data before anyone writes again. */
  MPI_Barrier(MPI_COMM_WORLD);
  int32_t* pa2 = malloc(sizeof(int32_t) * n * 4);
  int64_t* pc2 = malloc(sizeof(int64_t) * n * 2);
  int64_t pd[4];
  int16_t ps2[4];
  for (int j = 0; j < 4; ++j) {
    pd[j] = PutD(me, j);
    ps2[j] = PutS(me + 20, j);
  }
  MPI_Group node_group, ring_from, ring_to;
  MPI_Win_get_group(win[kWs], &node_group);
  {
    /* Ws ring over the node ranks with memory: expose to s_prev, access
     * s_next (a node rank without memory takes part in neither). */
    const int in_ring = nr != 1 || ns == 1;
    MPI_Group_incl(node_group, in_ring ? 1 : 0, &s_prev, &ring_from);
    MPI_Group_incl(node_group, in_ring ? 1 : 0, &s_next, &ring_to);
  }
  MPI_Win_lock_all(0, win[kWa]);
  MPI_Win_lock_all(0, win[kWd]);
  const int in_ring = nr != 1 || ns == 1;
  if (in_ring) {
    MPI_Win_post(ring_from, 0, win[kWs]);
    MPI_Win_start(ring_to, 0, win[kWs]);
  }
  for (int k = 0; k < n; ++k) {
    const int t = (me + k) % n;
    for (int j = 0; j < 4; ++j) pa2[t * 4 + j] = PutA(me + 10 * t, j);
    MPI_Put(&pa2[t * 4], 4, MPI_INT32_T, t, 16 + 4 * me, 4, MPI_INT32_T,
            win[kWa]);
    for (int j = 0; j < 2; ++j) pc2[t * 2 + j] = PutC(me + 7 * t, j);
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win[kWc]);
    MPI_Put(&pc2[t * 2], 2, MPI_INT64_T, t, 16 + 2 * me, 2, MPI_INT64_T,
            win[kWc]);
    MPI_Win_unlock(t, win[kWc]);
  }
  MPI_Put(pd, 4, MPI_INT64_T, right, addrs[right] + 8 * 4, 4, MPI_INT64_T,
          win[kWd]);
  if (in_ring) {
    MPI_Put(ps2, 4, MPI_INT16_T, s_next, 4, 4, MPI_INT16_T, win[kWs]);
    MPI_Win_complete(win[kWs]);
  }
  MPI_Win_flush_all(win[kWd]);
  MPI_Win_unlock_all(win[kWa]);
  if (in_ring) MPI_Win_wait(win[kWs]);
  MPI_Win_unlock_all(win[kWd]);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int o = 0; o < n; ++o) {
    for (int j = 0; j < 4; ++j) {
      du_check_i64("mixed Wa", wa[16 + 4 * o + j], PutA(o + 10 * me, j));
    }
    for (int j = 0; j < 2; ++j) {
      du_check_i64("mixed Wc", wc[16 + 2 * o + j], PutC(o + 7 * me, j));
    }
  }
  for (int j = 0; j < 4; ++j)
    du_check_i64("mixed Wd", wd[4 + j], PutD(left, j));
  if (has_s) {
    for (int j = 0; j < 4; ++j) {
      du_check_i64("mixed Ws", ws[4 + j], PutS(node_world[s_prev] + 20, j));
    }
  }
  h = du_hash(DU_HASH_INIT, wa + 16, (size_t)n * 16);
  h = du_hash(h, wc + 16, (size_t)n * 16);
  h = du_hash(h, wd, 32 * 8);
  if (has_s) h = du_hash(h, ws + 4, 8);
  du_phase_local("lock_all + shared locks + PSCW + dynamic at once", h);
  MPI_Group_free(&ring_from);
  MPI_Group_free(&ring_to);
  MPI_Group_free(&node_group);

  /* Phase 3: shared_query on Ws; loads and stores through the pointers. */
  long long q[3 * 8 + 3];
  for (int i = 0; i < 3 * 8 + 3; ++i) q[i] = -9;
  int16_t** bases = malloc(sizeof(int16_t*) * ns);
  {
    MPI_Aint sz = 0;
    int unit = 0;
    void* p = NULL;
    MPI_Win_shared_query(win[kWs], MPI_PROC_NULL, &sz, &unit, &p);
    q[0] = sz;
    q[1] = unit;
    q[2] = p != NULL;
    for (int r = 0; r < ns; ++r) {
      MPI_Win_shared_query(win[kWs], r, &sz, &unit, &bases[r]);
      if (r < 8) {
        q[3 + 3 * r] = sz;
        q[4 + 3 * r] = unit;
        q[5 + 3 * r] = bases[r] != NULL;
      }
      DU_CHECK(sz == (r == 1 ? 0 : (r + 1) * 64), "shared_query size of %d", r);
      if (r == nr && sz > 0) DU_CHECK(bases[r] == ws, "shared_query my base");
    }
  }
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win[kWs]);
  if (has_s) {
    for (int j = 8; j < s_shorts; ++j) ws[j] = PutS(me + 40, j);
  }
  MPI_Win_sync(win[kWs]);
  MPI_Barrier(node);
  MPI_Win_sync(win[kWs]);
  uint64_t hs = DU_HASH_INIT;
  for (int r = 0; r < ns; ++r) {
    const int len = r == 1 ? 0 : (r + 1) * 32;
    for (int j = 8; j < len; ++j) {
      du_check_i64("load through shared_query", bases[r][j],
                   PutS(node_world[r] + 40, j));
    }
    if (len > 8) hs = du_hash(hs, bases[r] + 8, (size_t)(len - 8) * 2);
  }
  MPI_Win_unlock_all(win[kWs]);
  MPI_Barrier(node);
  du_phase_local("allocate_shared load/store via shared_query", hs);
  du_report();
  {
    long long* all = me == 0 ? malloc(sizeof q * n) : NULL;
    MPI_Gather(q, 27, MPI_LONG_LONG, all, 27, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (me == 0) {
      for (int r = 0; r < n; ++r) {
        const long long* x = all + 27 * r;
        printf(
            "rank %d Ws shared_query (size disp_unit base!=NULL): "
            "PROC_NULL [%lld %lld %lld]",
            r, x[0], x[1], x[2]);
        for (int k = 0; k < 8 && x[3 + 3 * k] != -9; ++k) {
          printf(" %d [%lld %lld %lld]", k, x[3 + 3 * k], x[4 + 3 * k],
                 x[5 + 3 * k]);
        }
        printf("\n");
      }
      free(all);
    }
  }

  MPI_Win_detach(win[kWd], wd);
  for (int i = 0; i < kNumWins; ++i) MPI_Win_free(&win[i]);
  MPI_Win_free_keyval(&keyval);
  du_print_per_rank("keyval delete callbacks", g_deleted);

  free(wc);
  free(wd);
  free(addrs);
  free(pa2);
  free(pc2);
  free(bases);
  free(node_world);
  MPI_Comm_free(&rev);
  MPI_Comm_free(&node);
  return du_finish();
}
