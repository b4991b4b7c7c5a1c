/* The rendezvous: send before recv and recv before send; host to host
 * shares the buffer, other moves copy (through a stand-in device whose
 * memory is not host memory, so no GPU is needed); a key sent or received
 * twice; 8 threads x 1000 keys at once (run it under ThreadSanitizer:
 * cmake -DTGC_TSAN=ON); abort with receivers waiting, and after; a failed
 * copy; and no buffer or block left behind whatever happens. */
#include "tests/harness.h"

#include "partition/rendezvous.h"
#include "support/alloc.h"

#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ---- a device whose memory is not host memory ------------------------------ */

static tgc_status far_alloc(tgc_device *d, size_t nbytes, void **mem) {
    (void)d;
    *mem = tgc_malloc(nbytes);
    return *mem ? TGC_OK : TGC_ERR_NOMEM;
}
static void far_free(tgc_device *d, void *mem) {
    (void)d;
    tgc_free(mem);
}
static void *far_host_ptr(tgc_device *d, void *mem) {
    (void)d;
    (void)mem;
    return NULL;
}
static tgc_status far_from_host(tgc_device *d, void *dst, size_t offset, const void *src, size_t nbytes) {
    (void)d;
    memcpy((char *)dst + offset, src, nbytes);
    return TGC_OK;
}
static tgc_status far_to_host(tgc_device *d, void *dst, void *src, size_t offset, size_t nbytes) {
    (void)d;
    memcpy(dst, (char *)src + offset, nbytes);
    return TGC_OK;
}
static tgc_status far_sync(tgc_device *d) {
    (void)d;
    return TGC_OK;
}
static void far_destroy(tgc_device *d) { tgc_free(d); }

static const tgc_device_ops far_ops = {.alloc = far_alloc,
                                       .free = far_free,
                                       .host_ptr = far_host_ptr,
                                       .copy_from_host = far_from_host,
                                       .copy_to_host = far_to_host,
                                       .synchronize = far_sync,
                                       .destroy = far_destroy};

/* "gpuN": a stand-in for an OpenCL device. */
static tgc_device *far_device(int index) {
    tgc_device *d = tgc_malloc(sizeof *d);
    tgc_device_init(d, &far_ops, TGC_DEVICE_GPU, index);
    return d;
}

/* ---- values ---------------------------------------------------------------------- */

/* A float32 [n] value on `d` holding base, base+1, ... */
static tgc_value make_value(tgc_device *d, int n, float base) {
    tgc_value v = {.dtype = TGC_FLOAT32, .rank = 1, .dims = {n}};
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(d, (size_t)n * sizeof(float), &v.buf), TGC_OK);
    float tmp[64];
    for (int i = 0; i < n && i < 64; i++) tmp[i] = base + (float)i;
    if (n > 0) d->ops->copy_from_host(d, v.buf->mem, 0, tmp, (size_t)n * sizeof(float));
    return v;
}

/* Element i of a value, wherever it lives. */
static float element(const tgc_value *v, int i) {
    float x = 0;
    v->buf->device->ops->copy_to_host(v->buf->device, &x, v->buf->mem, (size_t)i * sizeof x, sizeof x);
    return x;
}

static int64_t live(tgc_device *d) { return tgc_device_stats(d).live_buffers; }

/* What a callback saw. */
typedef struct got {
    int calls;
    tgc_status status;
    tgc_value v;
    bool had_value;
} got;

static void keep(void *ctx, tgc_status status, tgc_value *received) {
    got *g = ctx;
    g->calls++;
    g->status = status;
    g->had_value = received != NULL;
    if (received != NULL) g->v = *received;
}

/* ---- tests ------------------------------------------------------------------------ */

