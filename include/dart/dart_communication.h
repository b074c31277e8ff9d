/* DART: one-sided communication, atomics, collectives and two-sided
 * messages. Node-local targets are reached through shared memory (a put is
 * a memcpy, an atomic a CPU atomic), remote ones through MPI RMA. */
#ifndef DART_DART_COMMUNICATION_H_
#define DART_DART_COMMUNICATION_H_

#include <dart/dart_globmem.h>
#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Collectives over a team (semantics of the MPI counterparts; basic
 * types only; roots are team-relative). ---- */
dart_ret_t dart_barrier(dart_team_t team);
dart_ret_t dart_bcast(void *buf, size_t nelem, dart_datatype_t dtype,
                      dart_team_unit_t root, dart_team_t team);
dart_ret_t dart_scatter(const void *sendbuf, void *recvbuf, size_t nelem,
                        dart_datatype_t dtype, dart_team_unit_t root,
                        dart_team_t team);
dart_ret_t dart_gather(const void *sendbuf, void *recvbuf, size_t nelem,
                       dart_datatype_t dtype, dart_team_unit_t root,
                       dart_team_t team);
dart_ret_t dart_allgather(const void *sendbuf, void *recvbuf, size_t nelem,
                          dart_datatype_t dtype, dart_team_t team);
/* nrecvelem[i] elements from team unit i land at recvbuf + recvdispls[i]
 * elements. */
dart_ret_t dart_allgatherv(const void *sendbuf, size_t nsendelem,
                           dart_datatype_t dtype, void *recvbuf,
                           const size_t *nrecvelem, const size_t *recvdispls,
                           dart_team_t teamid);
dart_ret_t dart_allreduce(const void *sendbuf, void *recvbuf, size_t nelem,
                          dart_datatype_t dtype, dart_operation_t op,
                          dart_team_t team);
dart_ret_t dart_alltoall(const void *sendbuf, void *recvbuf, size_t nelem,
                         dart_datatype_t dtype, dart_team_t team);
dart_ret_t dart_reduce(const void *sendbuf, void *recvbuf, size_t nelem,
                       dart_datatype_t dtype, dart_operation_t op,
                       dart_team_unit_t root, dart_team_t team);

/* ---- Atomics: element-wise atomic with respect to each other. ---- */
/* Non-blocking: complete at the next flush of the target. */
dart_ret_t dart_accumulate(dart_gptr_t gptr, const void *values, size_t nelem,
                           dart_datatype_t dtype, dart_operation_t op);
/* Returns when `values` may be reused. */
dart_ret_t dart_accumulate_blocking_local(dart_gptr_t gptr, const void *values,
                                          size_t nelem, dart_datatype_t dtype,
                                          dart_operation_t op);
/* *result = old value; target = old op *value. Blocking. */
dart_ret_t dart_fetch_and_op(dart_gptr_t gptr, const void *value, void *result,
                             dart_datatype_t dtype, dart_operation_t op);
/* If target == *compare then target = *value; *result = old value.
 * Integer types only. Blocking. */
dart_ret_t dart_compare_and_swap(dart_gptr_t gptr, const void *value,
                                 const void *compare, void *result,
                                 dart_datatype_t dtype);

/* ---- One-sided put/get. `nelem` counts base elements; src and dst types
 * must share their base type. ---- */
/* Non-blocking: complete (locally and at the target) at the next flush. */
dart_ret_t dart_get(void *dest, dart_gptr_t gptr, size_t nelem,
                    dart_datatype_t src_type, dart_datatype_t dst_type);
dart_ret_t dart_put(dart_gptr_t gptr, const void *src, size_t nelem,
                    dart_datatype_t src_type, dart_datatype_t dst_type);
/* Complete every put/get/accumulate on gptr's segment: to gptr's unit
 * (flush) or to all units (flush_all); the _local forms only make local
 * buffers reusable. */
dart_ret_t dart_flush(dart_gptr_t gptr);
dart_ret_t dart_flush_all(dart_gptr_t gptr);
dart_ret_t dart_flush_local(dart_gptr_t gptr);
dart_ret_t dart_flush_local_all(dart_gptr_t gptr);

/* A handle for one operation. Operations that complete at once (node-local
 * targets) yield DART_HANDLE_NULL, which every wait/test accepts as done.
 * Handles come from a pool; wait/test/free return them to it. */
typedef struct dart_handle_struct *dart_handle_t;
#define DART_HANDLE_NULL ((dart_handle_t)NULL)

dart_ret_t dart_get_handle(void *dest, dart_gptr_t gptr, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_handle_t *handle);
dart_ret_t dart_put_handle(dart_gptr_t gptr, const void *src, size_t nelem,
                           dart_datatype_t src_type, dart_datatype_t dst_type,
                           dart_handle_t *handle);
/* Local and remote completion; the handle becomes DART_HANDLE_NULL. */
dart_ret_t dart_wait(dart_handle_t *handle);
dart_ret_t dart_waitall(dart_handle_t handles[], size_t n);
/* Local completion only. */
dart_ret_t dart_wait_local(dart_handle_t *handle);
dart_ret_t dart_waitall_local(dart_handle_t handles[], size_t n);
/* *is_finished = 1 (and the handle is released) once complete. */
dart_ret_t dart_test(dart_handle_t *handle, int32_t *is_finished);
dart_ret_t dart_test_local(dart_handle_t *handle, int32_t *is_finished);
dart_ret_t dart_testall(dart_handle_t handles[], size_t n,
                        int32_t *is_finished);
dart_ret_t dart_testall_local(dart_handle_t handles[], size_t n,
                              int32_t *is_finished);
/* Releases the handle without waiting; the operation completes at the
 * next flush. */
dart_ret_t dart_handle_free(dart_handle_t *handle);

/* Complete (locally and remotely) on return. */
dart_ret_t dart_get_blocking(void *dest, dart_gptr_t gptr, size_t nelem,
                             dart_datatype_t src_type,
                             dart_datatype_t dst_type);
dart_ret_t dart_put_blocking(dart_gptr_t gptr, const void *src, size_t nelem,
                             dart_datatype_t src_type,
                             dart_datatype_t dst_type);

/* ---- Two-sided messages between global units (MPI semantics). ---- */
dart_ret_t dart_send(const void *sendbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit);
dart_ret_t dart_recv(void *recvbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit);
dart_ret_t dart_sendrecv(const void *sendbuf, size_t send_nelem,
                         dart_datatype_t send_dtype, int send_tag,
                         dart_global_unit_t dest, void *recvbuf,
                         size_t recv_nelem, dart_datatype_t recv_dtype,
                         int recv_tag, dart_global_unit_t src);

#ifdef __cplusplus
}
#endif

#endif /* DART_DART_COMMUNICATION_H_ */
