/* The MPI transport (distributed/transport.h): one progress thread per
 * process owns every MPI call, on a duplicate of MPI_COMM_WORLD whose
 * errors return (MPI_ERRORS_RETURN) instead of killing the process. MPI is
 * started at MPI_THREAD_SERIALIZED: only that thread calls it (TensorFlow's
 * MPI rendezvous did the same; its author found MPI_THREAD_MULTIPLE
 * unstable). Other threads hand it work through a queue.
 *
 * The message format. Every message starts with a header, a fixed-size
 * struct (dist_header below, sizeof bytes of MPI_BYTE, tag TAG_HEADER,
 * received from any source):
 *     magic 'TGC1', kind, sender's rank, step id, status,
 *     DATA:   dtype, rank, dims[8], bytes, data tag, key (NUL-terminated)
 *     ABORT:  status and the failing rank's message
 *     BEAT:   nothing (a heartbeat, sent every quarter of the peer timeout)
 * A DATA header is followed by the tensor's bytes in pieces of at most
 * 1 GiB (MPI counts are int; MPI 3.1 has no large-count calls), each a
 * message of its own on the header's data tag, in order. Data tags are
 * 1 + (a per-destination counter mod 2^20): the receiver posts the
 * pieces' receives on that tag as soon as it reads the header, so pieces
 * never match another transfer's receive.
 *
 * Who sends first: the sender. It pushes each value as soon as its _Send
 * runs, with no request from the receiver (TensorFlow's MPI rendezvous made
 * the receiver ask first: a round trip per tensor). A value that arrives
 * before its step started here is held, and put into the step's rendezvous
 * when the step registers (TensorFlow's gRPC rendezvous does the same).
 *
 * Abort: a failing step sends ABORT to every peer; a peer's step fails with
 * the message (naming the rank, node and device). A peer that sends
 * nothing at all for the peer timeout fails the running steps too, so a
 * rank that died or stopped never leaves the others waiting.
 *
 * Buffers: a sent value keeps a reference to its buffer until the last
 * piece's MPI_Isend completes; a received one lands in a new host buffer.
 *
 * The thread polls (MPI_Test), yielding the core between rounds while
 * there is work, and sleeps up to 1 ms when there is none: a busy loop
 * would compete with the devices' thread pools. */
#include "tgc.h"

#include "distributed/transport.h"
#include "devices/device.h"
#include "support/alloc.h"
#include "support/diag.h"
#include "support/settings.h"

#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_HEADER 0
#define DATA_TAGS (1 << 20)
#define PIECE_BYTES T.piece_bytes /* 1 GiB; $TGC_MPI_PIECE_BYTES in tests */
#define DIST_MAGIC 0x31434754u /* "TGC1" */

enum { KIND_DATA = 1, KIND_ABORT = 2, KIND_BEAT = 3 };

typedef struct dist_header {
    uint32_t magic, kind;
    int32_t from, status;
    uint64_t step;
    int32_t dtype, rank;
    int64_t dims[8];
    int64_t bytes;
    int32_t data_tag, piece; /* DATA: the tag of its pieces, and their size (the last may be smaller) */
    char text[TGC_DIST_MAX_KEY + 324]; /* DATA: the key; ABORT: the message */
} dist_header;

_Static_assert(TGC_MAX_RANK <= 8, "the header holds 8 dims");

/* An outgoing message: a header and, for DATA, its pieces. */
typedef struct out_msg {
    struct out_msg *next;
    int dest;
    dist_header h;
    tgc_buffer *buf; /* DATA: the reference held until sent */
    MPI_Request *reqs;
    int n_reqs;
    bool started;
} out_msg;

/* An incoming value: its pieces' receives, then its delivery. */
typedef struct in_msg {
    struct in_msg *next;
    dist_header h;
    tgc_value v;
    MPI_Request *reqs;
    int n_reqs;
} in_msg;

/* A value or abort held for a step not (yet) registered here. */
typedef struct held {
    struct held *next;
    uint64_t step;
    bool abort;
    tgc_status status;
    char *key; /* DATA: owned; ABORT: the message */
    tgc_value v;
} held;

typedef struct reg_step {
    struct reg_step *next;
    uint64_t step;
    tgc_rendezvous *r;
    tgc_dist_abort_fn on_abort;
    void *ctx;
    bool aborted;
    int sends; /* DATA messages of the step not yet sent: their buffers are the step's */
} reg_step;