static void test_send_before_recv(void) {
    tgc_device *cpu0 = tgc_cpu_device_create(0);
    tgc_rendezvous *r;
    CU_ASSERT_EQUAL_FATAL(tgc_rendezvous_create(&r), TGC_OK);
    tgc_value v = make_value(cpu0, 4, 1.0f);
    CU_ASSERT_EQUAL(tgc_rendezvous_send(r, "cpu0;cpu1;a", &v), TGC_OK);
    CU_ASSERT_EQUAL(atomic_load(&v.buf->refs), 2); /* the rendezvous holds its own */
    int64_t sent, waiting;
    tgc_rendezvous_pending(r, &sent, &waiting);
    CU_ASSERT(sent == 1 && waiting == 0);
    tgc_buffer_release(v.buf); /* the sender is done with it */
    got g = {0};
    CU_ASSERT_EQUAL(tgc_rendezvous_recv_async(r, "cpu0;cpu1;a", NULL, keep, &g), TGC_OK);
    CU_ASSERT_EQUAL(g.calls, 1); /* the value was there: delivered at once */
    CU_ASSERT_EQUAL(g.status, TGC_OK);
    CU_ASSERT_PTR_EQUAL(g.v.buf, v.buf); /* host to host: the same buffer */
    CU_ASSERT(g.v.rank == 1 && g.v.dims[0] == 4 && g.v.dtype == TGC_FLOAT32);
    CU_ASSERT_EQUAL(element(&g.v, 3), 4.0f);
    tgc_rendezvous_pending(r, &sent, &waiting);
    CU_ASSERT(sent == 0 && waiting == 0);
    tgc_buffer_release(g.v.buf);
    CU_ASSERT_EQUAL(live(cpu0), 0);
    tgc_rendezvous_free(r);
    tgc_device_destroy(cpu0);
}

static void test_recv_before_send(void) {
    tgc_device *cpu0 = tgc_cpu_device_create(0), *cpu1 = tgc_cpu_device_create(1);
    tgc_rendezvous *r;
    CU_ASSERT_EQUAL_FATAL(tgc_rendezvous_create(&r), TGC_OK);
    got g = {0};
    CU_ASSERT_EQUAL(tgc_rendezvous_recv_async(r, "cpu0;cpu1;a", cpu1, keep, &g), TGC_OK);
    CU_ASSERT_EQUAL(g.calls, 0); /* nothing sent: it waits, nobody blocks */
    int64_t sent, waiting;
    tgc_rendezvous_pending(r, &sent, &waiting);
    CU_ASSERT(sent == 0 && waiting == 1);
    tgc_value v = make_value(cpu0, 8, 10.0f);
    CU_ASSERT_EQUAL(tgc_rendezvous_send(r, "cpu0;cpu1;a", &v), TGC_OK);
    CU_ASSERT_EQUAL(g.calls, 1); /* delivered on the sender's thread */
    CU_ASSERT_EQUAL(g.status, TGC_OK);
    CU_ASSERT_PTR_EQUAL(g.v.buf, v.buf); /* cpu0 -> cpu1: one memory, no copy */
    CU_ASSERT_EQUAL(element(&g.v, 7), 17.0f);
    tgc_buffer_release(v.buf);
    tgc_buffer_release(g.v.buf);
    CU_ASSERT_EQUAL(live(cpu0), 0);
    CU_ASSERT_EQUAL(live(cpu1), 0);
    tgc_rendezvous_free(r);
    tgc_device_destroy(cpu0);
    tgc_device_destroy(cpu1);
}

/* Host -> device, device -> host (a _HostRecv), device -> other device
 * (through the host), device -> same device (shared). */
