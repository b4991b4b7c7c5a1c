/* Fault injection over the digits CNN: one run counts its device
 * allocations (every session device and the host device), then for
 * N = 1..that count the Nth allocation of a run is made to fail. Every
 * time: a clean error (TGC_ERR_NOMEM or TGC_ERR_RUNTIME with a message
 * naming the node, input or output whose allocation failed), no crash,
 * outputs NULL, every device back to its
 * weights-only figures, and the next run, without injection, gives the
 * reference logits. On cpu, and on cpu,gpu0 where there is a gpu. The
 * whole sweep is a few dozen runs: under the sanitizers too. */
#include "tests/harness.h"

#include "devices/device.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEV 8
#define ROUNDS 3 /* the sweep again: threads schedule differently each time */

typedef struct cnn {
    tgc_diags *diags;
    tgc_graph *g;
    tgc_session *s;
    tgc_tensor *x, *ref;
} cnn;

static bool open_cnn(cnn *m, const char *devices) {
    memset(m, 0, sizeof *m);
    m->diags = tgc_diags_create();
    char path[1024];
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/cnn.yaml"));
    if (tgc_graph_load(path, m->diags, &m->g) != TGC_OK) goto fail;
    if (tgc_session_create(m->g, devices, NULL, m->diags, &m->s) != TGC_OK) goto fail;
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/test_x.npy"));
    if (tgc_tensor_load_npy(path, m->diags, &m->x) != TGC_OK) goto fail;
    snprintf(path, sizeof path, "%s", tgc_test_path("examples/digits/ref_logits_cnn.npy"));
    if (tgc_tensor_load_npy(path, m->diags, &m->ref) != TGC_OK) goto fail;
    return tgc_session_device_count(m->s) <= MAX_DEV;
fail:
    tgc_diags_print(m->diags, stderr);
    return false;
}

static void close_cnn(cnn *m) {
    tgc_tensor_release(m->x);
    tgc_tensor_release(m->ref);
    tgc_session_free(m->s);
    tgc_graph_free(m->g);
    tgc_diags_free(m->diags);
}

/* What a leak would move: every session device and the host device. */
typedef struct snapshot {
    int n;
    tgc_memory_figures dev[MAX_DEV];
    tgc_memory_info host;
} snapshot;

static snapshot take(const cnn *m) {
    snapshot sn = {.n = tgc_session_device_count(m->s), .host = tgc_memory()};
    for (int i = 0; i < sn.n; i++) sn.dev[i] = tgc_session_memory(m->s, i);
    return sn;
}

static int64_t allocations(const snapshot *sn) {
    int64_t n = sn->host.host.num_allocs;
    for (int i = 0; i < sn->n; i++) n += sn->dev[i].num_allocs;
    return n;
}

/* Live buffers and bytes as in `base`: only the weights (and the feeds). */
static bool same_live(const snapshot *base, const snapshot *now) {
    bool same = now->host.live_tensors == base->host.live_tensors &&
                now->host.live_tensor_bytes == base->host.live_tensor_bytes &&
                now->host.host.live_buffers == base->host.host.live_buffers &&
                now->host.host.bytes_in_use == base->host.host.bytes_in_use;
    for (int i = 0; i < base->n; i++)
        same = same && now->dev[i].live_buffers == base->dev[i].live_buffers &&
               now->dev[i].bytes_in_use == base->dev[i].bytes_in_use;
    return same;
}

static double max_abs_diff(const tgc_tensor *a, const tgc_tensor *b) {
    const float *p = tgc_tensor_data(a), *q = tgc_tensor_data(b);
    double worst = 0;
    for (int64_t i = 0; i < tgc_tensor_numel(a); i++) worst = fmax(worst, fabs((double)p[i] - (double)q[i]));
    return worst;
}

/* One run that must succeed with the reference logits. */
static bool clean_run(cnn *m) {
    const char *names[] = {"x"};
    tgc_tensor *outs[2] = {NULL, NULL};
    tgc_diags *d = tgc_diags_create();
    tgc_status st = tgc_session_run(m->s, 1, names, &m->x, outs, d);
    if (st != TGC_OK) tgc_diags_print(d, stderr);
    bool ok = st == TGC_OK && tgc_tensor_numel(outs[0]) == 4000 && max_abs_diff(outs[0], m->ref) <= 1e-4;
    tgc_tensor_release(outs[0]);
    tgc_tensor_release(outs[1]);
    tgc_diags_free(d);
    return ok;
}