/* A collective asked of the thread (tgc_dist_allgather). */
typedef struct collective {
    bool barrier; /* MPI_Ibarrier instead */
    const void *mine;
    void *all;
    size_t size;
    double deadline, wait_s; /* wait_s: the time allowed, for the message */
    bool started, done;
    tgc_status status;
    char err[256];
    MPI_Request req;
} collective;

static struct {
    bool up;
    int rank, size;
    MPI_Comm comm;
    pthread_t thread;
    pthread_mutex_t lock; /* the queue, the collective, stop */
    pthread_cond_t wake, collective_done;
    out_msg *queue, *queue_tail;
    collective *coll;
    bool stop;
    atomic_bool failed;
    char failure[256];
    pthread_mutex_t steps_lock; /* steps and held; deliveries run under it */
    pthread_cond_t sent_cond;   /* a step's last send completed */
    reg_step *steps;
    held *held;
    atomic_uint_fast64_t next_session;
    _Atomic double peer_timeout;
    /* The thread's own */
    out_msg *sending;
    in_msg *receiving;
    dist_header in_header;
    MPI_Request header_req;
    double *last_heard; /* per rank, seconds */
    double last_beat;
    uint32_t *next_tag; /* per destination */
    /* Where received values land: a cpu device of the transport's own,
     * whose arena keeps its regions, so that a stream of large tensors
     * reuses memory instead of faulting fresh pages in every time (64 MiB:
     * 115 ms a round trip from plain host buffers, bench_mpi_pingpong).
     * Host memory: a cpu partition's _Recv takes the buffer as it is. */
    tgc_device *landing;
    size_t piece_bytes;
} T = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .wake = PTHREAD_COND_INITIALIZER,
       .collective_done = PTHREAD_COND_INITIALIZER,
       .steps_lock = PTHREAD_MUTEX_INITIALIZER,
       .sent_cond = PTHREAD_COND_INITIALIZER,
       .peer_timeout = 60.0,
       .piece_bytes = (size_t)1 << 30};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tgc_dist_rank(void) { return T.up ? T.rank : 0; }
int tgc_dist_size(void) { return T.up ? T.size : 1; }
uint64_t tgc_dist_next_session(void) { return atomic_fetch_add(&T.next_session, 1); }
void tgc_dist_set_peer_timeout(double seconds) { atomic_store(&T.peer_timeout, seconds); }
double tgc_dist_peer_timeout(void) { return atomic_load(&T.peer_timeout); }

int tgc_dist_task_of(const char *name) {
    if (name == NULL || strncmp(name, "/task:", 6) != 0) return 0;
    return atoi(name + 6);
}

/* ---- Steps and held messages (any thread, under steps_lock) ----------------- */

static reg_step *find_step(uint64_t step) {
    for (reg_step *s = T.steps; s != NULL; s = s->next)
        if (s->step == step) return s;
    return NULL;
}

static void abort_step(reg_step *s, tgc_status status, const char *message) {
    if (s->aborted) return;
    s->aborted = true;
    s->on_abort(s->ctx, status, message);
}

/* A value or abort for `step`: to its rendezvous, or held. Takes over
 * v->buf's reference and `key`. */
static void deliver(uint64_t step, bool abort, tgc_status status, char *key, tgc_value *v) {
    pthread_mutex_lock(&T.steps_lock);
    reg_step *s = find_step(step);
    if (s != NULL) {
        if (abort) abort_step(s, status, key);
        else tgc_rendezvous_send(s->r, key, v); /* an aborted rendezvous drops it */
        tgc_buffer_release(v != NULL ? v->buf : NULL);
        tgc_free(key);
    } else {
        held *h = tgc_calloc(1, sizeof *h);
        if (h != NULL) {
            *h = (held){T.held, step, abort, status, key, {0}};
            if (v != NULL) h->v = *v;
            T.held = h;
        } else {
            tgc_buffer_release(v != NULL ? v->buf : NULL);
            tgc_free(key);
        }
    }
    pthread_mutex_unlock(&T.steps_lock);
}

