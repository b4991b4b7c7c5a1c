/* The MPI transport (distributed/transport.h) on its own, under mpirun
 * with 2 or more ranks (tests/CMakeLists.txt runs it with 2 and 3, over
 * shared memory and TCP, with TGC_MPI_PIECE_BYTES=1000 so that small
 * tensors cross piece boundaries). Not a CUnit suite: every rank checks,
 * prints its failures and exits non-zero on any.
 *
 * Rank 0 pushes to every other rank, in one step each:
 *   - a float32 [7, 1429] tensor (40,012 bytes: 41 pieces of 1,000 and
 *     one of 12) whose element i is i * 0.5 - 3, checked element by element
 *     against that formula;
 *   - an int64 [2, 0, 3] tensor (no bytes: its dims must survive);
 *   - a bool [3] tensor sent before the receiver registered the step (held
 *     by the transport, delivered at registration).
 * Each other rank answers with an abort of a step of its own, whose
 * message rank 0's abort callback must receive. Sending strings, a key
 * that is too long, or to a rank that does not exist is refused. The
 * ranks also exchange their rank numbers with tgc_dist_allgather. */
#include "tgc.h"

#include "devices/device.h"
#include "distributed/transport.h"
#include "partition/rendezvous.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;
static int rank;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #cond);                  \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

typedef struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    tgc_status status;
    tgc_value v;
    char message[1100];
} waiter;

#define WAITER_INIT {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER}