static void test_moves_between_memories(void) {
    tgc_device *cpu0 = tgc_cpu_device_create(0), *gpu0 = far_device(0), *gpu1 = far_device(1);
    tgc_rendezvous *r;
    CU_ASSERT_EQUAL_FATAL(tgc_rendezvous_create(&r), TGC_OK);
    int64_t host_before = live(tgc_host_device());

    got to_gpu = {0}, to_host = {0}, to_gpu1 = {0}, same = {0};
    tgc_value h = make_value(cpu0, 5, 0.5f);
    tgc_rendezvous_recv_async(r, "cpu0;gpu0;h", gpu0, keep, &to_gpu);
    tgc_rendezvous_send(r, "cpu0;gpu0;h", &h);
    CU_ASSERT(to_gpu.calls == 1 && to_gpu.status == TGC_OK);
    CU_ASSERT_PTR_EQUAL(to_gpu.v.buf->device, gpu0);
    CU_ASSERT_PTR_NOT_EQUAL(to_gpu.v.buf, h.buf);
    CU_ASSERT_EQUAL(element(&to_gpu.v, 4), 4.5f);
    CU_ASSERT_EQUAL(atomic_load(&h.buf->refs), 1); /* the rendezvous let go of its reference */

    tgc_value gv = make_value(gpu0, 3, 7.0f);
    tgc_rendezvous_send(r, "gpu0;cpu0;g;host", &gv);
    tgc_rendezvous_send(r, "gpu0;gpu1;g", &gv);
    tgc_rendezvous_send(r, "gpu0;gpu0;g", &gv);
    tgc_rendezvous_recv_async(r, "gpu0;cpu0;g;host", NULL, keep, &to_host);
    tgc_rendezvous_recv_async(r, "gpu0;gpu1;g", gpu1, keep, &to_gpu1);
    tgc_rendezvous_recv_async(r, "gpu0;gpu0;g", gpu0, keep, &same);
    CU_ASSERT(to_host.status == TGC_OK && to_gpu1.status == TGC_OK && same.status == TGC_OK);
    CU_ASSERT_PTR_EQUAL(to_host.v.buf->device, tgc_host_device());
    CU_ASSERT_PTR_NOT_NULL(tgc_buffer_host_ptr(to_host.v.buf));
    CU_ASSERT_EQUAL(((const float *)tgc_buffer_host_ptr(to_host.v.buf))[2], 9.0f);
    CU_ASSERT_PTR_EQUAL(to_gpu1.v.buf->device, gpu1);
    CU_ASSERT_EQUAL(element(&to_gpu1.v, 1), 8.0f);
    CU_ASSERT_PTR_EQUAL(same.v.buf, gv.buf);
    /* The staging buffer of gpu0 -> gpu1 is gone already. */
    CU_ASSERT_EQUAL(live(tgc_host_device()), host_before + 1);

    tgc_buffer_release(h.buf);
    tgc_buffer_release(gv.buf);
    tgc_buffer_release(to_gpu.v.buf);
    tgc_buffer_release(to_host.v.buf);
    tgc_buffer_release(to_gpu1.v.buf);
    tgc_buffer_release(same.v.buf);
    CU_ASSERT_EQUAL(live(cpu0) + live(gpu0) + live(gpu1), 0);
    CU_ASSERT_EQUAL(live(tgc_host_device()), host_before);
    tgc_rendezvous_free(r);
    tgc_device_destroy(cpu0);
    tgc_device_destroy(gpu0);
    tgc_device_destroy(gpu1);
}

/* An empty tensor (a control pair's) and an omitted value move too. */
static void test_empty_values(void) {
    tgc_device *gpu0 = far_device(0);
    tgc_rendezvous *r;
    CU_ASSERT_EQUAL_FATAL(tgc_rendezvous_create(&r), TGC_OK);
    tgc_value e = {.dtype = TGC_BOOL, .rank = 1, .dims = {0}};
    CU_ASSERT_EQUAL_FATAL(tgc_buffer_alloc(gpu0, 0, &e.buf), TGC_OK);
    got g = {0};
    tgc_rendezvous_send(r, "gpu0;cpu0;^a", &e);
    tgc_rendezvous_recv_async(r, "gpu0;cpu0;^a", NULL, keep, &g);
    CU_ASSERT(g.calls == 1 && g.status == TGC_OK && g.v.dims[0] == 0 && g.v.dtype == TGC_BOOL);
    tgc_buffer_release(g.v.buf);
    tgc_buffer_release(e.buf);
    tgc_value none = {.dtype = TGC_DTYPE_INVALID};
    got n = {0};
    tgc_rendezvous_send(r, "k", &none);
    tgc_rendezvous_recv_async(r, "k", gpu0, keep, &n);
    CU_ASSERT(n.calls == 1 && n.status == TGC_OK && n.v.buf == NULL);
    CU_ASSERT_EQUAL(live(gpu0), 0);
    tgc_rendezvous_free(r);
    tgc_device_destroy(gpu0);
}