tgc_status tgc_dist_step_begin(uint64_t step, tgc_rendezvous *r, tgc_dist_abort_fn on_abort, void *ctx) {
    reg_step *s = tgc_calloc(1, sizeof *s);
    if (s == NULL) return TGC_ERR_NOMEM;
    *s = (reg_step){NULL, step, r, on_abort, ctx, false, 0};
    pthread_mutex_lock(&T.steps_lock);
    s->next = T.steps;
    T.steps = s;
    /* Its held messages, oldest first (the list is newest first). */
    held *mine = NULL;
    for (held **p = &T.held; *p != NULL;) {
        held *h = *p;
        if (h->step != step) {
            p = &h->next;
            continue;
        }
        *p = h->next;
        h->next = mine;
        mine = h;
    }
    for (held *h = mine, *next; h != NULL; h = next) {
        next = h->next;
        if (h->abort) abort_step(s, h->status, h->key);
        else tgc_rendezvous_send(r, h->key, &h->v);
        tgc_buffer_release(h->v.buf);
        tgc_free(h->key);
        tgc_free(h);
    }
    if (T.up && T.failed) abort_step(s, TGC_ERR_RUNTIME, T.failure);
    pthread_mutex_unlock(&T.steps_lock);
    return TGC_OK;
}

void tgc_dist_step_end(uint64_t step) {
    pthread_mutex_lock(&T.steps_lock);
    /* The step's buffers are its own to release once this returns: wait
     * for its sends (at most the peer timeout: a peer that died never
     * takes a large message, and the process is failing then). */
    reg_step *me = find_step(step);
    double timeout = tgc_dist_peer_timeout();
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout > 0 ? (time_t)timeout + 1 : 1000000000;
    while (me != NULL && me->sends > 0 && !T.failed)
        if (pthread_cond_timedwait(&T.sent_cond, &T.steps_lock, &until) != 0) break;
    for (reg_step **p = &T.steps; *p != NULL; p = &(*p)->next)
        if ((*p)->step == step) {
            reg_step *s = *p;
            *p = s->next;
            tgc_free(s);
            break;
        }
    pthread_mutex_unlock(&T.steps_lock);
}

void tgc_dist_abort_peers(uint64_t step, tgc_status status, const char *message);

/* Fails every registered step (the transport broke, or a peer went
 * silent), and tells the peers that can still hear. */
static void abort_all(const char *message) {
    uint64_t ids[64];
    int n = 0;
    pthread_mutex_lock(&T.steps_lock);
    for (reg_step *s = T.steps; s != NULL; s = s->next) {
        if (!s->aborted && n < 64) ids[n++] = s->step;
        abort_step(s, TGC_ERR_RUNTIME, message);
    }
    pthread_mutex_unlock(&T.steps_lock);
    for (int i = 0; i < n && !T.failed; i++) tgc_dist_abort_peers(ids[i], TGC_ERR_RUNTIME, message);
}

static bool any_step(void) {
    pthread_mutex_lock(&T.steps_lock);
    bool any = T.steps != NULL;
    pthread_mutex_unlock(&T.steps_lock);
    return any;
}

/* ---- The queue (any thread) -------------------------------------------------- */

static void enqueue(out_msg *m) {
    pthread_mutex_lock(&T.lock);
    if (T.queue_tail != NULL) T.queue_tail->next = m;
    else T.queue = m;
    T.queue_tail = m;
    pthread_cond_signal(&T.wake);
    pthread_mutex_unlock(&T.lock);
}

