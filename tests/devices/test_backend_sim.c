/* A new kind of device is one table: the sim backend (sim_backend.h), which
 * lives only in the tests and is registered at run time, is listed with
 * its memory, parsed in device lists and device specs, preferred by the
 * placer by its priority, split from the cpu where it lacks a kernel, runs
 * the digits CNN against PyTorch's logits, keeps to its memory limit, and
 * leaves nothing behind; no file outside its own names it. */
#include "tests/devices/sim_backend.h"
#include "tests/harness.h"

#include "devices/device.h"
#include "devices/kernel.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every message in d as one string (the caller frees it). */
static char *diags_text(const tgc_diags *d) {
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    tgc_diags_print(d, f);
    fclose(f);
    return text;
}

static tgc_device_kind sim(void) {
    tgc_device_kind kind = -1;
    CU_ASSERT_EQUAL_FATAL(tgc_sim_backend_register(&kind), TGC_OK);
    return kind;
}

static void test_registration(void) {
    tgc_device_kind kind = sim();
    CU_ASSERT(kind >= 2); /* after the cpu and OpenCL */
    CU_ASSERT_EQUAL(tgc_backend_count(), kind + 1);
    tgc_device_kind again = -1;
    CU_ASSERT_EQUAL(tgc_sim_backend_register(&again), TGC_OK);
    CU_ASSERT_EQUAL(again, kind);
    CU_ASSERT_EQUAL(tgc_backend_register(tgc_backend_get(kind), &again), TGC_OK); /* the same table: its kind */
    CU_ASSERT_EQUAL(again, kind);
    /* Another table with a prefix taken, or a bad prefix, is refused. */
    tgc_backend clash = *tgc_backend_get(kind);
    CU_ASSERT_EQUAL(tgc_backend_register(&clash, &again), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(again, -1);
    clash.prefix = "Sim";
    CU_ASSERT_EQUAL(tgc_backend_register(&clash, &again), TGC_ERR_INVALID);
    clash.prefix = "";
    CU_ASSERT_EQUAL(tgc_backend_register(&clash, &again), TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(tgc_backend_count(), kind + 1);
    CU_ASSERT(tgc_kind_host_memory(kind));
    CU_ASSERT(!tgc_kind_is_host(kind));
}

static void test_names(void) {
    tgc_device_kind kind = sim();
    tgc_device_id id;
    bool partial = false;
    CU_ASSERT(tgc_device_id_parse("sim1", 4, &id, &partial));
    CU_ASSERT_EQUAL(id.kind, kind);
    CU_ASSERT_EQUAL(id.index, 1);
    CU_ASSERT(!partial);
    CU_ASSERT(tgc_device_id_parse("/task:3/sim", 11, &id, &partial));
    CU_ASSERT(partial);
    CU_ASSERT_EQUAL(id.task, 3);
    CU_ASSERT(!tgc_device_id_parse("sim01", 5, &id, NULL));
    CU_ASSERT(!tgc_device_id_parse("simx", 4, &id, NULL));
    char buf[32];
    CU_ASSERT_STRING_EQUAL(tgc_device_name_canonical("sim", 3, buf, sizeof buf), "sim0");
    CU_ASSERT(tgc_device_spec_valid("sim1"));
    CU_ASSERT(strstr(tgc_device_name_forms(buf, sizeof buf), "sim, simN") != NULL);
}

static void test_listed_with_memory(void) {
    sim();
    tgc_device_info info[32];
    int n = tgc_devices_list(info, 32), found = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(info[i].name, "sim", 3) != 0) continue;
        found++;
        CU_ASSERT_EQUAL(info[i].total_memory, TGC_SIM_CAPACITY);
    }
    CU_ASSERT_EQUAL(found, TGC_SIM_DEVICES);
    tgc_device_memory_info m;
    CU_ASSERT_EQUAL(tgc_device_memory("sim1", &m), TGC_OK);
    CU_ASSERT_EQUAL(m.total_bytes, TGC_SIM_CAPACITY);
    CU_ASSERT_EQUAL(tgc_device_memory("sim7", &m), TGC_ERR_INVALID);
}

static void test_kernels_forward_to_cpu(void) {
    tgc_device_kind kind = sim();
    const tgc_kernel_def *relu = tgc_kernel_find("Relu", kind, TGC_FLOAT32);
    const tgc_kernel_def *cpu_relu = tgc_kernel_find("Relu", TGC_DEVICE_CPU, TGC_FLOAT32);
    CU_ASSERT_PTR_NOT_NULL_FATAL(relu);
    CU_ASSERT_PTR_NOT_EQUAL(relu, cpu_relu);
    CU_ASSERT_EQUAL(relu->forward_input, cpu_relu->forward_input);
    CU_ASSERT_PTR_NULL(tgc_kernel_find(TGC_SIM_MISSING_OP, kind, TGC_FLOAT32));
    CU_ASSERT_PTR_NOT_NULL(tgc_kernel_find(TGC_SIM_MISSING_OP, TGC_DEVICE_CPU, TGC_FLOAT32));
    CU_ASSERT_EQUAL(tgc_kernel_index_unresolved(kind), 0);
    for (int k = 0; k < tgc_backend_count(); k++) CU_ASSERT_EQUAL(tgc_kernel_index_unresolved(k), 0);
}

