/* libdart's own queries, beyond DASH's DART interface: what rmashim's core
 * did for this unit. Not part of DART; DASH does not call them. */
#ifndef DART_DART_RMASHIM_H_
#define DART_DART_RMASHIM_H_

#include <stdint.h>

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sets *running to 1 while this unit runs the core's agent (between
 * dart_init and dart_exit on a job spanning nodes, with RMASHIM_AGENT=1 or
 * auto, docs/dart.md "Atomics and locks across nodes"), and *applied to the
 * atomic operations of remote units its agent has applied since the
 * process started. DART_ERR_INVAL for a null pointer. */
dart_ret_t dart_rmashim_agent_stats(int32_t *running, int64_t *applied);

#ifdef __cplusplus
}
#endif

#endif /* DART_DART_RMASHIM_H_ */