tgc_status tgc_dist_send(int dest, uint64_t step, const char *key, const tgc_value *v, char *err, size_t err_size) {
    if (!T.up || T.failed) {
        pthread_mutex_lock(&T.lock);
        snprintf(err, err_size, "the MPI transport is not running%s%s", T.failed ? ": " : "", T.failure);
        pthread_mutex_unlock(&T.lock);
        return TGC_ERR_RUNTIME;
    }
    if (dest < 0 || dest >= T.size || dest == T.rank) {
        snprintf(err, err_size, "no rank %d to send to (%d processes run)", dest, T.size);
        return TGC_ERR_INVALID;
    }
    if (tgc_value_is_list(v) || v->dtype == TGC_STRING) {
        snprintf(err, err_size, "%s cannot cross processes (only tensors of numbers and bools do)",
                 tgc_value_is_list(v) ? "a sequence or an optional" : "a string tensor");
        return TGC_ERR_INVALID;
    }
    if (strlen(key) >= TGC_DIST_MAX_KEY) {
        snprintf(err, err_size, "its key is longer than %d bytes", TGC_DIST_MAX_KEY - 1);
        return TGC_ERR_INVALID;
    }
    size_t nbytes = tgc_value_nbytes(v);
    if (nbytes == SIZE_MAX || (nbytes > 0 && tgc_buffer_host_ptr(v->buf) == NULL)) {
        snprintf(err, err_size, "the value is not in host memory");
        return TGC_ERR_INVALID;
    }
    out_msg *m = tgc_calloc(1, sizeof *m);
    if (m == NULL) return TGC_ERR_NOMEM;
    m->dest = dest;
    m->h = (dist_header){.magic = DIST_MAGIC, .kind = KIND_DATA, .from = T.rank, .step = step,
                         .dtype = (int32_t)v->dtype, .rank = v->rank, .bytes = (int64_t)nbytes};
    memcpy(m->h.dims, v->dims, sizeof(int64_t) * (size_t)v->rank);
    snprintf(m->h.text, sizeof m->h.text, "%s", key);
    m->buf = nbytes > 0 ? tgc_buffer_retain(v->buf) : NULL;
    pthread_mutex_lock(&T.steps_lock);
    reg_step *s = find_step(step);
    if (s != NULL) s->sends++;
    pthread_mutex_unlock(&T.steps_lock);
    enqueue(m);
    return TGC_OK;
}

void tgc_dist_abort_peers(uint64_t step, tgc_status status, const char *message) {
    if (!T.up) return;
    for (int r = 0; r < T.size; r++) {
        if (r == T.rank) continue;
        out_msg *m = tgc_calloc(1, sizeof *m);
        if (m == NULL) return;
        m->dest = r;
        m->h = (dist_header){.magic = DIST_MAGIC, .kind = KIND_ABORT, .from = T.rank, .step = step, .status = status};
        snprintf(m->h.text, sizeof m->h.text, "%.1000s", message);
        enqueue(m);
    }
}

/* Collectives that timed out: MPI may still complete them, so they are
 * never freed (kept reachable here). */
static collective *abandoned[8];
static int n_abandoned;

static void abandon(collective *c) {
    if (n_abandoned < 8) abandoned[n_abandoned++] = c;
}

/* Runs collective c on the progress thread and waits for it. */
static tgc_status run_collective(collective *c, char *err, size_t err_size);

tgc_status tgc_dist_allgather(const void *mine, size_t size, void *all, double timeout_s, char *err,
                              size_t err_size) {
    if (!T.up || T.size == 1) {
        memcpy(all, mine, size);
        return TGC_OK;
    }
    if (size > INT32_MAX) {
        snprintf(err, err_size, "an exchange of %zu bytes is too large", size);
        return TGC_ERR_INVALID;
    }
    collective *c = tgc_calloc(1, sizeof *c);
    if (c == NULL) return TGC_ERR_NOMEM;
    *c = (collective){.mine = mine, .all = all, .size = size, .deadline = now_s() + timeout_s, .wait_s = timeout_s};
    tgc_status st = run_collective(c, err, err_size);
    if (st == TGC_OK) tgc_free(c);
    else abandon(c); /* one that timed out stays: MPI may still complete it */
    return st;
}

static tgc_status run_collective(collective *c, char *err, size_t err_size) {
    pthread_mutex_lock(&T.lock);
    while (T.coll != NULL) pthread_cond_wait(&T.collective_done, &T.lock); /* one at a time */
    T.coll = c;
    pthread_cond_signal(&T.wake);
    while (!c->done) pthread_cond_wait(&T.collective_done, &T.lock);
    pthread_mutex_unlock(&T.lock);
    if (c->status != TGC_OK) snprintf(err, err_size, "%s", c->err);
    return c->status;
}

/* ---- The progress thread ------------------------------------------------------- */

static void mpi_error(const char *what, int code) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    pthread_mutex_lock(&T.lock);
    if (!T.failed) snprintf(T.failure, sizeof T.failure, "rank %d: MPI failed in %.60s: %.160s", T.rank, what, text);
    T.failed = true;
    pthread_mutex_unlock(&T.lock);
    abort_all(T.failure);
    pthread_mutex_lock(&T.steps_lock);
    pthread_cond_broadcast(&T.sent_cond);
    pthread_mutex_unlock(&T.steps_lock);
}

