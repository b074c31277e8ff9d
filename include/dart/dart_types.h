/* DART: basic types of the DASH runtime interface (return codes, units,
 * teams, data types, reduction operations). */
#ifndef DART_DART_TYPES_H_
#define DART_DART_TYPES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What every DART function returns. */
typedef enum {
  DART_OK = 0,           /* success */
  DART_PENDING = 1,      /* an operation is still pending */
  DART_ERR_INVAL = 2,    /* invalid operation or argument */
  DART_ERR_NOTFOUND = 3, /* missing data (unknown unit, segment, ...) */
  DART_ERR_NOTINIT = 4,  /* DART is not initialized */
  DART_ERR_NOMEM = 5,    /* out of memory or out of identifiers */
  DART_ERR_OTHER = 999   /* anything else (the MPI layer failed) */
} dart_ret_t;

/* Exit codes of DART applications. */
enum {
  DART_EXIT_SUCCESS = EXIT_SUCCESS,
  DART_EXIT_ABORT = EXIT_FAILURE,
  DART_EXIT_ASSERT = -6
};

/* Reduction and accumulate operations: the predefined DART_OP_* values, or
 * a handle from dart_op_create. */
typedef uintptr_t dart_operation_t;
enum {
  DART_OP_UNDEFINED = 0,
  DART_OP_MIN,
  DART_OP_MAX,
  DART_OP_MINMAX, /* reductions only: elements are (min, max) pairs,
                     reduced to the smallest min and the largest max */
  DART_OP_SUM,
  DART_OP_PROD,
  DART_OP_BAND,
  DART_OP_LAND,
  DART_OP_BOR,
  DART_OP_LOR,
  DART_OP_BXOR,
  DART_OP_LXOR,
  DART_OP_REPLACE, /* accumulate / fetch-and-op only */
  DART_OP_NO_OP,   /* fetch-and-op only: read atomically */
  DART_OP_LAST     /* reserved: not an operation */
};

/* Positions within a DART_OP_MINMAX pair. */
#define DART_OP_MINMAX_MIN 0
#define DART_OP_MINMAX_MAX 1

/* A data type: one of the basic DART_TYPE_* values below, or a handle from
 * dart_type_create_strided / _indexed / _custom. */
typedef intptr_t dart_datatype_t;

#define DART_TYPE_UNDEFINED ((dart_datatype_t)0)
#define DART_TYPE_BYTE ((dart_datatype_t)1)
#define DART_TYPE_SHORT ((dart_datatype_t)2)
#define DART_TYPE_INT ((dart_datatype_t)3)
#define DART_TYPE_UINT ((dart_datatype_t)4)
#define DART_TYPE_LONG ((dart_datatype_t)5)
#define DART_TYPE_ULONG ((dart_datatype_t)6)
#define DART_TYPE_LONGLONG ((dart_datatype_t)7)
#define DART_TYPE_ULONGLONG ((dart_datatype_t)8)
#define DART_TYPE_FLOAT ((dart_datatype_t)9)
#define DART_TYPE_DOUBLE ((dart_datatype_t)10)
#define DART_TYPE_LONG_DOUBLE ((dart_datatype_t)11)
#define DART_TYPE_LAST ((dart_datatype_t)12) /* reserved: not a type */

#if SIZE_MAX == UINT64_MAX
#define DART_TYPE_SIZET DART_TYPE_ULONGLONG
#else
#define DART_TYPE_SIZET DART_TYPE_ULONG
#endif

/* A unit (process) id. */
typedef int32_t dart_unit_t;
#define DART_UNDEFINED_UNIT_ID ((dart_unit_t)(-1))

/* A unit id relative to DART_TEAM_ALL. */
typedef struct dart_global_unit {
#ifdef __cplusplus
  constexpr dart_global_unit() : id(DART_UNDEFINED_UNIT_ID) {}
  constexpr dart_global_unit(dart_unit_t uid) : id(uid) {}
#endif
  dart_unit_t id;
} dart_global_unit_t;

/* A unit id relative to some team. */
typedef struct dart_local_unit {
#ifdef __cplusplus
  constexpr dart_local_unit() : id(DART_UNDEFINED_UNIT_ID) {}
  constexpr dart_local_unit(dart_unit_t uid) : id(uid) {}
#endif
  dart_unit_t id;
} dart_team_unit_t;

