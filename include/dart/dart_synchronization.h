/* DART: team-wide mutual exclusion. A lock is an MCS queue lock: units
 * acquire it in FIFO order; a waiting unit spins on a flag in its own
 * memory (on a node-local team a shared-memory word, no messages). The
 * queue tail of successive locks of a team lives on successive units. */
#ifndef DART_DART_SYNCHRONIZATION_H_
#define DART_DART_SYNCHRONIZATION_H_

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dart_lock_struct *dart_lock_t;

#define DART_LOCK_NULL ((dart_lock_t)NULL)

/* Collective over `teamid`. */
dart_ret_t dart_team_lock_init(dart_team_t teamid, dart_lock_t *lock);
/* Collective over the lock's team; sets *lock to NULL. */
dart_ret_t dart_team_lock_destroy(dart_lock_t *lock);
/* Blocks until this unit holds the lock. Not recursive: acquiring a lock
 * this unit holds returns DART_ERR_INVAL. */
dart_ret_t dart_lock_acquire(dart_lock_t lock);
/* *result = 1 if the lock was free and is now held, else 0. */
dart_ret_t dart_lock_try_acquire(dart_lock_t lock, int32_t *result);
/* Releases a lock this unit holds (else DART_ERR_INVAL). */
dart_ret_t dart_lock_release(dart_lock_t lock);
/* Whether `lock` is a live lock of dart_team_lock_init. */
bool dart_lock_initialized(struct dart_lock_struct const *lock);

#ifdef __cplusplus
}
#endif

#endif /* DART_DART_SYNCHRONIZATION_H_ */