/* Posts the receive of the next header. */
static bool post_header(void) {
    int rc = MPI_Irecv(&T.in_header, (int)sizeof T.in_header, MPI_BYTE, MPI_ANY_SOURCE, TAG_HEADER, T.comm,
                       &T.header_req);
    if (rc != MPI_SUCCESS) mpi_error("MPI_Irecv", rc);
    return rc == MPI_SUCCESS;
}

/* Pieces of `piece` bytes, the last one smaller; the sender chooses the
 * size and the header carries it. */
static int n_pieces(int64_t bytes, size_t piece) { return bytes == 0 ? 0 : (int)(((size_t)bytes + piece - 1) / piece); }

static void start_send(out_msg *m) {
    m->started = true;
    size_t piece = PIECE_BYTES;
    int pieces = m->h.kind == KIND_DATA ? n_pieces(m->h.bytes, piece) : 0;
    if (m->h.kind == KIND_DATA) {
        m->h.data_tag = 1 + (int32_t)(T.next_tag[m->dest]++ % DATA_TAGS);
        m->h.piece = (int32_t)piece;
    }
    m->reqs = tgc_malloc(sizeof *m->reqs * (size_t)(pieces + 1));
    if (m->reqs == NULL) {
        mpi_error("a send (out of memory)", MPI_ERR_NO_MEM);
        return;
    }
    int rc = MPI_Isend(&m->h, (int)sizeof m->h, MPI_BYTE, m->dest, TAG_HEADER, T.comm, &m->reqs[0]);
    m->n_reqs = 1;
    const char *data = m->buf != NULL ? tgc_buffer_host_ptr(m->buf) : NULL;
    for (int i = 0; rc == MPI_SUCCESS && i < pieces; i++) {
        size_t off = (size_t)i * piece, len = (size_t)m->h.bytes - off;
        if (len > piece) len = piece;
        rc = MPI_Isend(data + off, (int)len, MPI_BYTE, m->dest, m->h.data_tag, T.comm, &m->reqs[m->n_reqs]);
        if (rc == MPI_SUCCESS) m->n_reqs++;
    }
    if (rc != MPI_SUCCESS) mpi_error("MPI_Isend", rc);
}

/* A header arrived: DATA posts its pieces' receives, the others are handled now. */
static void on_header(const dist_header *h) {
    if (h->from >= 0 && h->from < T.size) T.last_heard[h->from] = now_s();
    if (h->magic != DIST_MAGIC) {
        mpi_error("a message from another program or version (bad magic)", MPI_ERR_OTHER);
        return;
    }
    if (h->kind == KIND_BEAT) return;
    if (h->kind == KIND_ABORT) {
        char *msg = tgc_strdup(h->text);
        deliver(h->step, true, (tgc_status)h->status, msg, NULL);
        return;
    }
    if (h->bytes < 0 || (h->bytes > 0 && h->piece <= 0) || h->rank < 0 || h->rank > TGC_MAX_RANK) {
        mpi_error("a malformed header", MPI_ERR_OTHER);
        return;
    }
    in_msg *m = tgc_calloc(1, sizeof *m);
    size_t piece = h->bytes > 0 ? (size_t)h->piece : 1;
    int pieces = n_pieces(h->bytes, piece);
    if (m != NULL) m->reqs = tgc_malloc(sizeof *m->reqs * (size_t)(pieces + 1));
    if (m == NULL || m->reqs == NULL) {
        if (m) tgc_free(m);
        mpi_error("a receive (out of memory)", MPI_ERR_NO_MEM);
        return;
    }
    m->h = *h;
    m->v.dtype = (tgc_dtype)h->dtype;
    m->v.rank = h->rank;
    memcpy(m->v.dims, h->dims, sizeof m->v.dims);
    char *data = NULL;
    if (tgc_buffer_alloc_typed(T.landing, m->v.dtype, (size_t)h->bytes, &m->v.buf) == TGC_OK)
        data = tgc_buffer_host_ptr(m->v.buf);
    for (int i = 0; i < pieces; i++) {
        size_t off = (size_t)i * piece, len = (size_t)h->bytes - off;
        if (len > piece) len = piece;
        /* Out of memory: the pieces are still taken off the wire (truncated into nothing). */
        int rc = MPI_Irecv(data ? data + off : NULL, data ? (int)len : 0, MPI_BYTE, h->from, h->data_tag, T.comm,
                           &m->reqs[m->n_reqs]);
        if (rc != MPI_SUCCESS) {
            mpi_error("MPI_Irecv", rc);
            break;
        }
        m->n_reqs++;
    }
    m->next = T.receiving;
    T.receiving = m;
}