static void sweep(const char *devices) {
    cnn m;
    CU_ASSERT_FATAL(open_cnn(&m, devices));
    CU_ASSERT_FATAL(clean_run(&m)); /* warm-up: kernels built, arenas grown */
    snapshot base = take(&m);
    CU_ASSERT_FATAL(clean_run(&m));
    snapshot after = take(&m);
    int64_t count = allocations(&after) - allocations(&base);
    CU_ASSERT_FATAL(count > 0);
    CU_ASSERT(same_live(&base, &after));
    base = after;

    int nomem = 0, runtime = 0, not_reached = 0;
    const char *names[] = {"x"};
    for (int64_t k = 0; k < ROUNDS * count; k++) {
        int64_t n = 1 + k % count;
        tgc_tensor *outs[2] = {(tgc_tensor *)&m, (tgc_tensor *)&m}; /* must come back NULL */
        tgc_diags *d = tgc_diags_create();
        tgc_device_fail_nth_alloc(n);
        tgc_status st = tgc_session_run(m.s, 1, names, &m.x, outs, d);
        tgc_device_fail_nth_alloc(0); /* disarmed, whether it fired or not */
        if (st == TGC_OK) {
            /* The run allocated fewer than n this time (a kernel forwarded
             * a buffer it did not forward in the counting run). */
            not_reached++;
            tgc_tensor_release(outs[0]);
            tgc_tensor_release(outs[1]);
        } else {
            CU_ASSERT(st == TGC_ERR_NOMEM || st == TGC_ERR_RUNTIME);
            nomem += st == TGC_ERR_NOMEM;
            runtime += st == TGC_ERR_RUNTIME;
            CU_ASSERT_PTR_NULL(outs[0]);
            CU_ASSERT_PTR_NULL(outs[1]);
            /* The message says where: a node, the input being copied, or
             * the output being fetched. */
            bool named = tgc_diags_error_count(d) >= 1 && (strstr(tgc_diag_message(d, 0), "node '") != NULL ||
                                                           strstr(tgc_diag_message(d, 0), "input '") != NULL ||
                                                           strstr(tgc_diag_message(d, 0), "output '") != NULL);
            if (!named) {
                fprintf(stderr, "\n  %s, allocation %lld failed: %s, message: ", devices, (long long)n,
                        tgc_status_name(st));
                if (tgc_diags_count(d) == 0) fprintf(stderr, "(none)\n");
                tgc_diags_print(d, stderr);
            }
            CU_ASSERT(named);
            if (n == 1 && tgc_diags_count(d) > 0) printf("\n  %s, N = 1: %s", devices, tgc_diag_message(d, 0));
        }
        snapshot now = take(&m);
        if (!same_live(&base, &now))
            fprintf(stderr, "\n  %s, allocation %lld failed: live figures differ from the weights-only ones\n",
                    devices, (long long)n);
        CU_ASSERT(same_live(&base, &now));
        tgc_diags_free(d);
        CU_ASSERT(clean_run(&m)); /* and the session still works */
        snapshot again = take(&m);
        CU_ASSERT(same_live(&base, &again));
    }
    printf("\n  %s: %lld device allocations a run; failed N = 1..%lld, %d times: %d TGC_ERR_NOMEM, "
           "%d TGC_ERR_RUNTIME, %d not reached\n",
           devices, (long long)count, (long long)count, ROUNDS, nomem, runtime, not_reached);
    CU_ASSERT(nomem + runtime > 0);
    close_cnn(&m);
}

static bool have_gpu(void) {
    tgc_device_info info[4];
    return tgc_devices_list(info, 4) > 1;
}

static void test_every_allocation_of_a_cpu_run_fails_cleanly(void) { sweep("cpu"); }

static void test_every_allocation_of_a_cpu_gpu_run_fails_cleanly(void) {
    if (have_gpu()) sweep("cpu,gpu0");
}

TGC_TEST_MAIN("fault injection",
              {"every allocation of a cpu run fails cleanly", test_every_allocation_of_a_cpu_run_fails_cleanly},
              {"every allocation of a cpu,gpu0 run fails cleanly",
               test_every_allocation_of_a_cpu_gpu_run_fails_cleanly})