static inline dart_team_unit_t dart_create_team_unit(dart_unit_t unit) {
  dart_team_unit_t u = {unit};
  return u;
}
static inline dart_global_unit_t dart_create_global_unit(dart_unit_t unit) {
  dart_global_unit_t u = {unit};
  return u;
}
#define DART_TEAM_UNIT_ID(u) (dart_create_team_unit(u))
#define DART_GLOBAL_UNIT_ID(u) (dart_create_global_unit(u))
#define DART_UNDEFINED_TEAM_UNIT_ID DART_TEAM_UNIT_ID(DART_UNDEFINED_UNIT_ID)
#define DART_UNDEFINED_GLOBAL_UNIT_ID \
  DART_GLOBAL_UNIT_ID(DART_UNDEFINED_UNIT_ID)

/* A team id. DART_TEAM_ALL holds every unit; DART_TEAM_NULL is no team. */
typedef int16_t dart_team_t;
#define DART_UNDEFINED_TEAM_ID ((dart_team_t)(-1))
#define DART_TEAM_ALL ((dart_team_t)0)
#define DART_TEAM_NULL ((dart_team_t)(-1))

/* Thread support (dart_init_thread). */
typedef enum {
  DART_THREAD_SINGLE = 0,
  DART_THREAD_MULTIPLE = 10
} dart_thread_support_level_t;

/* A strided type: blocks of `blocklen` elements of basic type `basetype`,
 * a block starting every `stride` elements. A transfer of n elements with
 * it moves n / blocklen blocks (n must be a multiple of blocklen). */
dart_ret_t dart_type_create_strided(dart_datatype_t basetype, size_t stride,
                                    size_t blocklen, dart_datatype_t *newtype);

/* An indexed type: `count` blocks, block i holding blocklen[i] elements at
 * element offset offset[i]. A transfer of n elements moves n / sum(blocklen)
 * instances, each max(offset[i] + blocklen[i]) elements wide. */
dart_ret_t dart_type_create_indexed(dart_datatype_t basetype, size_t count,
                                    const size_t blocklen[],
                                    const size_t offset[],
                                    dart_datatype_t *newtype);

/* A contiguous type of `num_bytes` opaque bytes (a C struct, say): put,
 * get, bcast, gather and the like move it as bytes; reductions need an
 * operation from dart_op_create. */
dart_ret_t dart_type_create_custom(size_t num_bytes, dart_datatype_t *newtype);

/* Frees a type from dart_type_create_*; sets *dart_type to
 * DART_TYPE_UNDEFINED. Basic types cannot be destroyed (DART_ERR_INVAL). */
dart_ret_t dart_type_destroy(dart_datatype_t *dart_type);

/* A user reduction: inoutvec[i] = invec[i] op inoutvec[i] for `len`
 * elements. */
typedef void (*dart_operator_t)(const void *invec, void *inoutvec, size_t len,
                                void *user_data);

/* Not collective: a reduction operation on elements of `dtype` for
 * dart_reduce / dart_allreduce (every unit of a reduction passes an
 * operation made the same way). `commute`: whether the order of operands
 * may change. `dtype` must be contiguous (basic or custom); `dtype_is_tmp`
 * only hints that it lives no longer than the operation (the caller still
 * destroys it). */
dart_ret_t dart_op_create(dart_operator_t op, void *userdata, bool commute,
                          dart_datatype_t dtype, bool dtype_is_tmp,
                          dart_operation_t *new_op);
/* Frees an operation from dart_op_create; sets *op to DART_OP_UNDEFINED. */
dart_ret_t dart_op_destroy(dart_operation_t *op);

/* ---- Locality (dart_locality.h has the functions). ---- */

/* Levels of the locality hierarchy, outermost first. This implementation
 * builds GLOBAL > NODE > MODULE > NUMA > CORE. */
typedef enum {
  DART_LOCALITY_SCOPE_UNDEFINED = -1,
  DART_LOCALITY_SCOPE_GLOBAL = 0,
  DART_LOCALITY_SCOPE_GROUP = 1,
  DART_LOCALITY_SCOPE_NETWORK = 50,
  DART_LOCALITY_SCOPE_NODE = 100,
  DART_LOCALITY_SCOPE_MODULE = 200,
  DART_LOCALITY_SCOPE_NUMA = 300,
  DART_LOCALITY_SCOPE_UNIT = 400,
  DART_LOCALITY_SCOPE_PACKAGE = 500,
  DART_LOCALITY_SCOPE_UNCORE = 510,
  DART_LOCALITY_SCOPE_CACHE = 530,
  DART_LOCALITY_SCOPE_CORE = 550,
  DART_LOCALITY_SCOPE_CPU = 600
} dart_locality_scope_t;