/* All of m's requests done? (Errors: truncation of an undeliverable value is expected.) */
static bool requests_done(MPI_Request *reqs, int n, bool *error) {
    int flag = 0;
    int rc = MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) *error = true;
    return flag || rc != MPI_SUCCESS;
}

static bool progress_receives(void) {
    bool moved = false;
    for (in_msg **p = &T.receiving; *p != NULL;) {
        in_msg *m = *p;
        bool error = false;
        if (!requests_done(m->reqs, m->n_reqs, &error)) {
            p = &m->next;
            continue;
        }
        *p = m->next;
        moved = true;
        if (m->v.buf == NULL) {
            char msg[512];
            snprintf(msg, sizeof msg, "rank %d: out of host memory receiving '%.300s' (%lld bytes) from rank %d", T.rank,
                     m->h.text, (long long)m->h.bytes, m->h.from);
            deliver(m->h.step, true, TGC_ERR_NOMEM, tgc_strdup(msg), NULL);
        } else if (error) {
            mpi_error("receiving a tensor", MPI_ERR_OTHER);
            tgc_buffer_release(m->v.buf);
        } else {
            deliver(m->h.step, false, TGC_OK, tgc_strdup(m->h.text), &m->v);
        }
        tgc_free(m->reqs);
        tgc_free(m);
    }
    return moved;
}

/* A DATA message left (or was dropped): its step may end. */
static void sent(const out_msg *m) {
    if (m->h.kind != KIND_DATA) return;
    pthread_mutex_lock(&T.steps_lock);
    reg_step *s = find_step(m->h.step);
    if (s != NULL && s->sends > 0 && --s->sends == 0) pthread_cond_broadcast(&T.sent_cond);
    pthread_mutex_unlock(&T.steps_lock);
}

static bool progress_sends(void) {
    bool moved = false;
    for (out_msg **p = &T.sending; *p != NULL;) {
        out_msg *m = *p;
        bool error = false;
        if (m->n_reqs > 0 && !requests_done(m->reqs, m->n_reqs, &error)) {
            p = &m->next;
            continue;
        }
        *p = m->next;
        moved = true;
        if (error) mpi_error("sending a tensor", MPI_ERR_OTHER);
        tgc_buffer_release(m->buf);
        sent(m);
        tgc_free(m->reqs);
        tgc_free(m);
    }
    return moved;
}

static void progress_collective(void) {
    pthread_mutex_lock(&T.lock);
    collective *c = T.coll;
    pthread_mutex_unlock(&T.lock);
    if (c == NULL) return;
    int rc = MPI_SUCCESS, flag = 0;
    if (!c->started) {
        c->started = true;
        rc = c->barrier ? MPI_Ibarrier(T.comm, &c->req)
                        : MPI_Iallgather(c->mine, (int)c->size, MPI_BYTE, c->all, (int)c->size, MPI_BYTE, T.comm, &c->req);
    }
    if (rc == MPI_SUCCESS) rc = MPI_Test(&c->req, &flag, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !flag && now_s() < c->deadline) return;
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        snprintf(c->err, sizeof c->err, "MPI_Iallgather failed: %.200s", text);
    } else if (!flag) {
        snprintf(c->err, sizeof c->err, "not every rank answered within %.0f s (one failed before it, died or hangs)",
                 c->wait_s);
    }
    /* A collective that timed out is left pending: MPI cannot cancel it, and the process is about to fail. */
    pthread_mutex_lock(&T.lock);
    c->status = rc == MPI_SUCCESS && flag ? TGC_OK : TGC_ERR_RUNTIME;
    c->done = true;
    T.coll = NULL;
    pthread_cond_broadcast(&T.collective_done);
    pthread_mutex_unlock(&T.lock);
}

