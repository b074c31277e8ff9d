/* Put and get with derived datatypes on the origin and/or target side:
 * vector, hvector, indexed, hindexed (negative displacement, out-of-order
 * blocks), struct (with alignment padding), resized (interleaving
 * instances), 2D/3D subarray (C and Fortran order), contiguous of doubles
 * and a dup of a predefined type, on disp_unit 1 and 8 windows.
 *
 * The reference does not use MPI's datatype engine: every type is also
 * built here as an explicit list of (offset, size) elements in type-map
 * order (only extents are asked from MPI), and a put/get is modelled as
 * gathering the origin bytes in type-map order and scattering them over the
 * target's. */
#include "tests/diff/diff_util.h"

#define REGION 2048 /* bytes every origin owns in every target's window */
#define MAX_ELEMS 512
#define BUF_BYTES 4096

/* A datatype and its flattened type map. */
typedef struct {
  MPI_Datatype type;
  int n;               /* elements in one instance */
  long off[MAX_ELEMS]; /* byte offset of each element, type-map order */
  int len[MAX_ELEMS];  /* bytes of each element */
  MPI_Aint lb, extent; /* from MPI */
} tmap_t;

static tmap_t* NewMap(void) { return calloc(1, sizeof(tmap_t)); }

static void Append(tmap_t* m, long off, int len) {
  if (m->n >= MAX_ELEMS) {
    fprintf(stderr, "type map too long\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  m->off[m->n] = off;
  m->len[m->n] = len;
  m->n++;
}

/* Appends `count` instances of `base` starting at `at`. */
static void AppendInstances(tmap_t* m, const tmap_t* base, int count, long at) {
  for (int k = 0; k < count; ++k) {
    for (int e = 0; e < base->n; ++e) {
      Append(m, at + (long)k * base->extent + base->off[e], base->len[e]);
    }
  }
}

static tmap_t* Finish(tmap_t* m) {
  MPI_Type_commit(&m->type);
  MPI_Type_get_extent(m->type, &m->lb, &m->extent);
  return m;
}

static tmap_t* Basic(MPI_Datatype type, int len) {
  tmap_t* m = NewMap();
  m->type = type;
  Append(m, 0, len);
  m->lb = 0;
  m->extent = len;
  return m;
}

static tmap_t* Contiguous(int count, const tmap_t* base) {
  tmap_t* m = NewMap();
  MPI_Type_contiguous(count, base->type, &m->type);
  AppendInstances(m, base, count, 0);
  return Finish(m);
}

static tmap_t* Vector(int count, int blen, int stride, const tmap_t* base) {
  tmap_t* m = NewMap();
  MPI_Type_vector(count, blen, stride, base->type, &m->type);
  for (int i = 0; i < count; ++i) {
    AppendInstances(m, base, blen, (long)i * stride * base->extent);
  }
  return Finish(m);
}

static tmap_t* Hvector(int count, int blen, long stride_bytes,
                       const tmap_t* base) {
  tmap_t* m = NewMap();
  MPI_Type_create_hvector(count, blen, stride_bytes, base->type, &m->type);
  for (int i = 0; i < count; ++i) {
    AppendInstances(m, base, blen, (long)i * stride_bytes);
  }
  return Finish(m);
}

static tmap_t* Indexed(int n, const int* blens, const int* displs,
                       const tmap_t* base) {
  tmap_t* m = NewMap();
  MPI_Type_indexed(n, blens, displs, base->type, &m->type);
  for (int i = 0; i < n; ++i) {
    AppendInstances(m, base, blens[i], (long)displs[i] * base->extent);
  }
  return Finish(m);
}

static tmap_t* Hindexed(int n, const int* blens, const MPI_Aint* displs,
                        const tmap_t* base) {
  tmap_t* m = NewMap();
  MPI_Type_create_hindexed(n, blens, displs, base->type, &m->type);
  for (int i = 0; i < n; ++i) AppendInstances(m, base, blens[i], displs[i]);
  return Finish(m);
}

static tmap_t* Struct(int n, const int* blens, const MPI_Aint* displs,
                      tmap_t* const* types) {
  tmap_t* m = NewMap();
  MPI_Datatype t[8];
  for (int i = 0; i < n; ++i) t[i] = types[i]->type;
  MPI_Type_create_struct(n, blens, displs, t, &m->type);
  for (int i = 0; i < n; ++i) AppendInstances(m, types[i], blens[i], displs[i]);
  return Finish(m);
}

static tmap_t* Resized(const tmap_t* base, MPI_Aint lb, MPI_Aint extent) {
  tmap_t* m = NewMap();
  MPI_Type_create_resized(base->type, lb, extent, &m->type);
  AppendInstances(m, base, 1, 0);
  return Finish(m);
}

static tmap_t* Dup(const tmap_t* base) {
  tmap_t* m = NewMap();
  MPI_Type_dup(base->type, &m->type);
  AppendInstances(m, base, 1, 0);
  return Finish(m);
}

/* Subarray of `ndims` dimensions; elements in memory order of the chosen
 * array order (C: last index fastest, Fortran: first index fastest). */
static tmap_t* Subarray(int ndims, const int* sizes, const int* subsizes,
                        const int* starts, int order, const tmap_t* base) {
  tmap_t* m = NewMap();
  MPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, base->type,
                           &m->type);
  int idx[3] = {0, 0, 0};
  long total = 1;
  for (int d = 0; d < ndims; ++d) total *= subsizes[d];
  for (long k = 0; k < total; ++k) {
    /* Decompose k with the fastest dimension first. */
    long rest = k;
    for (int j = 0; j < ndims; ++j) {
      const int d = order == MPI_ORDER_C ? ndims - 1 - j : j;
      idx[d] = (int)(rest % subsizes[d]);
      rest /= subsizes[d];
    }
    long linear = 0;
    if (order == MPI_ORDER_C) {
      for (int d = 0; d < ndims; ++d) {
        linear = linear * sizes[d] + starts[d] + idx[d];
      }
    } else {
      for (int d = ndims - 1; d >= 0; --d) {
        linear = linear * sizes[d] + starts[d] + idx[d];
      }
    }
    AppendInstances(m, base, 1, linear * base->extent);
  }
  return Finish(m);
}

static void FreeMap(tmap_t* m, int predefined) {
  if (!predefined && m->type != MPI_DATATYPE_NULL) MPI_Type_free(&m->type);
  free(m);
}

/* Byte positions of `count` instances of `m` laid at `at`, in order. */
static long Positions(const tmap_t* m, int count, long at, long* pos) {
  long n = 0;
  for (int k = 0; k < count; ++k) {
    for (int e = 0; e < m->n; ++e) {
      const long start = at + (long)k * m->extent + m->off[e];
      for (int b = 0; b < m->len[e]; ++b) pos[n++] = start + b;
    }
  }
  return n;
}

/* Models a transfer: gathers `scount` instances of `s` at `src + sat` and
 * scatters them over `dcount` instances of `d` at `dst + dat`. */
static void ModelCopy(const unsigned char* src, long sat, const tmap_t* s,
                      int scount, unsigned char* dst, long dat, const tmap_t* d,
                      int dcount) {
  static long spos[BUF_BYTES], dpos[BUF_BYTES];
  const long ns = Positions(s, scount, sat, spos);
  const long nd = Positions(d, dcount, dat, dpos);
  if (ns != nd) {
    fprintf(stderr, "test bug: signatures differ (%ld vs %ld bytes)\n", ns, nd);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (long i = 0; i < ns; ++i) dst[dpos[i]] = src[spos[i]];
}

typedef struct {
  const char* name;
  tmap_t* origin;
  int ocount;
  long oat; /* where the origin data starts in the origin buffer */
  tmap_t* target;
  int tcount;
  long tat; /* byte offset of the target data inside the origin's region */
  int disp_unit;
  int predefined_origin, predefined_target;
} case_t;

/* Bytes 0x40..0x7f only: any 8 of them form a finite double. */
static unsigned char Pattern(int who, int c, int salt, long j) {
  return (unsigned char)(0x40 +
                         ((who * 13 + c * 7 + salt * 29 + j * 3) & 0x3f));
}

static void FillPattern(unsigned char* p, long n, int who, int c, int salt) {
  for (long j = 0; j < n; ++j) p[j] = Pattern(who, c, salt, j);
}

/* Where origin o's data for case c lives in a target's window. */
static long RegionOf(int c, int o) { return ((long)c * du.size + o) * REGION; }

/* Target t's window after the puts, for the regions of case c. */
static void ModelWindow(const case_t* cs, int c, int t, unsigned char* ref,
                        long wbytes, unsigned char* scratch) {
  FillPattern(ref, wbytes, t, 0, 1);
  for (int o = 0; o < du.size; ++o) {
    FillPattern(scratch, BUF_BYTES, o, c, 2);
    ModelCopy(scratch, cs->oat, cs->origin, cs->ocount, ref,
              RegionOf(c, o) + cs->tat, cs->target, cs->tcount);
  }
}

/* All cases at once: every origin puts each case to every target (into
 * its own region of that case), then gets each case from every target
 * (the region of its right neighbour) into a prefilled buffer. Cases with
 * odd index use shared per-target locks for the gets, the others lock_all. */
static void RunCases(const case_t* cases, int num_cases, MPI_Win win1,
                     unsigned char* base1, MPI_Win win8, unsigned char* base8,
                     long wbytes) {
  const int me = du.rank, n = du.size;
  unsigned char* obuf = malloc((size_t)num_cases * BUF_BYTES);
  unsigned char* gbuf = malloc((size_t)num_cases * n * BUF_BYTES);
  unsigned char* ref = malloc((size_t)wbytes);
  unsigned char* scratch = malloc(BUF_BYTES);
  unsigned char* want = malloc(BUF_BYTES);
  uint64_t* hash = malloc(sizeof(uint64_t) * (size_t)num_cases);
  long* bad = calloc((size_t)num_cases, sizeof(long));
  char what[160];

  FillPattern(base1, wbytes, me, 0, 1);
  FillPattern(base8, wbytes, me, 0, 1);
  for (int c = 0; c < num_cases; ++c) {
    FillPattern(obuf + (size_t)c * BUF_BYTES, BUF_BYTES, me, c, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Win_lock_all(0, win1);
  MPI_Win_lock_all(0, win8);
  for (int c = 0; c < num_cases; ++c) {
    const case_t* cs = &cases[c];
    MPI_Win win = cs->disp_unit == 1 ? win1 : win8;
    for (int k = 0; k < n; ++k) {
      const int t = (me + k) % n;
      MPI_Put(obuf + (size_t)c * BUF_BYTES + cs->oat, cs->ocount,
              cs->origin->type, t, (RegionOf(c, me) + cs->tat) / cs->disp_unit,
              cs->tcount, cs->target->type, win);
    }
    if (c % 5 == 0) MPI_Win_flush((me + c) % n, win);
  }
  MPI_Win_unlock_all(win8);
  MPI_Win_unlock_all(win1);
  MPI_Barrier(MPI_COMM_WORLD);

  for (int c = 0; c < num_cases; ++c) {
    const case_t* cs = &cases[c];
    const unsigned char* base = cs->disp_unit == 1 ? base1 : base8;
    const long lo = RegionOf(c, 0), len = (long)n * REGION;
    ModelWindow(cs, c, me, ref, wbytes, scratch);
    snprintf(what, sizeof what, "%s: window after puts", cs->name);
    du_check_bytes(what, base + lo, ref + lo, (size_t)len);
    hash[c] = du_hash(DU_HASH_INIT, base + lo, (size_t)len);
    bad[c] += du.bad;
    du.bad = 0;
  }

  MPI_Win_lock_all(0, win1);
  MPI_Win_lock_all(0, win8);
  const int o2 = (me + 1) % n;
  for (int c = 0; c < num_cases; ++c) {
    const case_t* cs = &cases[c];
    MPI_Win win = cs->disp_unit == 1 ? win1 : win8;
    if (c % 2 == 1) continue;
    for (int k = 0; k < n; ++k) {
      const int t = (me + n - k) % n;
      unsigned char* g = gbuf + ((size_t)c * n + t) * BUF_BYTES;
      FillPattern(g, BUF_BYTES, me, c, 3);
      MPI_Get(g + cs->oat, cs->ocount, cs->origin->type, t,
              (RegionOf(c, o2) + cs->tat) / cs->disp_unit, cs->tcount,
              cs->target->type, win);
    }
  }
  MPI_Win_flush_local_all(win1);
  MPI_Win_unlock_all(win8);
  MPI_Win_unlock_all(win1);
  for (int k = 0; k < n; ++k) {
    const int t = (me + n - k) % n;
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win1);
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win8);
    for (int c = 1; c < num_cases; c += 2) {
      const case_t* cs = &cases[c];
      MPI_Win win = cs->disp_unit == 1 ? win1 : win8;
      unsigned char* g = gbuf + ((size_t)c * n + t) * BUF_BYTES;
      FillPattern(g, BUF_BYTES, me, c, 3);
      MPI_Get(g + cs->oat, cs->ocount, cs->origin->type, t,
              (RegionOf(c, o2) + cs->tat) / cs->disp_unit, cs->tcount,
              cs->target->type, win);
    }
    MPI_Win_unlock(t, win1);
    MPI_Win_unlock(t, win8);
  }

  for (int c = 0; c < num_cases; ++c) {
    const case_t* cs = &cases[c];
    for (int t = 0; t < n; ++t) {
      ModelWindow(cs, c, t, ref, wbytes, scratch);
      FillPattern(want, BUF_BYTES, me, c, 3);
      ModelCopy(ref, RegionOf(c, o2) + cs->tat, cs->target, cs->tcount, want,
                cs->oat, cs->origin, cs->ocount);
      const unsigned char* g = gbuf + ((size_t)c * n + t) * BUF_BYTES;
      snprintf(what, sizeof what, "%s: get from %d", cs->name, t);
      du_check_bytes(what, g, want, BUF_BYTES);
      hash[c] = du_hash(hash[c], g, BUF_BYTES);
    }
    long bytes = 0;
    for (int e = 0; e < cs->origin->n; ++e) bytes += cs->origin->len[e];
    snprintf(what, sizeof what, "%s (%ld bytes)", cs->name, bytes * cs->ocount);
    du.bad += bad[c];
    du_phase_local(what, hash[c]);
  }
  du_report();

  free(obuf);
  free(gbuf);
  free(ref);
  free(scratch);
  free(want);
  free(hash);
  free(bad);
}

int main(int argc, char** argv) {
  du_init(&argc, &argv);
  tmap_t* t_int = Basic(MPI_INT, 4);
  tmap_t* t_double = Basic(MPI_DOUBLE, 8);
  tmap_t* t_char = Basic(MPI_CHAR, 1);
  tmap_t* t_short = Basic(MPI_SHORT, 2);

  tmap_t* contig_int10 = Contiguous(10, t_int);
  tmap_t* vec_5_2_3 = Vector(5, 2, 3, t_int); /* 10 ints */
  tmap_t* vec_4_3_5 = Vector(4, 3, 5, t_int); /* 12 ints */
  const int ib[] = {3, 1, 2}, id[] = {0, 4, 9};
  tmap_t* idx_6 = Indexed(3, ib, id, t_int);  /* 6 ints, extent 44 */
  tmap_t* vec_6_2_4 = Vector(6, 2, 4, t_int); /* 12 ints */
  const int sb[] = {1, 1, 3};
  const MPI_Aint sd_a[] = {0, 8, 16}, sd_b[] = {20, 0, 8};
  tmap_t* st_types[] = {t_int, t_double, t_char};
  tmap_t* struct_a = Struct(3, sb, sd_a, st_types); /* extent 24 */
  tmap_t* struct_b = Struct(3, sb, sd_b, st_types); /* extent 24 */
  tmap_t* vec_2_1_3 = Vector(2, 1, 3, t_int);       /* ints at 0, 12 */
  tmap_t* interleaved = Resized(vec_2_1_3, 0, 4);   /* extent 4 */
  const int sz2[] = {8, 10}, sub2[] = {4, 5}, st2[] = {2, 3};
  tmap_t* sub_local = Subarray(2, sz2, sub2, st2, MPI_ORDER_C, t_double);
  const int szw[] = {16, 16}, subw[] = {4, 5}, stw[] = {5, 7};
  tmap_t* sub_win = Subarray(2, szw, subw, stw, MPI_ORDER_C, t_double);
  const int sz3[] = {4, 3, 5}, sub3[] = {2, 2, 3}, st3[] = {1, 0, 1};
  tmap_t* sub3_f = Subarray(3, sz3, sub3, st3, MPI_ORDER_FORTRAN, t_short);
  const int hb[] = {1, 2};
  const MPI_Aint hd[] = {24, -8};
  tmap_t* hidx_neg = Hindexed(2, hb, hd, t_int); /* true lb -8 */
  tmap_t* hvec = Hvector(3, 2, 11, t_short);     /* unaligned stride */
  tmap_t* contig_d7 = Contiguous(7, t_double);
  tmap_t* dup_int = Dup(t_int);
  tmap_t* hvec_struct = Hvector(3, 1, 40, struct_a); /* struct in vector */
  tmap_t* resized_struct = Resized(struct_b, 0, 32);

  const case_t cases[] = {
      {"contig->vector", t_int, 10, 0, vec_5_2_3, 1, 0, 1, 1, 0},
      {"vector->contig", vec_4_3_5, 1, 0, t_int, 12, 4, 1, 0, 1},
      {"indexed->vector", idx_6, 2, 0, vec_6_2_4, 1, 0, 1, 0, 0},
      {"struct->struct", struct_a, 3, 0, struct_b, 3, 8, 8, 0, 0},
      {"resized interleave->int", interleaved, 3, 0, t_int, 6, 12, 1, 0, 1},
      {"int->resized interleave", t_int, 6, 0, interleaved, 3, 12, 1, 1, 0},
      {"subarray->subarray", sub_local, 1, 0, sub_win, 1, 0, 8, 0, 0},
      {"short->subarray3d fortran", t_short, 12, 2, sub3_f, 1, 6, 1, 1, 0},
      {"int->hindexed neg lb", t_int, 3, 0, hidx_neg, 1, 64, 8, 1, 0},
      {"hvector unaligned->hvector", hvec, 2, 1, hvec, 2, 3, 1, 0, 0},
      {"contig doubles->double", contig_d7, 2, 0, t_double, 14, 40, 8, 0, 1},
      {"dup int->int", dup_int, 5, 0, t_int, 5, 4, 1, 0, 1},
      {"hvector of struct->resized struct", hvec_struct, 1, 0, resized_struct,
       3, 16, 8, 0, 0},
      {"zero count vector", vec_5_2_3, 0, 0, vec_4_3_5, 0, 0, 1, 0, 0},
  };
  const int num_cases = (int)(sizeof cases / sizeof cases[0]);

  const long wbytes = (long)num_cases * du.size * REGION;
  unsigned char *base1 = NULL, *base8 = NULL;
  MPI_Win win1, win8;
  MPI_Win_allocate(wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base1, &win1);
  MPI_Win_allocate(wbytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base8, &win8);
  RunCases(cases, num_cases, win1, base1, win8, base8, wbytes);

  /* A target datatype freed right after the put, before the flush. */
  {
    uint64_t h = DU_HASH_INIT;
    tmap_t* v = Vector(4, 1, 2, t_int);
    int data[4];
    for (int i = 0; i < 4; ++i) data[i] = 1000 * du.rank + i;
    memset(base1, 0, (size_t)du.size * REGION);
    MPI_Barrier(MPI_COMM_WORLD);
    const int t = (du.rank + 1) % du.size;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win1);
    MPI_Put(data, 4, MPI_INT, t, (MPI_Aint)du.rank * REGION, 1, v->type, win1);
    MPI_Type_free(&v->type);
    MPI_Win_unlock(t, win1);
    MPI_Barrier(MPI_COMM_WORLD);
    const int o = (du.rank + du.size - 1) % du.size;
    int got[8];
    memcpy(got, base1 + (size_t)o * REGION, sizeof got);
    for (int i = 0; i < 8; ++i) {
      const int want = i % 2 == 0 ? 1000 * o + i / 2 : 0;
      du_check_i64("freed type: element", got[i], want);
    }
    h = du_hash(h, got, sizeof got);
    free(v);
    du_phase("type freed before unlock", h);
  }

  MPI_Win_free(&win1);
  MPI_Win_free(&win8);

  FreeMap(contig_int10, 0);
  FreeMap(vec_5_2_3, 0);
  FreeMap(vec_4_3_5, 0);
  FreeMap(idx_6, 0);
  FreeMap(vec_6_2_4, 0);
  FreeMap(struct_a, 0);
  FreeMap(struct_b, 0);
  FreeMap(vec_2_1_3, 0);
  FreeMap(interleaved, 0);
  FreeMap(sub_local, 0);
  FreeMap(sub_win, 0);
  FreeMap(sub3_f, 0);
  FreeMap(hidx_neg, 0);
  FreeMap(hvec, 0);
  FreeMap(contig_d7, 0);
  FreeMap(dup_int, 0);
  FreeMap(hvec_struct, 0);
  FreeMap(resized_struct, 0);
  FreeMap(t_int, 1);
  FreeMap(t_double, 1);
  FreeMap(t_char, 1);
  FreeMap(t_short, 1);
  return du_finish();
}
