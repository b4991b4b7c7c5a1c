/* The remote half of the rendezvous: _Send/_Recv pairs whose devices are
 * in different processes (tasks, MPI ranks) become messages. Private to
 * the library; the public side is tgc.h's tgc_distributed_*.
 *
 * The local rendezvous does not change: a _Send whose receiver is on
 * another task hands its value to tgc_dist_send instead of the rendezvous;
 * the receiving process's transport puts the value into that step's
 * rendezvous (tgc_rendezvous_send) under the pair's key, where the _Recv
 * finds it as it would a local one. Steps are matched by their id: the
 * session's number among the process's distributed sessions
 * (tgc_dist_next_session) in the high bits, the session's step id
 * (tgc_session_next_step_id: 1, 2, 3... in the order the steps start) in
 * the low 40; every rank creates the same sessions and starts the same
 * steps in the same order, so ids agree across ranks.
 *
 * Two builds: distributed/mpi_transport.c (OpenMPI; its opening comment
 * has the message format) and distributed/dist_none.c, where one process
 * runs (rank 0 of 1) and nothing is ever sent.
 *
 * Example usage (executor/step.c):
 *     uint64_t step = session_number << 40 | session_step_id;
 *     tgc_dist_step_begin(step, rendezvous, on_peer_abort, st);
 *     ... tgc_dist_send(1, step, "cpu0;/task:1/cpu0;x", &value) ...
 *     tgc_dist_step_end(step);
 */
#ifndef TGC_DISTRIBUTED_TRANSPORT_H
#define TGC_DISTRIBUTED_TRANSPORT_H

#include "devices/kernel.h"
#include "partition/rendezvous.h"

#include <stdint.h>

/* Called (on the transport's thread) when a peer aborts step `step`, or
 * when a peer has been silent past the peer timeout while the step ran:
 * `message` says which rank and why ("rank 1: node 'relu' (Relu) on
 * /task:1/cpu0: ..."), `status` the peer's (TGC_ERR_RUNTIME, ...). */
typedef void (*tgc_dist_abort_fn)(void *ctx, tgc_status status, const char *message);

/* This process's rank and the number of processes: 0 and 1 until
 * tgc_distributed_init has run under mpirun (or in a build without MPI). */
int tgc_dist_rank(void);
int tgc_dist_size(void);

/* The number of this process's next distributed session (0, 1, 2... in
 * call order; thread safe). */
uint64_t tgc_dist_next_session(void);

/* Registers step `step` and its rendezvous: messages of the step that
 * arrived before (held by the transport) are put into `r` now, on this
 * thread; later ones on the transport's thread. An abort a peer sent for
 * the step calls on_abort (now, when it came already). TGC_OK, or
 * TGC_ERR_NOMEM. */
tgc_status tgc_dist_step_begin(uint64_t step, tgc_rendezvous *r, tgc_dist_abort_fn on_abort, void *ctx);

/* Unregisters the step: once it returns, the transport touches neither its
 * rendezvous nor its context again. Messages for it that come later are
 * dropped. */
void tgc_dist_step_end(uint64_t step);

/* Pushes `v` (a tensor in host memory, not a list or strings) under `key`
 * of step `step` to rank `dest` (!= this rank). Takes a reference to
 * v->buf, released once the last piece is sent: the caller may release its
 * own at once. Never waits. TGC_OK; TGC_ERR_INVALID (a list, strings, a
 * key longer than TGC_DIST_MAX_KEY, a rank out of range: message in err);
 * TGC_ERR_RUNTIME (the transport failed or is not running); TGC_ERR_NOMEM. */
#define TGC_DIST_MAX_KEY 700
tgc_status tgc_dist_send(int dest, uint64_t step, const char *key, const tgc_value *v, char *err, size_t err_size);

/* Tells every other rank that step `step` failed with `status` and
 * `message` (cut at 1000 bytes). Never waits. */
void tgc_dist_abort_peers(uint64_t step, tgc_status status, const char *message);

/* Every rank gives `size` bytes at `mine`; all[r * size ...] receives rank
 * r's, on every rank (MPI_Allgather). Waits at most timeout_s seconds.
 * TGC_OK; TGC_ERR_RUNTIME with a message in err (a rank did not answer in
 * time, MPI failed). With one process, copies mine into all. */
tgc_status tgc_dist_allgather(const void *mine, size_t size, void *all, double timeout_s, char *err,
                              size_t err_size);

/* The peer timeout: a registered step fails when a peer has sent nothing
 * (not even the transport's heartbeat, every quarter of it) for this many
 * seconds. <= 0: never. The default is 60 s. */
void tgc_dist_set_peer_timeout(double seconds);
double tgc_dist_peer_timeout(void);

/* The task of a device name ("/task:2/cpu0" -> 2, "cpu0" -> 0). */
int tgc_dist_task_of(const char *device_name);

#endif