/* x [512, 3] -> Relu -> Softmax -> y; Relu goes to sim0 by priority (its
 * input, 6 KiB, too large for the small-host rule), Softmax to cpu0 for
 * want of a kernel. */
static const char softmax_graph[] = "format: tgc/1\n"
                                    "name: split\n"
                                    "inputs:\n"
                                    "  - {name: x, dtype: float32, shape: [512, 3]}\n"
                                    "outputs: [y]\n"
                                    "nodes:\n"
                                    "  - {name: r, op: Relu, inputs: [x]}\n"
                                    "  - {name: y, op: Softmax, inputs: [r], attrs: {axis: 1}}\n";

static void test_placed_and_partitioned(void) {
    sim();
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(softmax_graph, sizeof softmax_graph - 1, "s.yaml", NULL, d, &g),
                          TGC_OK);
    tgc_placed *p = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_place(g, "cpu,sim0", NULL, d, &p), TGC_OK);
    CU_ASSERT_STRING_EQUAL(tgc_placed_device_name(p, "r"), "sim0");
    CU_ASSERT_STRING_EQUAL(tgc_placed_reason(p, "r"), "default");
    CU_ASSERT_STRING_EQUAL(tgc_placed_device_name(p, "y"), "cpu0");
    CU_ASSERT_STRING_EQUAL(tgc_placed_reason(p, "y"), "kernel");
    tgc_partitions *parts = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_partition(g, p, d, &parts), TGC_OK);
    CU_ASSERT_EQUAL(tgc_partitions_count(parts), 2);
    CU_ASSERT_EQUAL(tgc_partitions_pair_count(parts), 1);
    CU_ASSERT_EQUAL(tgc_partitions_validate(parts, d), TGC_OK);
    tgc_partitions_free(parts);
    tgc_placed_free(p);
    /* Without a cpu listed, Softmax has nowhere to go: the error says which
     * kind to add. */
    p = NULL;
    CU_ASSERT_EQUAL(tgc_graph_place(g, "sim0,sim1", NULL, d, &p), TGC_ERR_INVALID);
    char *text = diags_text(d);
    CU_ASSERT(strstr(text, "no-kernel") != NULL && strstr(text, "add a cpu or a gpu to --devices") != NULL);
    free(text);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* A graph may name the new kind in a device spec, and the loader checks
 * the spelling against the registered kinds. */
static void test_device_spec(void) {
    sim();
    static const char text[] = "format: tgc/1\n"
                               "inputs:\n"
                               "  - {name: x, dtype: float32, shape: [4]}\n"
                               "outputs: [y]\n"
                               "nodes:\n"
                               "  - {name: h, op: Relu, inputs: [x], device: sim1}\n"
                               "  - {name: y, op: Neg, inputs: [h], device: cpu}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(text, sizeof text - 1, "spec.yaml", NULL, d, &g), TGC_OK);
    tgc_placed *p = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_place(g, "cpu,sim0,sim1", NULL, d, &p), TGC_OK);
    CU_ASSERT_STRING_EQUAL(tgc_placed_device_name(p, "h"), "sim1");
    CU_ASSERT_STRING_EQUAL(tgc_placed_reason(p, "h"), "spec");
    tgc_placed_free(p);
    tgc_graph_free(g);
    tgc_diags_free(d);
    static const char bad[] = "format: tgc/1\n"
                              "inputs:\n"
                              "  - {name: x, dtype: float32, shape: [4]}\n"
                              "outputs: [y]\n"
                              "nodes:\n"
                              "  - {name: y, op: Relu, inputs: [x], device: sim01}\n";
    d = tgc_diags_create();
    g = NULL;
    CU_ASSERT_EQUAL(tgc_graph_load_string(bad, sizeof bad - 1, "bad.yaml", NULL, d, &g), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(g);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* Relu then Softmax by hand, in double. */
static void test_runs_split_graph(void) {
    sim();
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(softmax_graph, sizeof softmax_graph - 1, "s.yaml", NULL, d, &g),
                          TGC_OK);
    tgc_session *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu,sim0", NULL, d, &s), TGC_OK);
    static float xs[512 * 3];
    for (int i = 0; i < 512 * 3; i++) xs[i] = (float)((i * 37) % 23) / 4.0f - 2.5f;
    int64_t dims[2] = {512, 3};
    tgc_tensor *x = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_tensor_create(TGC_FLOAT32, 2, dims, xs, &x), TGC_OK);
    const char *names[] = {"x"};
    tgc_tensor *y = NULL;
    long calls = tgc_sim_kernel_calls();
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(s, 1, names, &x, &y, d), TGC_OK);
    CU_ASSERT_EQUAL(tgc_sim_kernel_calls(), calls + 1); /* Relu, on sim0 */
    const float *out = tgc_tensor_data(y);
    for (int r = 0; r < 512; r++) {
        double e[3], sum = 0;
        for (int c = 0; c < 3; c++) sum += e[c] = exp(xs[r * 3 + c] > 0 ? xs[r * 3 + c] : 0);
        for (int c = 0; c < 3; c++) CU_ASSERT_DOUBLE_EQUAL(out[r * 3 + c], e[c] / sum, 1e-6);
    }
    tgc_tensor_release(y);
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

