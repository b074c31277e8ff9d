/* rmashim's small C interface for programs and tools that want to know what
 * the shim does. Every function is exported by librmashim.so; look it up with
 * dlsym(RTLD_DEFAULT, ...) when the shim may or may not be preloaded. */
#ifndef RMASHIM_RMASHIM_H_
#define RMASHIM_RMASHIM_H_

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sets *flag to 1 when `win` is managed by the shim (node-local accesses go
 * through shared memory), 0 when every call on it passes through to MPI. */
int rmashim_win_is_managed(MPI_Win win, int *flag);

/* Sets *flag to 1 when this process reaches the window memory of `rank` (a
 * rank of the window's group) with loads, stores and CPU atomics: a
 * node-local target whose memory is mapped here. 0 when it goes through
 * cross-memory system calls (MPI_Win_create memory the shim could not
 * share), through MPI (another node), or the window is not managed.
 * MPI_ERR_RANK for a rank outside the group. */
int rmashim_win_target_mapped(MPI_Win win, int rank, int *flag);

/* Sets *id to the id by which `rank`'s agent knows the window (requests
 * name it so: shim/agent/agent_wire.h), or -1 where no agent serves the
 * window. For tests that forge requests. MPI_ERR_RANK for a rank outside
 * the group. */
int rmashim_win_agent_id(MPI_Win win, int rank, int *id);

/* Sets *count to the data-movement calls (put, get, the accumulate family)
 * this process has handed to MPI on `win` since it was created; 0 for a
 * window the shim does not manage (every call goes to MPI there). */
int rmashim_win_passed_to_mpi(MPI_Win win, long long *count);

/* Sets *running to 1 when this process runs the shim's agent (on a job that
 * spans nodes: it applies remote origins' accumulates to this process's
 * window memory, docs/how-it-works.md "Windows spanning nodes"), and
 * *applied to the operations it has applied so far. */
int rmashim_agent_stats(int *running, long long *applied);

/* Sets *granted to the passive-target locks (MPI_Win_lock, and one per
 * node for MPI_Win_lock_all) this process's agent has granted to remote
 * origins so far, in the shim's lock words (windows spanning nodes whose
 * every rank runs the agent, in a job that calls MPI from one thread). */
int rmashim_agent_lock_stats(long long *granted);

/* Sets *waiting to the remote origins' lock requests this process's agent
 * has queued until their turn in the lock words (as of its last pass). */
int rmashim_agent_locks_waiting(long long *waiting);

/* Sets *ops to the remote puts and gets this process started as one-sided
 * RMA of the agents' transport (UCX) rather than as agent requests. */
int rmashim_agent_rma_ops(long long *ops);

/* Sets *rejected to the requests this process's agent refused to apply
 * (a window that is not live, a range outside the target's memory, a type
 * or operation the window does not allow, a malformed request) or dropped
 * before looking at them (another job's token, a sender that is no rank of
 * this job). */
int rmashim_agent_rejected(long long *rejected);

/* Sets *yields to the times this process gave its core away inside MPI's
 * own waits so far: on a host with more ranks than the process has
 * processing units, a thread whose polls of MPI's progress engine (UCX's
 * worker progress, under MPICH's ch4:ucx) found nothing for a few
 * microseconds yields (docs/how-it-works.md "Oversubscribed hosts"); 0
 * elsewhere. */
int rmashim_mpi_progress_yields(long long *yields);

/* For tests of the agent's checks: sends `bytes` of `frames` (requests,
 * each a 4-byte length and that many bytes, in the format of
 * shim/agent/agent_state.h) to world rank `world_rank`'s agent as if from
 * world rank `claimed_origin`, with the job's token XORed with
 * `token_xor`. MPI_ERR_OTHER where no agent runs or it could not be sent. */
int rmashim_agent_send_forged(int world_rank, int claimed_origin,
                              unsigned long long token_xor, const void *frames,
                              size_t bytes);

/* For tests of failure handling: fails one of this process's agent links
 * as a network failure would. agent_end 0: its link to world rank
 * `world_rank`'s agent is shut down both ways (opened first where it was
 * not), so the next request on it fails; 1: this process's agent ends its
 * link from that process without the goodbye an orderly end sends. Epoch
 * ends and lock holders then see a lost link
 * (docs/how-it-works.md "Lost links"). MPI_ERR_OTHER where there was no
 * such link or no agent. */
int rmashim_agent_fail_link(int world_rank, int agent_end);

/* For tests: while `held` is 1, this process's agent thread serves
 * nothing and no blocking call serves in its place, so remote updates are
 * applied only where a fence or PSCW end serves what arrived for its agent
 * itself; release it before anything that needs the thread (a lock
 * request, a flush, MPI_Finalize). While `held` is 2, the thread alone is
 * held: the calls that wait in the shim or in MPI's blocking calls serve.
 * 0 releases it. MPI_ERR_OTHER where no agent runs, MPI_ERR_ARG for
 * another value. */
int rmashim_agent_hold(int held);

/* This rank's place in the machine as seen at MPI_Init: the node (world rank
 * of its first rank), rank and size within the node, NUMA domain and core
 * (logical hwloc indices, -1 when unknown). */
typedef struct {
  int node_id;
  int node_rank;
  int node_size;
  int numa_domain;
  int core;
} rmashim_locality_t;

int rmashim_get_locality(rmashim_locality_t *out);

#ifdef __cplusplus
}
#endif

#endif /* RMASHIM_RMASHIM_H_ */