#define DART_LOCALITY_HOST_MAX_SIZE ((int)(64))
#define DART_LOCALITY_DOMAIN_TAG_MAX_SIZE ((int)(32))
#define DART_LOCALITY_MAX_DOMAIN_SCOPES ((int)(12))
#define DART_LOCALITY_UNIT_MAX_CPUS ((int)(64))
#define DART_LOCALITY_MAX_NUMA_ID ((int)(16))
#define DART_LOCALITY_MAX_CACHE_LEVELS ((int)(5))

/* One level of a unit's place: the scope and the index within it. */
typedef struct {
  dart_locality_scope_t scope;
  int index;
} dart_locality_scope_pos_t;

/* Hardware a unit runs on (from hwloc); -1 where unknown. */
typedef struct {
  char host[DART_LOCALITY_HOST_MAX_SIZE]; /* host name */
  int num_cores;                          /* cores on the host */
  int num_numa;                           /* NUMA domains on the host */
  int numa_id;     /* the unit's NUMA domain (hwloc logical index) */
  int num_sockets; /* packages on the host */
  int core_id;     /* the unit's core (hwloc logical index) */
  int cpu_id;      /* the unit's processing unit (OS index) */
  int min_cpu_mhz;
  int max_cpu_mhz;
  int cache_sizes[DART_LOCALITY_MAX_CACHE_LEVELS]; /* bytes, L1 first */
  int cache_line_sizes[DART_LOCALITY_MAX_CACHE_LEVELS];
  int cache_ids[DART_LOCALITY_MAX_CACHE_LEVELS];
  int min_threads; /* hardware threads per core */
  int max_threads;
  int max_shmem_mbps;      /* -1: not measured */
  int system_memory_bytes; /* MiB of the node (DART reports MiB here) */
  int numa_memory_bytes;   /* MiB of the unit's NUMA domain */
  /* The unit's place, innermost first: CORE, NUMA, MODULE, NODE. */
  dart_locality_scope_pos_t scopes[DART_LOCALITY_MAX_DOMAIN_SCOPES];
  int num_scopes;
} dart_hwinfo_t;

typedef struct {
  char host[DART_LOCALITY_HOST_MAX_SIZE];
  char module[DART_LOCALITY_HOST_MAX_SIZE];
  dart_locality_scope_pos_t pos;
} dart_module_location_t;

/* A node of a team's locality tree. Tags name domains by their path of
 * relative indices: "." is the root, ".1" node 1, ".1.0" its module,
 * ".1.0.0" a NUMA domain, ".1.0.0.3" a core. */
struct dart_domain_locality_s {
  char host[DART_LOCALITY_HOST_MAX_SIZE];
  char domain_tag[DART_LOCALITY_DOMAIN_TAG_MAX_SIZE];
  struct dart_domain_locality_s **aliases; /* unused (0 aliases) */
  int num_aliases;
  dart_locality_scope_t scope;
  int level;          /* depth in the tree, root 0 */
  int global_index;   /* index among the domains of its scope */
  int relative_index; /* index among its parent's children */
  struct dart_domain_locality_s *parent;
  int num_domains;
  struct dart_domain_locality_s **children;
  int is_symmetric;
  dart_team_t team;
  int num_units;
  dart_global_unit_t *unit_ids; /* global ids, ascending */
  int num_nodes;
  int node_id; /* node index, -1 above node level */
  int num_cores;
  int shared_mem_bytes;
};
typedef struct dart_domain_locality_s dart_domain_locality_t;

/* Where one unit of a team runs. */
typedef struct {
  dart_team_unit_t unit; /* relative to `team` */
  dart_team_t team;
  dart_hwinfo_t hwinfo;
  /* Tag of the unit's core domain in the team's locality tree. */
  char domain_tag[DART_LOCALITY_DOMAIN_TAG_MAX_SIZE];
} dart_unit_locality_t;

/* Runtime settings (dart_config). */
typedef struct {
  int log_enabled;
} dart_config_t;

#ifdef __cplusplus
}
#endif

#endif /* DART_DART_TYPES_H_ */