static tgc_tensor *load(const char *rel, tgc_diags *d) {
    tgc_tensor *t = NULL;
    CU_ASSERT_EQUAL(tgc_tensor_load_npy(tgc_test_path(rel), d, &t), TGC_OK);
    return t;
}

/* The digits CNN on cpu0 and sim0 (its Softmax on cpu0, the rest on sim0)
 * against the logits PyTorch computed; the memory report names sim0; its
 * buffers are back to the weights after the run. */
static void test_digits_cnn_matches_pytorch(void) {
    sim();
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load(tgc_test_path("examples/digits/cnn.yaml"), d, &g), TGC_OK);
    tgc_session_options opts = {.memory_report = true};
    tgc_session *s = NULL;
    tgc_status st = tgc_session_create(g, "cpu,sim0", &opts, d, &s);
    tgc_diags_print(d, stderr);
    CU_ASSERT_EQUAL_FATAL(st, TGC_OK);
    int sim0 = -1;
    for (int i = 0; i < tgc_session_device_count(s); i++)
        if (strcmp(tgc_session_device_name(s, i), "sim0") == 0) sim0 = i;
    CU_ASSERT_FATAL(sim0 >= 0);
    tgc_memory_figures before = tgc_session_memory(s, sim0);
    CU_ASSERT(before.bytes_in_use > 0); /* the weights */
    tgc_tensor *x = load("examples/digits/test_x.npy", d), *ref = load("examples/digits/ref_logits_cnn.npy", d);
    const char *names[] = {"x"};
    tgc_tensor *outs[2] = {NULL, NULL};
    long calls = tgc_sim_kernel_calls();
    CU_ASSERT_EQUAL_FATAL(tgc_session_run(s, 1, names, &x, outs, d), TGC_OK);
    CU_ASSERT(tgc_sim_kernel_calls() > calls);
    const float *p = tgc_tensor_data(outs[0]), *q = tgc_tensor_data(ref);
    double worst = 0;
    for (int64_t i = 0; i < tgc_tensor_numel(ref); i++) worst = fmax(worst, fabs((double)p[i] - (double)q[i]));
    CU_ASSERT_EQUAL(tgc_tensor_numel(outs[0]), tgc_tensor_numel(ref));
    CU_ASSERT(worst <= 1e-4);
    tgc_memory_figures after = tgc_session_memory(s, sim0);
    CU_ASSERT_EQUAL(after.bytes_in_use, before.bytes_in_use);
    CU_ASSERT_EQUAL(after.live_buffers, before.live_buffers);
    CU_ASSERT(after.peak_bytes_in_use > before.bytes_in_use);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CU_ASSERT_EQUAL(tgc_session_memory_report(s, f), TGC_OK);
    fclose(f);
    CU_ASSERT(strstr(text, "sim0") != NULL);
    free(text);
    for (int i = 0; i < 2; i++) tgc_tensor_release(outs[i]);
    tgc_tensor_release(x);
    tgc_tensor_release(ref);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

/* A limit below what a run needs is a clean error naming the device. */
static void test_memory_limit(void) {
    sim();
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load(tgc_test_path("examples/digits/cnn.yaml"), d, &g), TGC_OK);
    tgc_session_options opts = {.memory_limits = "sim0=300KiB"};
    tgc_session *s = NULL;
    tgc_status st = tgc_session_create(g, "cpu,sim0", &opts, d, &s);
    tgc_tensor *x = load("examples/digits/test_x.npy", d);
    const char *names[] = {"x"};
    tgc_tensor *outs[2] = {NULL, NULL};
    if (st == TGC_OK) st = tgc_session_run(s, 1, names, &x, outs, d);
    CU_ASSERT_NOT_EQUAL(st, TGC_OK);
    CU_ASSERT_PTR_NULL(outs[0]);
    char *text = diags_text(d);
    CU_ASSERT(strstr(text, "sim0") != NULL);
    free(text);
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("backend_sim", {"registration", test_registration}, {"names", test_names},
              {"listed_with_memory", test_listed_with_memory}, {"kernels_forward_to_cpu", test_kernels_forward_to_cpu},
              {"placed_and_partitioned", test_placed_and_partitioned}, {"device_spec", test_device_spec},
              {"runs_split_graph", test_runs_split_graph},
              {"digits_cnn_matches_pytorch", test_digits_cnn_matches_pytorch}, {"memory_limit", test_memory_limit})
