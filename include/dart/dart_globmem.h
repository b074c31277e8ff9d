/* DART: global pointers and global memory. */
#ifndef DART_DART_GLOBMEM_H_
#define DART_DART_GLOBMEM_H_

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A global pointer, 128 bits:
 *   unitid  the unit holding the memory, relative to team `teamid`;
 *   flags   the low 8 bits of the segment's flags (dart_gptr_setflags);
 *   segid   0 (DART_SEGMENT_LOCAL) for dart_memalloc memory, > 0 for
 *           dart_team_memalloc_aligned, < 0 for registered memory;
 *   teamid  the team the memory belongs to (DART_TEAM_ALL for memalloc);
 *   addr_or_offs.offset  byte offset inside the unit's part of the segment.
 * Any unit may change unitid and offset to address any unit's part of a
 * symmetric allocation (dart_gptr_setunit, dart_gptr_incaddr). */
typedef struct {
  dart_unit_t unitid : 24;
  unsigned int flags : 8;
  int16_t segid;
  int16_t teamid;
  union {
    uint64_t offset;
    void *addr;
  } addr_or_offs;
} dart_gptr_t;

#ifdef __cplusplus
#define DART_GPTR_NULL (dart_gptr_t{-1, 0, 0, DART_TEAM_NULL, {0}})
#else
#define DART_GPTR_NULL                     \
  ((dart_gptr_t){.unitid = -1,             \
                 .flags = 0,               \
                 .segid = 0,               \
                 .teamid = DART_TEAM_NULL, \
                 .addr_or_offs.offset = 0})
#endif

#define DART_GPTR_ISNULL(gptr_)                \
  ((gptr_).unitid < 0 && (gptr_).segid == 0 && \
   (gptr_).teamid == DART_TEAM_NULL && (gptr_).addr_or_offs.offset == 0)

#define DART_GPTR_EQUAL(g1_, g2_)                                \
  ((g1_).unitid == (g2_).unitid && (g1_).segid == (g2_).segid && \
   (g1_).teamid == (g2_).teamid &&                               \
   (g1_).addr_or_offs.offset == (g2_).addr_or_offs.offset)

/* Segment id of dart_memalloc memory. */
#define DART_SEGMENT_LOCAL ((int16_t)0)

/* The local address `gptr` points to when it points into this unit's
 * memory, else NULL. */
dart_ret_t dart_gptr_getaddr(const dart_gptr_t gptr, void **addr);
/* Points `gptr` (keeping its unit, segment and team) at local address
 * `addr` inside this unit's part of the segment. */
dart_ret_t dart_gptr_setaddr(dart_gptr_t *gptr, void *addr);
/* Moves the offset by `offs` bytes. */
dart_ret_t dart_gptr_incaddr(dart_gptr_t *gptr, int64_t offs);
/* Points `gptr` at the same offset in another unit's part. */
dart_ret_t dart_gptr_setunit(dart_gptr_t *gptr, dart_team_unit_t unit);
/* The segment's flags (16 bits; the low 8 are also kept in gptr.flags). */
dart_ret_t dart_gptr_getflags(dart_gptr_t gptr, uint16_t *flags);
dart_ret_t dart_gptr_setflags(dart_gptr_t *gptr, uint16_t flags);

/* Not collective: `nelem` elements of `dtype` in this unit's part of the
 * global address space, reachable by every unit. The space grows as
 * needed. Zero elements give a valid, freeable pointer. */
dart_ret_t dart_memalloc(size_t nelem, dart_datatype_t dtype,
                         dart_gptr_t *gptr);
/* Frees dart_memalloc memory of this unit. DART_GPTR_NULL is ignored. */
dart_ret_t dart_memfree(dart_gptr_t gptr);

/* Collective over `teamid`: `nelem` elements of `dtype` on every unit, at
 * the same offset on each (symmetric and aligned), so any unit computes a
 * pointer to any unit's part locally. *gptr points to team unit 0's part. */
dart_ret_t dart_team_memalloc_aligned(dart_team_t teamid, size_t nelem,
                                      dart_datatype_t dtype, dart_gptr_t *gptr);
/* Collective: frees memory from dart_team_memalloc_aligned. */
dart_ret_t dart_team_memfree(dart_gptr_t gptr);

/* Collective: makes `nelem` elements at `addr` (same count on every unit)
 * a segment of the team; DART does not free it. */
dart_ret_t dart_team_memregister_aligned(dart_team_t teamid, size_t nelem,
                                         dart_datatype_t dtype, void *addr,
                                         dart_gptr_t *gptr);
/* Collective: like dart_team_memregister_aligned, but each unit may
 * register a different number of elements `nlelem`. */
dart_ret_t dart_team_memregister(dart_team_t teamid, size_t nlelem,
                                 dart_datatype_t dtype, void *addr,
                                 dart_gptr_t *gptr);
/* Ends a registration; the memory stays the caller's. Not collective (as
 * in DART-MPI): every unit of the team deregisters on its own, before it
 * frees the memory; DART drops its window when the last unit has. */
dart_ret_t dart_team_memderegister(dart_gptr_t gptr);

/* ---- Allocators: non-collective allocations from a team's pool. ---- */
typedef struct dart_allocator_struct *dart_allocator_t;

/* Collective over `team`: an allocator whose units each own a pool of
 * `pool_size` bytes (rounded up to a power of two). */
dart_ret_t dart_allocator_new(size_t pool_size, dart_team_t team,
                              dart_allocator_t *new_allocator);
/* Not collective: `nelem` elements of `dtype` from this unit's pool; any
 * unit of the team may access them through *gptr. DART_ERR_NOMEM when the
 * pool is exhausted. Thread-safe. */
dart_ret_t dart_allocator_alloc(size_t nelem, dart_datatype_t dtype,
                                dart_gptr_t *gptr, dart_allocator_t allocator);
/* Frees memory this unit allocated; sets *gptr to DART_GPTR_NULL. */
dart_ret_t dart_allocator_free(dart_gptr_t *gptr, dart_allocator_t allocator);
/* Collective over the allocator's team; sets *allocator to NULL. */
dart_ret_t dart_allocator_destroy(dart_allocator_t *allocator);

#ifdef __cplusplus
}
#endif

#endif /* DART_DART_GLOBMEM_H_ */