/* A heartbeat to every peer each quarter of the peer timeout, always (a
 * peer may wait in a step while this rank is busy elsewhere, loading its
 * feeds); while steps run here, they fail when a peer has been silent for
 * the whole timeout. */
static void heartbeats(bool stepping) {
    double timeout = tgc_dist_peer_timeout(), t = now_s();
    if (timeout <= 0) return;
    if (t - T.last_beat >= timeout / 4) {
        T.last_beat = t;
        for (int r = 0; r < T.size; r++) {
            if (r == T.rank) continue;
            out_msg *m = tgc_calloc(1, sizeof *m);
            if (m == NULL) break;
            m->dest = r;
            m->h = (dist_header){.magic = DIST_MAGIC, .kind = KIND_BEAT, .from = T.rank};
            m->next = T.sending;
            T.sending = m;
            start_send(m);
        }
    }
    for (int r = 0; stepping && r < T.size; r++) {
        if (r == T.rank || t - T.last_heard[r] < timeout) continue;
        char msg[256];
        snprintf(msg, sizeof msg, "rank %d: no message from rank %d for %.0f s: it died or stopped (--peer-timeout)",
                 T.rank, r, timeout);
        abort_all(msg);
        T.last_heard[r] = t; /* once per timeout */
    }
}

static void *progress_main(void *arg) {
    (void)arg;
    int idle = 0;
    for (;;) {
        pthread_mutex_lock(&T.lock);
        out_msg *fresh = T.queue;
        T.queue = T.queue_tail = NULL;
        bool stop = T.stop;
        pthread_mutex_unlock(&T.lock);
        bool moved = fresh != NULL;
        while (fresh != NULL) {
            out_msg *m = fresh;
            fresh = m->next;
            m->next = T.sending;
            T.sending = m;
            if (!T.failed) start_send(m);
        }
        if (stop && T.sending == NULL) break;
        if (!T.failed) {
            int flag = 0;
            int rc = MPI_Test(&T.header_req, &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) mpi_error("MPI_Test", rc);
            else if (flag) {
                dist_header h = T.in_header;
                moved = true;
                if (post_header()) on_header(&h);
            }
            moved |= progress_receives();
            moved |= progress_sends();
            progress_collective();
            heartbeats(any_step());
        } else {
            /* Broken: drop what waits; collectives fail at once. */
            for (out_msg *m = T.sending, *next; m != NULL; m = next) {
                next = m->next;
                tgc_buffer_release(m->buf);
                sent(m);
                tgc_free(m->reqs);
                tgc_free(m);
            }
            T.sending = NULL;
            pthread_mutex_lock(&T.lock);
            if (T.coll != NULL) {
                snprintf(T.coll->err, sizeof T.coll->err, "%s", T.failure);
                T.coll->status = TGC_ERR_RUNTIME;
                T.coll->done = true;
                T.coll = NULL;
                pthread_cond_broadcast(&T.collective_done);
            }
            pthread_mutex_unlock(&T.lock);
            if (stop) break;
        }
        if (moved) {
            idle = 0;
            continue;
        }
        /* Nothing moved: yield while work is in flight, else sleep (woken by the queue). */
        pthread_mutex_lock(&T.lock);
        bool collective = T.coll != NULL;
        pthread_mutex_unlock(&T.lock);
        bool busy = T.sending != NULL || T.receiving != NULL || collective || any_step();
        if (busy && ++idle < 20000) {
            sched_yield();
            continue;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long wait_ns = busy ? 50000 : 1000000;
        until.tv_nsec += wait_ns;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_mutex_lock(&T.lock);
        if (T.queue == NULL && !T.stop && T.coll == NULL) pthread_cond_timedwait(&T.wake, &T.lock, &until);
        pthread_mutex_unlock(&T.lock);
    }
    return NULL;
}

/* ---- Start and stop (tgc.h) --------------------------------------------------- */

tgc_status tgc_distributed_init(tgc_diags *diags) {
    if (T.up) return TGC_OK;
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    int rc = inited ? MPI_Query_thread(&provided) : MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS || provided < MPI_THREAD_SERIALIZED)
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "mpi-failed",
                              "MPI could not start with MPI_THREAD_SERIALIZED (got level %d)", provided);
    /* Test hook: smaller pieces, so that tests cross piece boundaries with small tensors. */
    T.piece_bytes = (size_t)tgc_settings_current()->mpi_piece_bytes; /* 1 GiB unless set */
    MPI_Comm_dup(MPI_COMM_WORLD, &T.comm);
    MPI_Comm_set_errhandler(T.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(T.comm, &T.rank);
    MPI_Comm_size(T.comm, &T.size);
    T.last_heard = tgc_calloc((size_t)T.size, sizeof *T.last_heard);
    T.next_tag = tgc_calloc((size_t)T.size, sizeof *T.next_tag);
    T.landing = tgc_backend_open_host(0);
    if (T.last_heard == NULL || T.next_tag == NULL || T.landing == NULL) return TGC_ERR_NOMEM;
    snprintf(T.landing->name, sizeof T.landing->name, "mpi-received");
    for (int r = 0; r < T.size; r++) T.last_heard[r] = now_s();
    T.up = true;
    if (!post_header()) return TGC_ERR_RUNTIME;
    if (pthread_create(&T.thread, NULL, progress_main, NULL) != 0) {
        T.up = false;
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "mpi-failed", "cannot start MPI's progress thread");
    }
    return TGC_OK;
}