static void arrived(void *ctx, tgc_status status, tgc_value *v) {
    waiter *w = ctx;
    pthread_mutex_lock(&w->lock);
    w->status = status;
    if (status == TGC_OK) w->v = *v;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static void aborted(void *ctx, tgc_status status, const char *message) {
    waiter *w = ctx;
    pthread_mutex_lock(&w->lock);
    w->status = status;
    snprintf(w->message, sizeof w->message, "%s", message);
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static void wait_done(waiter *w) {
    pthread_mutex_lock(&w->lock);
    while (!w->done) pthread_cond_wait(&w->cond, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

static void ignore_abort(void *ctx, tgc_status status, const char *message) {
    (void)ctx;
    fprintf(stderr, "rank %d: unexpected abort (%d): %s\n", rank, (int)status, message);
    failures++;
}

/* Receives keys[0..n) of `step` (registered now, once: a value that comes
 * while its step is registered goes into that step's rendezvous) into out[]. */
static tgc_status receive(uint64_t step, int n, const char *const *keys, tgc_value *out) {
    tgc_rendezvous *r;
    if (tgc_rendezvous_create(&r) != TGC_OK) return TGC_ERR_NOMEM;
    tgc_dist_step_begin(step, r, ignore_abort, NULL);
    tgc_status st = TGC_OK;
    for (int i = 0; i < n && st == TGC_OK; i++) {
        waiter w = WAITER_INIT;
        st = tgc_rendezvous_recv_async(r, keys[i], NULL, arrived, &w);
        if (st == TGC_OK) {
            wait_done(&w);
            st = w.status;
            out[i] = w.v;
        }
    }
    tgc_dist_step_end(step);
    tgc_rendezvous_free(r);
    return st;
}

static tgc_value host_tensor(tgc_dtype dt, int r, const int64_t *dims, size_t bytes) {
    tgc_value v = {.dtype = dt, .rank = r};
    memcpy(v.dims, dims, sizeof(int64_t) * (size_t)r);
    if (tgc_buffer_alloc(tgc_host_device(), bytes, &v.buf) != TGC_OK) abort();
    return v;
}

enum { ROWS = 7, COLS = 1429 };

static void rank0(int size) {
    char err[256];
    tgc_value f = host_tensor(TGC_FLOAT32, 2, (int64_t[]){ROWS, COLS}, sizeof(float) * ROWS * COLS);
    float *p = tgc_buffer_host_ptr(f.buf);
    for (int i = 0; i < ROWS * COLS; i++) p[i] = (float)i * 0.5f - 3.0f;
    tgc_value z = host_tensor(TGC_INT64, 3, (int64_t[]){2, 0, 3}, 0);
    tgc_value b = host_tensor(TGC_BOOL, 1, (int64_t[]){3}, 3);
    memcpy(tgc_buffer_host_ptr(b.buf), (bool[]){true, false, true}, 3);
    for (int peer = 1; peer < size; peer++) {
        uint64_t step = 100 + (uint64_t)peer;
        CHECK(tgc_dist_send(peer, step, "cpu0;/task:1/cpu0;f", &f, err, sizeof err) == TGC_OK);
        CHECK(tgc_dist_send(peer, step, "cpu0;/task:1/cpu0;z", &z, err, sizeof err) == TGC_OK);
        CHECK(tgc_dist_send(peer, 200 + (uint64_t)peer, "early", &b, err, sizeof err) == TGC_OK);
    }
    /* The caller's references may go at once: the transport holds its own. */
    tgc_buffer_release(f.buf);
    tgc_buffer_release(z.buf);
    tgc_buffer_release(b.buf);
    /* Each peer aborts step 300 + peer. */
    for (int peer = 1; peer < size; peer++) {
        tgc_rendezvous *r;
        CHECK(tgc_rendezvous_create(&r) == TGC_OK);
        waiter w = WAITER_INIT;
        tgc_dist_step_begin(300 + (uint64_t)peer, r, aborted, &w);
        wait_done(&w);
        char want[64];
        snprintf(want, sizeof want, "rank %d: boom", peer);
        CHECK(w.status == TGC_ERR_RUNTIME);
        CHECK(strcmp(w.message, want) == 0);
        tgc_dist_step_end(300 + (uint64_t)peer);
        tgc_rendezvous_free(r);
    }
    /* Refusals. */
    tgc_value s = {.dtype = TGC_STRING, .rank = 1, .dims = {1}};
    CHECK(tgc_buffer_alloc_strings(tgc_host_device(), 1, &s.buf) == TGC_OK);
    CHECK(tgc_dist_send(1, 1, "s", &s, err, sizeof err) == TGC_ERR_INVALID && strstr(err, "string") != NULL);
    tgc_buffer_release(s.buf);
    tgc_value e = host_tensor(TGC_FLOAT32, 1, (int64_t[]){0}, 0);
    char key[TGC_DIST_MAX_KEY + 8];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    CHECK(tgc_dist_send(1, 1, key, &e, err, sizeof err) == TGC_ERR_INVALID && strstr(err, "longer") != NULL);
    CHECK(tgc_dist_send(size, 1, "x", &e, err, sizeof err) == TGC_ERR_INVALID && strstr(err, "no rank") != NULL);
    CHECK(tgc_dist_send(0, 1, "x", &e, err, sizeof err) == TGC_ERR_INVALID);
    tgc_buffer_release(e.buf);
}

static void other_rank(void) {
    uint64_t step = 100 + (uint64_t)rank;
    tgc_value got[2] = {{0}}, b = {0};
    CHECK(receive(step, 2, (const char *[]){"cpu0;/task:1/cpu0;f", "cpu0;/task:1/cpu0;z"}, got) == TGC_OK);
    tgc_value f = got[0], z = got[1];
    CHECK(f.dtype == TGC_FLOAT32 && f.rank == 2 && f.dims[0] == ROWS && f.dims[1] == COLS);
    const float *p = f.buf != NULL ? tgc_buffer_host_ptr(f.buf) : NULL;
    int bad = 0;
    for (int i = 0; p != NULL && i < ROWS * COLS; i++) bad += p[i] != (float)i * 0.5f - 3.0f;
    CHECK(p != NULL && bad == 0);
    CHECK(z.dtype == TGC_INT64 && z.rank == 3 && z.dims[0] == 2 && z.dims[1] == 0 && z.dims[2] == 3);
    /* Registered late: the value waited in the transport. */
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
    CHECK(receive(200 + (uint64_t)rank, 1, (const char *[]){"early"}, &b) == TGC_OK);
    const bool *q = b.buf != NULL ? tgc_buffer_host_ptr(b.buf) : NULL;
    CHECK(q != NULL && b.dims[0] == 3 && q[0] && !q[1] && q[2]);
    tgc_buffer_release(f.buf);
    tgc_buffer_release(z.buf);
    tgc_buffer_release(b.buf);
    char msg[64];
    snprintf(msg, sizeof msg, "rank %d: boom", rank);
    tgc_dist_abort_peers(300 + (uint64_t)rank, TGC_ERR_RUNTIME, msg);
}

int main(void) {
    tgc_diags *d = tgc_diags_create();
    if (tgc_distributed_init(d) != TGC_OK) {
        tgc_diags_print(d, stderr);
        return 1;
    }
    tgc_diags_free(d);
    rank = tgc_distributed_rank();
    int size = tgc_distributed_size();
    if (size < 2) {
        fprintf(stderr, "run it with mpirun -np 2 (or more)\n");
        return 1;
    }
    int all[64] = {0};
    char err[256];
    CHECK(size <= 64);
    CHECK(tgc_dist_allgather(&rank, sizeof rank, all, 60, err, sizeof err) == TGC_OK);
    for (int r = 0; r < size && r < 64; r++) CHECK(all[r] == r);
    if (rank == 0) rank0(size);
    else other_rank();
    /* Everyone done before anyone finalizes (a barrier through the transport). */
    CHECK(tgc_dist_allgather(&rank, sizeof rank, all, 60, err, sizeof err) == TGC_OK);
    tgc_distributed_finalize(failures != 0);
    if (failures == 0) printf("rank %d: all checks passed\n", rank);
    return failures != 0;
}