static void test_key_twice(void) {
    tgc_device *cpu0 = tgc_cpu_device_create(0);
    tgc_rendezvous *r;
    CU_ASSERT_EQUAL_FATAL(tgc_rendezvous_create(&r), TGC_OK);
    tgc_value v = make_value(cpu0, 2, 0);
    CU_ASSERT_EQUAL(tgc_rendezvous_send(r, "a", &v), TGC_OK);
    CU_ASSERT_EQUAL(tgc_rendezvous_send(r, "a", &v), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(atomic_load(&v.buf->refs), 2); /* the refused send took nothing */
    got g1 = {0}, g2 = {0};
    CU_ASSERT_EQUAL(tgc_rendezvous_recv_async(r, "b", NULL, keep, &g1), TGC_OK);
    CU_ASSERT_EQUAL(tgc_rendezvous_recv_async(r, "b", NULL, keep, &g2), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(g2.calls, 0);
    tgc_rendezvous_send(r, "b", &v);
    CU_ASSERT_EQUAL(g1.calls, 1);
    tgc_buffer_release(g1.v.buf);
    tgc_buffer_release(v.buf);
    tgc_rendezvous_free(r); /* "a" was never received: released here */
    CU_ASSERT_EQUAL(live(cpu0), 0);
    tgc_device_destroy(cpu0);
}

/* ---- many threads -------------------------------------------------------------------- */

#define THREADS 8
#define KEYS 1000

typedef struct shared {
    tgc_rendezvous *r;
    tgc_device *dev[THREADS];
    atomic_int delivered, wrong;
} shared;

typedef struct worker {
    shared *s;
    int t;
} worker;

static void check_and_release(void *ctx, tgc_status status, tgc_value *v) {
    shared *s = ctx;
    if (status != TGC_OK || v == NULL) {
        atomic_fetch_add(&s->wrong, 1);
        return;
    }
    /* Element 0 is the key's number, element 1 its sender. */
    const float *p = tgc_buffer_host_ptr(v->buf);
    if (p == NULL || p[1] < 0 || p[1] >= THREADS) atomic_fetch_add(&s->wrong, 1);
    tgc_buffer_release(v->buf);
    atomic_fetch_add(&s->delivered, 1);
}

/* Thread t sends its KEYS keys and receives the KEYS keys of thread t+1,
 * interleaved, so both orders (send first, recv first) happen. */
static void *work(void *arg) {
    worker *w = arg;
    shared *s = w->s;
    int peer = (w->t + 1) % THREADS;
    char key[64];
    for (int k = 0; k < KEYS; k++) {
        tgc_value v = {.dtype = TGC_FLOAT32, .rank = 1, .dims = {2}};
        if (tgc_buffer_alloc(s->dev[w->t], 2 * sizeof(float), &v.buf) != TGC_OK) {
            atomic_fetch_add(&s->wrong, 1);
            continue;
        }
        float *p = tgc_buffer_host_ptr(v.buf);
        p[0] = (float)k;
        p[1] = (float)w->t;
        snprintf(key, sizeof key, "cpu%d;cpu%d;t%d/%d", w->t, peer, w->t, k);
        if (tgc_rendezvous_send(s->r, key, &v) != TGC_OK) atomic_fetch_add(&s->wrong, 1);
        tgc_buffer_release(v.buf);
        int from = (w->t + THREADS - 1) % THREADS;
        snprintf(key, sizeof key, "cpu%d;cpu%d;t%d/%d", from, w->t, from, k);
        if (tgc_rendezvous_recv_async(s->r, key, s->dev[w->t], check_and_release, s) != TGC_OK)
            atomic_fetch_add(&s->wrong, 1);
    }
    return NULL;
}

static void test_many_threads(void) {
    shared s = {0};
    CU_ASSERT_EQUAL_FATAL(tgc_rendezvous_create(&s.r), TGC_OK);
    for (int t = 0; t < THREADS; t++) s.dev[t] = tgc_cpu_device_create(t);
    pthread_t th[THREADS];
    worker w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t] = (worker){&s, t};
        CU_ASSERT_EQUAL(pthread_create(&th[t], NULL, work, &w[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    CU_ASSERT_EQUAL(atomic_load(&s.delivered), THREADS * KEYS);
    CU_ASSERT_EQUAL(atomic_load(&s.wrong), 0);
    int64_t sent, waiting;
    tgc_rendezvous_pending(s.r, &sent, &waiting);
    CU_ASSERT(sent == 0 && waiting == 0);
    tgc_rendezvous_free(s.r);
    for (int t = 0; t < THREADS; t++) {
        CU_ASSERT_EQUAL(live(s.dev[t]), 0);
        tgc_device_destroy(s.dev[t]);
    }
}

/* ---- abort ------------------------------------------------------------------------------ */

static void test_abort_with_pending_receivers(void) {
    tgc_device *cpu0 = tgc_cpu_device_create(0), *gpu0 = far_device(0);
    tgc_rendezvous *r;
    CU_ASSERT_EQUAL_FATAL(tgc_rendezvous_create(&r), TGC_OK);
    got g[3] = {{0}};
    tgc_rendezvous_recv_async(r, "cpu0;gpu0;a", gpu0, keep, &g[0]);
    tgc_rendezvous_recv_async(r, "cpu0;gpu0;b", gpu0, keep, &g[1]);
    tgc_rendezvous_recv_async(r, "gpu0;cpu0;c;host", NULL, keep, &g[2]);
    tgc_value unread = make_value(cpu0, 16, 0);
    tgc_rendezvous_send(r, "cpu0;gpu0;never_read", &unread);
    tgc_buffer_release(unread.buf);
    CU_ASSERT_EQUAL(live(cpu0), 1); /* held by the rendezvous */
    CU_ASSERT_EQUAL(tgc_rendezvous_status(r), TGC_OK);

    tgc_rendezvous_abort(r, TGC_ERR_RUNTIME, "node 'conv1' (Conv) on gpu0: kernel failed");
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(g[i].calls, 1);
        CU_ASSERT_EQUAL(g[i].status, TGC_ERR_RUNTIME);
        CU_ASSERT(!g[i].had_value);
    }
    CU_ASSERT_EQUAL(live(cpu0), 0); /* the unread value went at the abort */
    CU_ASSERT_EQUAL(tgc_rendezvous_status(r), TGC_ERR_RUNTIME);
    CU_ASSERT_STRING_EQUAL(tgc_rendezvous_message(r), "node 'conv1' (Conv) on gpu0: kernel failed");

    /* After the abort: receivers fail at once, sends are refused. */
    got late = {0};
    CU_ASSERT_EQUAL(tgc_rendezvous_recv_async(r, "cpu0;gpu0;z", gpu0, keep, &late), TGC_OK);
    CU_ASSERT(late.calls == 1 && late.status == TGC_ERR_RUNTIME && !late.had_value);
    tgc_value v = make_value(cpu0, 4, 0);
    CU_ASSERT_EQUAL(tgc_rendezvous_send(r, "cpu0;gpu0;a", &v), TGC_ERR_RUNTIME);
    CU_ASSERT_EQUAL(atomic_load(&v.buf->refs), 1);
    tgc_buffer_release(v.buf);
    /* A second abort changes nothing. */
    tgc_rendezvous_abort(r, TGC_ERR_NOMEM, "later");
    CU_ASSERT_EQUAL(tgc_rendezvous_status(r), TGC_ERR_RUNTIME);
    CU_ASSERT_STRING_EQUAL(tgc_rendezvous_message(r), "node 'conv1' (Conv) on gpu0: kernel failed");
    tgc_rendezvous_free(r);
    CU_ASSERT_EQUAL(live(cpu0) + live(gpu0), 0);
    tgc_device_destroy(cpu0);
    tgc_device_destroy(gpu0);
}

/* Threads receiving and sending while another aborts: every accepted
 * receive gets exactly one callback, and nothing is left behind. */
typedef struct abort_shared {
    tgc_rendezvous *r;
    tgc_device *dev;
    atomic_int accepted, called, ok, failed;
} abort_shared;

static void count_callback(void *ctx, tgc_status status, tgc_value *v) {
    abort_shared *s = ctx;
    atomic_fetch_add(&s->called, 1);
    if (status == TGC_OK) {
        atomic_fetch_add(&s->ok, 1);
        tgc_buffer_release(v->buf);
    } else {
        atomic_fetch_add(&s->failed, 1);
    }
}

typedef struct abort_worker {
    abort_shared *s;
    int t;
} abort_worker;

static void *abort_work(void *arg) {
    abort_worker *w = arg;
    abort_shared *s = w->s;
    char key[64];
    for (int k = 0; k < KEYS; k++) {
        snprintf(key, sizeof key, "%d/%d", w->t, k);
        if (tgc_rendezvous_recv_async(s->r, key, NULL, count_callback, s) == TGC_OK)
            atomic_fetch_add(&s->accepted, 1);
        if (k % 2 == 0) { /* half the keys are sent */
            tgc_value v = {.dtype = TGC_FLOAT32, .rank = 1, .dims = {1}};
            if (tgc_buffer_alloc(s->dev, sizeof(float), &v.buf) == TGC_OK) {
                tgc_rendezvous_send(s->r, key, &v);
                tgc_buffer_release(v.buf);
            }
        }
        if (w->t == 0 && k == KEYS / 2) tgc_rendezvous_abort(s->r, TGC_ERR_RUNTIME, "stop");
    }
    return NULL;
}

static void test_abort_from_a_thread(void) {
    abort_shared s = {0};
    CU_ASSERT_EQUAL_FATAL(tgc_rendezvous_create(&s.r), TGC_OK);
    s.dev = tgc_cpu_device_create(0);
    pthread_t th[4];
    abort_worker w[4];
    for (int t = 0; t < 4; t++) {
        w[t] = (abort_worker){&s, t};
        pthread_create(&th[t], NULL, abort_work, &w[t]);
    }
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    CU_ASSERT_EQUAL(atomic_load(&s.accepted), 4 * KEYS);
    CU_ASSERT_EQUAL(atomic_load(&s.called), 4 * KEYS);
    CU_ASSERT(atomic_load(&s.failed) >= 4 * KEYS / 2); /* at least every unsent key */
    CU_ASSERT_EQUAL(tgc_rendezvous_status(s.r), TGC_ERR_RUNTIME);
    tgc_rendezvous_free(s.r);
    CU_ASSERT_EQUAL(live(s.dev), 0);
    tgc_device_destroy(s.dev);
}

/* A rendezvous freed with a receiver still waiting and values unread:
 * the receiver hears of it, the values go. */
static void test_free_without_abort(void) {
    tgc_device *cpu0 = tgc_cpu_device_create(0);
    tgc_rendezvous *r;
    CU_ASSERT_EQUAL_FATAL(tgc_rendezvous_create(&r), TGC_OK);
    for (int i = 0; i < 200; i++) { /* enough to grow the table */
        char key[32];
        snprintf(key, sizeof key, "k%d", i);
        tgc_value v = make_value(cpu0, 1, (float)i);
        tgc_rendezvous_send(r, key, &v);
        tgc_buffer_release(v.buf);
    }
    got g = {0};
    tgc_rendezvous_recv_async(r, "waits", NULL, keep, &g);
    got h = {0};
    tgc_rendezvous_recv_async(r, "k150", NULL, keep, &h);
    CU_ASSERT(h.calls == 1 && element(&h.v, 0) == 150.0f);
    tgc_buffer_release(h.v.buf);
    CU_ASSERT_EQUAL(live(cpu0), 199);
    tgc_rendezvous_free(r);
    CU_ASSERT(g.calls == 1 && g.status == TGC_ERR_RUNTIME);
    CU_ASSERT_EQUAL(live(cpu0), 0);
    tgc_device_destroy(cpu0);
}

/* The receiver's device is out of memory: its callback gets the error, and
 * the sent value is released all the same. */
static void test_copy_fails(void) {
    tgc_device *cpu0 = tgc_cpu_device_create(0), *gpu0 = far_device(0);
    tgc_device_set_limit(gpu0, 8);
    tgc_rendezvous *r;
    CU_ASSERT_EQUAL_FATAL(tgc_rendezvous_create(&r), TGC_OK);
    got g = {0};
    tgc_value v = make_value(cpu0, 16, 0);
    tgc_rendezvous_recv_async(r, "cpu0;gpu0;big", gpu0, keep, &g);
    CU_ASSERT_EQUAL(tgc_rendezvous_send(r, "cpu0;gpu0;big", &v), TGC_OK);
    CU_ASSERT(g.calls == 1 && g.status == TGC_ERR_NOMEM && !g.had_value);
    CU_ASSERT_EQUAL(atomic_load(&v.buf->refs), 1);
    tgc_buffer_release(v.buf);
    CU_ASSERT_EQUAL(live(cpu0) + live(gpu0), 0);
    tgc_rendezvous_free(r);
    tgc_device_destroy(cpu0);
    tgc_device_destroy(gpu0);
}

/* Keys name their step: the prefix the executor puts in front of every key,
 * and the id read back from a key, including a frame's; keys without a
 * well-formed prefix give -1. */
static void test_step_in_keys(void) {
    char buf[TGC_RENDEZVOUS_STEP_PREFIX_MAX];
    CU_ASSERT_STRING_EQUAL(tgc_rendezvous_step_prefix(17, buf, sizeof buf), "step17/");
    CU_ASSERT_STRING_EQUAL(tgc_rendezvous_step_prefix(INT64_MAX, buf, sizeof buf), "step9223372036854775807/");
    int64_t id = 0;
    CU_ASSERT(tgc_rendezvous_key_step("step17/cpu0;gpu0;x", &id) && id == 17);
    CU_ASSERT(tgc_rendezvous_key_step("step1/loop@3/cpu0;gpu0;x", &id) && id == 1);
    CU_ASSERT(tgc_rendezvous_key_step("step9223372036854775807/a", &id) && id == INT64_MAX);
    const char *bad[] = {"cpu0;gpu0;x", "step/x", "stepx/x", "step17", "step17;x", "step9223372036854775808/x",
                         "Step1/x", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        id = 0;
        CU_ASSERT(!tgc_rendezvous_key_step(bad[i], &id) && id == -1);
    }
}

TGC_TEST_MAIN("rendezvous", {"keys carry their step id", test_step_in_keys},
              {"send before recv", test_send_before_recv},
              {"recv before send", test_recv_before_send},
              {"moves between host and device memory", test_moves_between_memories},
              {"empty and omitted values", test_empty_values},
              {"a key sent or received twice", test_key_twice},
              {"8 threads x 1000 keys", test_many_threads},
              {"abort with receivers waiting", test_abort_with_pending_receivers},
              {"abort from one thread while others work", test_abort_from_a_thread},
              {"free without abort", test_free_without_abort},
              {"a copy that fails", test_copy_fails})
