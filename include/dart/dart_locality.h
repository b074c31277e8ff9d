/* DART: where units run (host, NUMA domain, core), from hwloc. */
#ifndef DART_DART_LOCALITY_H_
#define DART_DART_LOCALITY_H_

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DART_LOCALITY_HOST_MAX_SIZE ((int)(30))
#define DART_LOCALITY_DOMAIN_TAG_MAX_SIZE ((int)(32))

/* Hardware a unit runs on; -1 where unknown. */
typedef struct {
  char host[DART_LOCALITY_HOST_MAX_SIZE]; /* host name (truncated) */
  int num_cores;   /* cores on the host */
  int num_numa;    /* NUMA domains on the host */
  int numa_id;     /* the unit's NUMA domain (hwloc logical index) */
  int core_id;     /* the unit's core (hwloc logical index) */
  int cpu_id;      /* the unit's processing unit (OS index) */
  int min_threads; /* hardware threads per core */
  int max_threads;
} dart_hwinfo_t;

typedef struct {
  dart_team_unit_t unit; /* relative to `team` */
  dart_team_t team;
  dart_hwinfo_t hwinfo;
  /* ".<node>.<numa>": node index (in order of the nodes' first units) and
   * NUMA domain. */
  char domain_tag[DART_LOCALITY_DOMAIN_TAG_MAX_SIZE];
} dart_unit_locality_t;

/* Locality of team unit `unit`; *loc points into DART's storage, valid
 * until the team is destroyed. */
dart_ret_t dart_unit_locality(dart_team_t team, dart_team_unit_t unit,
                              dart_unit_locality_t **loc);

#ifdef __cplusplus
}
#endif

#endif /* DART_DART_LOCALITY_H_ */
