/* DART: start and stop the runtime. */
#ifndef DART_DART_INITIALIZATION_H_
#define DART_DART_INITIALIZATION_H_

#include <stdbool.h>

#include <dart/dart_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts DART (and MPI, unless the program initialized MPI already; DART
 * then leaves finalizing MPI to the program). Every other DART function
 * returns DART_ERR_NOTINIT before this and after dart_exit. */
dart_ret_t dart_init(int *argc, char ***argv);

/* dart_init, reporting the thread support DART provides in *thread_safety
 * (DART_THREAD_MULTIPLE when MPI provides MPI_THREAD_MULTIPLE; then any
 * thread may call DART, collectives on one team from one thread at a
 * time). */
dart_ret_t dart_init_thread(int *argc, char ***argv,
                            dart_thread_support_level_t *thread_safety);

/* Collective over all units: frees every team, segment and lock still
 * alive, then stops DART (and MPI if dart_init started it). */
dart_ret_t dart_exit(void);

/* Whether DART is initialized (between dart_init and dart_exit). */
bool dart_initialized(void);

/* Aborts all units with `errorcode`; does not return. */
void dart_abort(int errorcode) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif /* DART_DART_INITIALIZATION_H_ */
