/* DART: basic types of the DASH runtime interface (return codes, units,
 * teams, data types, reduction operations). */
#ifndef DART_DART_TYPES_H_
#define DART_DART_TYPES_H_

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

/* Reduction and accumulate operations. */
typedef enum {
  DART_OP_UNDEFINED = 0,
  DART_OP_MIN,
  DART_OP_MAX,
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
  DART_OP_MINMAX   /* reductions only: elements are (min, max) pairs,
                      reduced to the smallest min and the largest max */
} dart_operation_t;

/* Positions within a DART_OP_MINMAX pair. */
#define DART_OP_MINMAX_MIN 0
#define DART_OP_MINMAX_MAX 1

/* A data type: one of the basic DART_TYPE_* values below, or a handle from
 * dart_type_create_strided / dart_type_create_indexed. */
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
                                    size_t blocklen,
                                    dart_datatype_t *newtype);

/* An indexed type: `count` blocks, block i holding blocklen[i] elements at
 * element offset offset[i]. A transfer of n elements moves n / sum(blocklen)
 * instances, each max(offset[i] + blocklen[i]) elements wide. */
dart_ret_t dart_type_create_indexed(dart_datatype_t basetype, size_t count,
                                    const size_t blocklen[],
                                    const size_t offset[],
                                    dart_datatype_t *newtype);

/* Frees a type from dart_type_create_*; sets *dart_type to
 * DART_TYPE_UNDEFINED. Basic types cannot be destroyed (DART_ERR_INVAL). */
dart_ret_t dart_type_destroy(dart_datatype_t *dart_type);

#ifdef __cplusplus
}
#endif

#endif /* DART_DART_TYPES_H_ */
