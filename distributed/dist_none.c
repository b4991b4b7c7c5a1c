/* The transport of a build without MPI (distributed/transport.h): one
 * process, rank 0 of 1, nothing ever sent. A device list naming a task
 * above 0 is refused by the session (executor/session_dist.c). */
#include "tgc.h"

#include "distributed/transport.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_uint_fast64_t next_session;
static _Atomic double peer_timeout = 60.0;

int tgc_dist_rank(void) { return 0; }
int tgc_dist_size(void) { return 1; }
uint64_t tgc_dist_next_session(void) { return atomic_fetch_add(&next_session, 1); }
void tgc_dist_set_peer_timeout(double seconds) { atomic_store(&peer_timeout, seconds); }
double tgc_dist_peer_timeout(void) { return atomic_load(&peer_timeout); }

int tgc_dist_task_of(const char *name) {
    if (name == NULL || strncmp(name, "/task:", 6) != 0) return 0;
    return atoi(name + 6);
}

tgc_status tgc_dist_step_begin(uint64_t step, tgc_rendezvous *r, tgc_dist_abort_fn on_abort, void *ctx) {
    (void)step, (void)r, (void)on_abort, (void)ctx;
    return TGC_OK;
}

void tgc_dist_step_end(uint64_t step) { (void)step; }

tgc_status tgc_dist_send(int dest, uint64_t step, const char *key, const tgc_value *v, char *err, size_t err_size) {
    (void)dest, (void)step, (void)key, (void)v;
    snprintf(err, err_size, "this tgc was built without MPI (TGC_MPI)");
    return TGC_ERR_RUNTIME;
}

void tgc_dist_abort_peers(uint64_t step, tgc_status status, const char *message) {
    (void)step, (void)status, (void)message;
}

tgc_status tgc_dist_allgather(const void *mine, size_t size, void *all, double timeout_s, char *err,
                              size_t err_size) {
    (void)timeout_s, (void)err, (void)err_size;
    memcpy(all, mine, size);
    return TGC_OK;
}

tgc_status tgc_distributed_init(tgc_diags *diags) {
    (void)diags;
    return TGC_OK;
}

int tgc_distributed_rank(void) { return 0; }
int tgc_distributed_size(void) { return 1; }
int tgc_distributed_available(void) { return 0; }
void tgc_distributed_finalize(int failed) { (void)failed; }