int tgc_distributed_rank(void) { return tgc_dist_rank(); }
int tgc_distributed_size(void) { return tgc_dist_size(); }
int tgc_distributed_available(void) { return 1; }

void tgc_distributed_finalize(int failed) {
    if (!T.up) return;
    if (failed) {
        /* Every rank that failed cleanly arrives here at once: wait for the
         * others so that mpirun, which ends the job at the first non-zero
         * exit, cuts no rank's report. A rank may be slow to learn of the
         * failure (an oversubscribed machine, a sanitizer), so the wait is
         * the peer timeout, as long as any message from a peer is awaited;
         * at least 5 s, and 60 s where the timeout is off (0): one rank may
         * have died or hang. */
        collective *c = tgc_calloc(1, sizeof *c);
        char err[256];
        double timeout = tgc_dist_peer_timeout();
        double wait_s = timeout <= 0 ? 60.0 : timeout < 5.0 ? 5.0 : timeout;
        if (c != NULL) {
            *c = (collective){.barrier = true, .deadline = now_s() + wait_s, .wait_s = wait_s};
            if (run_collective(c, err, sizeof err) == TGC_OK) tgc_free(c);
            else abandon(c);
        }
    }
    pthread_mutex_lock(&T.lock);
    T.stop = true;
    pthread_cond_signal(&T.wake);
    pthread_mutex_unlock(&T.lock);
    if (failed) {
        /* Give the abort messages a moment to leave, and the peers a moment
         * to report their side (every rank that failed cleanly arrives at
         * once), then go without MPI_Finalize, which would wait for a peer
         * that died or hangs: mpirun ends the job. At least FORWARD_S:
         * mpirun forwards each rank's stderr as it comes, and the first exit
         * ends the job, so a report written just before could be lost (one
         * rank's line was, once in many runs of three ranks over TCP). */
        const double FORWARD_S = 0.3;
        double start = now_s(), until = start + 2.0;
        while (now_s() < until) {
            pthread_mutex_lock(&T.lock);
            bool sent = T.queue == NULL;
            pthread_mutex_unlock(&T.lock);
            if (sent && now_s() >= start + FORWARD_S) break;
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        }
        pthread_detach(T.thread); /* it may be stuck in a send to a dead peer: the process exits around it */
        return;
    }
    pthread_join(T.thread, NULL);
    if (T.header_req != MPI_REQUEST_NULL) {
        MPI_Cancel(&T.header_req);
        MPI_Request_free(&T.header_req);
    }
    MPI_Comm_free(&T.comm);
    MPI_Finalize();
    pthread_mutex_lock(&T.steps_lock);
    for (held *h = T.held, *next; h != NULL; h = next) {
        next = h->next;
        tgc_buffer_release(h->v.buf);
        tgc_free(h->key);
        tgc_free(h);
    }
    T.held = NULL;
    pthread_mutex_unlock(&T.steps_lock);
    tgc_free(T.last_heard);
    tgc_free(T.next_tag);
    tgc_device_release(T.landing); /* every value received is released by now: sessions end first */
    T.up = false;
}
