/* What the application can ask a window about, for every flavor:
 *   MPI_Win_get_info (every key and value, sorted by key), after creation
 *     without hints, with hints, and after MPI_Win_set_info;
 *   MPI_Win_shared_query for MPI_PROC_NULL and every rank: error class,
 *     size, disp_unit and whether the base is NULL (not the address); not
 *     for MPI_Win_allocate windows, where the shim deliberately answers
 *     with node-local peers' memory (MPI-4) and MPICH 4.0.2 with
 *     MPI_ERR_RMA_FLAVOR (tests/mpi/shim_window_flavor_test.cc covers the
 *     shim's side);
 *   MPI_Win_get_attr: flavor, model, size, disp_unit.
 * Windows: MPI_Win_allocate, MPI_Win_create, MPI_Win_allocate_shared (node
 * communicator), MPI_Win_create_dynamic. Rank 0 prints what every rank
 * sees, in rank order. Nothing is computed, so the self-check only verifies
 * that every rank of a window reports the same info keys. */
#include "tests/diff/diff_util.h"

#define LINE 2048

static int CmpStr(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

/* "key=value;key=value" sorted by key, into `out`. */
static void InfoString(MPI_Win win, char* out, size_t cap) {
  MPI_Info info = MPI_INFO_NULL;
  out[0] = '\0';
  if (MPI_Win_get_info(win, &info) != MPI_SUCCESS) {
    snprintf(out, cap, "(MPI_Win_get_info failed)");
    return;
  }
  int nkeys = 0;
  MPI_Info_get_nkeys(info, &nkeys);
  char** items = malloc(sizeof(char*) * (size_t)(nkeys + 1));
  for (int i = 0; i < nkeys; ++i) {
    char key[MPI_MAX_INFO_KEY + 1], value[256];
    int flag = 0;
    MPI_Info_get_nthkey(info, i, key);
    MPI_Info_get(info, key, sizeof value - 1, value, &flag);
    items[i] = malloc(MPI_MAX_INFO_KEY + 260);
    snprintf(items[i], MPI_MAX_INFO_KEY + 260, "%s=%s", key,
             flag ? value : "(unset)");
  }
  qsort(items, (size_t)nkeys, sizeof(char*), CmpStr);
  size_t used = 0;
  for (int i = 0; i < nkeys; ++i) {
    const int w =
        snprintf(out + used, cap - used, "%s%s", i ? ";" : "", items[i]);
    if (w > 0 && used + (size_t)w < cap) used += (size_t)w;
    free(items[i]);
  }
  free(items);
  MPI_Info_free(&info);
}

/* Rank 0 prints `label: <line>` once when every rank's line is the same,
 * else one line per rank. */
static void PrintLines(const char* label, const char* line) {
  char* all = du.rank == 0 ? malloc((size_t)LINE * du.size) : NULL;
  char mine[LINE];
  memset(mine, 0, sizeof mine);
  snprintf(mine, sizeof mine, "%s", line);
  MPI_Gather(mine, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (du.rank == 0) {
    int same = 1;
    for (int r = 1; r < du.size; ++r)
      same &= strcmp(all, all + (size_t)r * LINE) == 0;
    if (same) {
      printf("%s: %s\n", label, all);
    } else {
      for (int r = 0; r < du.size; ++r) {
        printf("%s [rank %d]: %s\n", label, r, all + (size_t)r * LINE);
      }
    }
    fflush(stdout);
    free(all);
  }
}

static void Query(const char* name, MPI_Win win, MPI_Comm comm) {
  char label[128], line[LINE];
  int size = 1;
  MPI_Comm_size(comm, &size);

  InfoString(win, line, sizeof line);
  snprintf(label, sizeof label, "%s info", name);
  PrintLines(label, line);
  {
    /* Every rank of the window must report the same keys. */
    char* first = malloc(LINE);
    memcpy(first, line, LINE);
    MPI_Bcast(first, LINE, MPI_CHAR, 0, comm);
    DU_CHECK(strcmp(first, line) == 0, "%s: info differs from rank 0", name);
    free(first);
  }

  size_t used = 0;
  line[0] = '\0';
  const int queried =
      strcmp(name, "allocate") != 0 && strncmp(name, "allocate ", 9) != 0;
  for (int r = MPI_PROC_NULL; queried && r < size; ++r) {
    MPI_Aint qsize = -7;
    int unit = -7;
    void* base = (void*)&used; /* a value no query returns */
    const int rc = MPI_Win_shared_query(win, r, &qsize, &unit, &base);
    const int cls = du_error_class(rc);
    const int w =
        snprintf(line + used, sizeof line - used, "%s%d:%s",
                 r == MPI_PROC_NULL ? "" : " ", r, du_class_name(cls));
    if (w > 0) used += (size_t)w;
    if (cls == MPI_SUCCESS) {
      const int w2 =
          snprintf(line + used, sizeof line - used, "[%ld %d %s]", (long)qsize,
                   unit, base == NULL ? "null" : "base");
      if (w2 > 0) used += (size_t)w2;
    }
  }
  if (queried) {
    snprintf(label, sizeof label, "%s shared_query", name);
    PrintLines(label, line);
  }

  int *flavor = NULL, *model = NULL, *disp = NULL, f1 = 0, f2 = 0, f3 = 0,
      f4 = 0;
  MPI_Aint* wsize = NULL;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &f1);
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &f2);
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &f3);
  MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &disp, &f4);
  snprintf(line, sizeof line, "flavor %d model %d size %ld disp_unit %d",
           f1 ? *flavor : -1, f2 ? *model : -1, f3 ? (long)*wsize : -1L,
           f4 ? *disp : -1);
  snprintf(label, sizeof label, "%s attrs", name);
  PrintLines(label, line);
}

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  const int me = du.rank;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);

  MPI_Info hints;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "no_locks", "false");
  MPI_Info_set(hints, "accumulate_ordering", "none");
  MPI_Info_set(hints, "accumulate_ops", "same_op");
  MPI_Info_set(hints, "same_size", "true");
  MPI_Info_set(hints, "same_disp_unit", "true");

  void* base = NULL;
  MPI_Win win;

  du_step("allocate");
  MPI_Win_allocate(256, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  Query("allocate", win, MPI_COMM_WORLD);
  MPI_Win_free(&win);

  du_step("allocate with hints");
  MPI_Win_allocate(256, 4, hints, MPI_COMM_WORLD, &base, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  Query("allocate with hints", win, MPI_COMM_WORLD);
  {
    MPI_Info more;
    MPI_Info_create(&more);
    MPI_Info_set(more, "accumulate_ordering", "rar,war");
    MPI_Win_set_info(win, more);
    MPI_Info_free(&more);
    char line[LINE];
    InfoString(win, line, sizeof line);
    PrintLines("allocate after set_info", line);
  }
  MPI_Win_free(&win);

  du_step("create");
  void* mem = aligned_alloc(64, 512);
  MPI_Win_create(mem, 128 * (me + 1), 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  Query("create", win, MPI_COMM_WORLD);
  MPI_Win_free(&win);

  du_step("create with hints");
  MPI_Win_create(mem, 128, 8, hints, MPI_COMM_WORLD, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  Query("create with hints", win, MPI_COMM_WORLD);
  MPI_Win_free(&win);
  free(mem);

  du_step("allocate_shared");
  MPI_Win_allocate_shared(64, 2, MPI_INFO_NULL, node, &base, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  Query("allocate_shared", win, node);
  MPI_Win_free(&win);

  du_step("dynamic");
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  Query("dynamic", win, MPI_COMM_WORLD);
  MPI_Win_free(&win);

  MPI_Info_free(&hints);
  MPI_Comm_free(&node);
  du_phase("info keys agree across ranks", DU_HASH_INIT);
  return du_finish();
}
