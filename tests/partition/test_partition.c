/* The partitioner, as issue 6 specifies it: one _Send/_Recv pair per
 * (tensor, destination device, host-or-device memory) however many
 * consumers; chains across three devices; control edges as pairs carrying
 * an empty tensor; host-memory receives; graph inputs feeding two devices;
 * on every example the union of the partitions with the pairs contracted is
 * the original graph, and every partition dump loads again; the digits CNN
 * over cpu0,gpu0 moves float tensors only where they change device and
 * never a shape value into GPU memory. Expected pairs, keys and node counts
 * are derived by hand from the rules in partition/partition.h. */
#include "tests/harness.h"

#include "graph/graph.h"
#include "graph/npy.h"
#include "partition/partition.h"
#include "support/alloc.h"

#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CPU0 {TGC_DEVICE_CPU, 0, 0}
#define CPU1 {TGC_DEVICE_CPU, 1, 0}
#define GPU0 {TGC_DEVICE_GPU, 0, 0}

/* ---- fixture -------------------------------------------------------------- */

typedef struct fx {
    tgc_diags *diags;
    tgc_graph *g;
    int32_t *device; /* the placement, by node id */
    tgc_placement placement;
    tgc_partitioning parts;
    bool built;
} fx;

static bool fx_load_text(fx *f, const char *text) {
    memset(f, 0, sizeof *f);
    f->diags = tgc_diags_create();
    tgc_status s = tgc_graph_load_string(text, strlen(text), "test.yaml", NULL, f->diags, &f->g);
    if (s != TGC_OK) tgc_diags_print(f->diags, stderr);
    return s == TGC_OK;
}

static bool fx_load_file(fx *f, const char *path) {
    memset(f, 0, sizeof *f);
    f->diags = tgc_diags_create();
    tgc_status s = tgc_graph_load(path, f->diags, &f->g);
    if (s != TGC_OK) tgc_diags_print(f->diags, stderr);
    return s == TGC_OK;
}

/* Places every node on `dflt`, then each "name=device" of spec (device an
 * index into the run's list), e.g. "a=0 b=1". */
static void fx_place(fx *f, int dflt, const char *spec) {
    f->device = tgc_malloc(((size_t)f->g->n_nodes + 1) * sizeof *f->device);
    for (int32_t i = 0; i < f->g->n_nodes; i++) f->device[i] = dflt;
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, " "); tok != NULL; tok = strtok(NULL, " ")) {
        char *eq = strrchr(tok, '=');
        CU_ASSERT_PTR_NOT_NULL_FATAL(eq);
        *eq = '\0';
        int32_t id = tgc_graph_find(f->g, tok);
        if (id < 0) fprintf(stderr, "no node '%s'\n", tok);
        CU_ASSERT_FATAL(id >= 0);
        f->device[id] = atoi(eq + 1);
    }
    f->placement = (tgc_placement){.n_nodes = f->g->n_nodes, .device = f->device};
}

static bool fx_build(fx *f, const tgc_placer_device *devs, int n_devs) {
    tgc_status s = tgc_partition_build(f->g, &f->placement, devs, n_devs, f->diags, &f->parts);
    if (s != TGC_OK) tgc_diags_print(f->diags, stderr);
    f->built = s == TGC_OK;
    if (!f->built) return false;
    tgc_diags *d = tgc_diags_create();
    s = tgc_partition_validate(f->g, &f->parts, d);
    if (s != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    CU_ASSERT_EQUAL(s, TGC_OK);
    return s == TGC_OK;
}

static void fx_end(fx *f) {
    if (f->built) tgc_partitioning_release(&f->parts);
    tgc_free(f->device);
    tgc_graph_free(f->g);
    tgc_diags_free(f->diags);
}

static int part_of_device(const fx *f, const char *device) {
    for (int i = 0; i < f->parts.n_parts; i++)
        if (strcmp(f->parts.parts[i].device_name, device) == 0) return i;
    return -1;
}

static const tgc_graph *part_graph(const fx *f, const char *device) {
    int i = part_of_device(f, device);
    return i >= 0 ? f->parts.parts[i].graph : NULL;
}

static const tgc_partition_pair *pair_of_key(const fx *f, const char *key) {
    for (int32_t i = 0; i < f->parts.n_pairs; i++)
        if (strcmp(f->parts.pairs[i].key, key) == 0) return &f->parts.pairs[i];
    return NULL;
}

/* Node `name` of the partition on `device`, or NULL. */
static const tgc_node *node_in(const fx *f, const char *device, const char *name) {
    const tgc_graph *pg = part_graph(f, device);
    int32_t id = pg ? tgc_graph_find(pg, name) : -1;
    return id >= 0 ? &pg->nodes[id] : NULL;
}

/* The name of what input i of node `name` on `device` reads. */
static const char *input_name(const fx *f, const char *device, const char *name, int i) {
    const tgc_node *n = node_in(f, device, name);
    if (n == NULL || i >= n->n_inputs || n->inputs[i].node < 0) return "";
    return part_graph(f, device)->nodes[n->inputs[i].node].name;
}

static const char *attr_s(const tgc_node *n, const char *name) {
    const tgc_attr *a = tgc_node_attr(n, name);
    return a && a->type == TGC_ATTR_STRING ? a->s : "";
}

static int64_t attr_i(const tgc_node *n, const char *name) {
    const tgc_attr *a = tgc_node_attr(n, name);
    return a && a->type == TGC_ATTR_INT ? a->i : 0;
}

/* Ids are a topological order: every edge goes from a lower id to a higher. */
static bool ids_topological(const tgc_graph *pg) {
    for (int32_t id = 0; id < pg->n_nodes; id++) {
        const tgc_node *n = &pg->nodes[id];
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i].node >= id) return false;
        for (int i = 0; i < n->n_controls; i++)
            if (n->controls[i].node >= id) return false;
    }
    return true;
}

/* Every partition dumps as tgc/1 YAML that loads again (relative .npy
 * paths from `dir`) to a graph of as many nodes. */
static void check_dumps_load(const fx *f, const char *dir) {
    for (int i = 0; i < f->parts.n_parts; i++) {
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        tgc_diags *d = tgc_diags_create();
        CU_ASSERT_EQUAL(tgc_partition_dump_yaml(&f->parts, i, m, NULL, d), TGC_OK);
        fclose(m);
        tgc_graph *back = NULL;
        tgc_status s = tgc_graph_load_string(text, len, "partition.yaml", dir, d, &back);
        if (s != TGC_OK) {
            fprintf(stderr, "\npartition %s of %s does not load:\n%s\n", f->parts.parts[i].device_name, f->g->path,
                    text);
            tgc_diags_print(d, stderr);
        }
        CU_ASSERT_EQUAL(s, TGC_OK);
        if (back != NULL) CU_ASSERT_EQUAL(back->n_nodes, f->parts.parts[i].graph->n_nodes);
        tgc_graph_free(back);
        tgc_diags_free(d);
        free(text);
    }
}

/* ---- dedup ------------------------------------------------------------------ */

static const char dedup_yaml[] = "format: tgc/1\n"
                                 "inputs:\n"
                                 "  - {name: x, dtype: float32, shape: [N, 4]}\n"
                                 "outputs: [b, c, d]\n"
                                 "nodes:\n"
                                 "  - {name: a, op: Relu, inputs: [x]}\n"
                                 "  - {name: b, op: Neg, inputs: [a]}\n"
                                 "  - {name: c, op: Abs, inputs: [a]}\n"
                                 "  - {name: d, op: Add, inputs: [a, a]}\n";

/* a on cpu0 has three consumers on cpu1 (d reads it twice): one pair. */
static void test_dedup(void) {
    static const tgc_placer_device devs[] = {CPU0, CPU1};
    fx f;
    CU_ASSERT_FATAL(fx_load_text(&f, dedup_yaml));
    fx_place(&f, 1, "x=0 a=0");
    CU_ASSERT_FATAL(fx_build(&f, devs, 2));
    CU_ASSERT_EQUAL(f.parts.n_parts, 2);
    CU_ASSERT_EQUAL(f.parts.n_pairs, 1);
    const tgc_partition_pair *pr = pair_of_key(&f, "cpu0;cpu1;a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(pr);
    CU_ASSERT_STRING_EQUAL(pr->tensor_name, "a");
    CU_ASSERT(!pr->control && !pr->recv_host_memory && !pr->send_host_memory);
    CU_ASSERT_EQUAL(pr->dtype, TGC_FLOAT32);
    CU_ASSERT_EQUAL(pr->bytes, 16); /* [N, 4] float32, N counted as 1 */
    /* cpu0: x, a, a/_send_cpu1; cpu1: a/_recv_cpu0, b, c, d. */
    CU_ASSERT_EQUAL(part_graph(&f, "cpu0")->n_nodes, 3);
    CU_ASSERT_EQUAL(part_graph(&f, "cpu1")->n_nodes, 4);
    const tgc_node *send = node_in(&f, "cpu0", "a/_send_cpu1"), *recv = node_in(&f, "cpu1", "a/_recv_cpu0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(send);
    CU_ASSERT_PTR_NOT_NULL_FATAL(recv);
    CU_ASSERT_STRING_EQUAL(send->op_name, "_Send");
    CU_ASSERT_STRING_EQUAL(recv->op_name, "_Recv");
    CU_ASSERT_STRING_EQUAL(attr_s(send, "key"), "cpu0;cpu1;a");
    CU_ASSERT_STRING_EQUAL(attr_s(recv, "key"), "cpu0;cpu1;a");
    CU_ASSERT_STRING_EQUAL(attr_s(recv, "tensor_name"), "a");
    CU_ASSERT_STRING_EQUAL(attr_s(recv, "send_device"), "cpu0");
    CU_ASSERT_STRING_EQUAL(attr_s(recv, "recv_device"), "cpu1");
    CU_ASSERT_STRING_EQUAL(recv->device, "cpu1");
    CU_ASSERT_EQUAL(send->n_outputs, 0);
    CU_ASSERT_EQUAL(recv->n_outputs, 1);
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu0", "a/_send_cpu1", 0), "a");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu1", "b", 0), "a/_recv_cpu0");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu1", "c", 0), "a/_recv_cpu0");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu1", "d", 0), "a/_recv_cpu0");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu1", "d", 1), "a/_recv_cpu0");
    /* Outputs are fetched from cpu1; origins map back. */
    for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(f.parts.outputs[i].part, part_of_device(&f, "cpu1"));
    const tgc_partition *p1 = &f.parts.parts[part_of_device(&f, "cpu1")];
    CU_ASSERT_EQUAL(p1->origin[tgc_graph_find(p1->graph, "a/_recv_cpu0")], -1);
    CU_ASSERT_EQUAL(p1->origin[tgc_graph_find(p1->graph, "d")], tgc_graph_find(f.g, "d"));
    CU_ASSERT_EQUAL(p1->graph->n_outputs, 3);
    CU_ASSERT(ids_topological(p1->graph));
    check_dumps_load(&f, NULL);
    fx_end(&f);
}

/* Clip's bounds (a Constant op and an initializer, 4 bytes each) and a
 * 1 KiB initializer are copied into cpu1, which reads them; a 1028-byte
 * initializer, one over the limit, is sent. */
static const char small_constants_yaml[] =
    "format: tgc/1\n"
    "inputs:\n"
    "  - {name: x, dtype: float32, shape: [256]}\n"
    "initializers:\n"
    "  - {name: hi, dtype: float32, shape: [], values: [6]}\n"
    "  - {name: w, dtype: float32, shape: [256], file: w256.npy}\n"
    "  - {name: big, dtype: float32, shape: [257], file: w257.npy}\n"
    "outputs: [c, d, e]\n"
    "nodes:\n"
    "  - {name: lo, op: Constant, attrs: {value: {dtype: float32, shape: [], values: [0]}}}\n"
    "  - {name: a, op: Relu, inputs: [x]}\n"
    "  - {name: b, op: Clip, inputs: [a, lo, hi]}\n"
    "  - {name: c, op: Clip, inputs: [x, lo, hi]}\n"
    "  - {name: d, op: Mul, inputs: [b, w]}\n"
    "  - {name: e, op: Concat, inputs: [d, big], attrs: {axis: 0}}\n";

static void test_small_constants_copied(void) {
    static const tgc_placer_device devs[] = {CPU0, CPU1};
    char dir[] = "/tmp/tgc-part-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    float zeros[257] = {0};
    char path[512], err[256];
    for (int n = 256; n <= 257; n++) {
        tgc_npy a = {.dtype = TGC_FLOAT32, .rank = 1, .dims = {n}, .data = zeros, .nbytes = (size_t)n * 4};
        snprintf(path, sizeof path, "%s/w%d.npy", dir, n);
        CU_ASSERT_FATAL(tgc_npy_write_file(path, &a, err, sizeof err) == TGC_OK);
    }
    snprintf(path, sizeof path, "%s/m.yaml", dir);
    FILE *fp = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fputs(small_constants_yaml, fp);
    fclose(fp);
    fx f;
    CU_ASSERT_FATAL(fx_load_file(&f, path));
    CU_ASSERT(tgc_node_is_small_constant(&f.g->nodes[tgc_graph_find(f.g, "w")]));
    CU_ASSERT(!tgc_node_is_small_constant(&f.g->nodes[tgc_graph_find(f.g, "big")]));
    fx_place(&f, 1, "x=0 a=0 lo=0 hi=0 w=0 big=0 c=0");
    CU_ASSERT_FATAL(fx_build(&f, devs, 2));
    /* One pair for a, one for big; none for lo, hi or w. */
    CU_ASSERT_EQUAL(f.parts.n_pairs, 2);
    CU_ASSERT_PTR_NOT_NULL(pair_of_key(&f, "cpu0;cpu1;a"));
    CU_ASSERT_PTR_NOT_NULL(pair_of_key(&f, "cpu0;cpu1;big"));
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu1", "b", 1), "lo");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu1", "b", 2), "hi");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu1", "d", 1), "w");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu0", "c", 1), "lo");
    const tgc_node *lo1 = node_in(&f, "cpu1", "lo");
    CU_ASSERT_PTR_NOT_NULL_FATAL(lo1);
    CU_ASSERT_STRING_EQUAL(lo1->device, "cpu1");
    CU_ASSERT_EQUAL(node_in(&f, "cpu1", "hi")->kind, TGC_NODE_CONST);
    /* The tables point at the placed node; the copies map back to it. */
    int32_t lo = tgc_graph_find(f.g, "lo");
    CU_ASSERT_EQUAL(f.parts.part_of[lo], part_of_device(&f, "cpu0"));
    const tgc_partition *p1 = &f.parts.parts[part_of_device(&f, "cpu1")];
    CU_ASSERT_EQUAL(p1->origin[tgc_graph_find(p1->graph, "lo")], lo);
    CU_ASSERT(ids_topological(p1->graph));
    fx_end(&f);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

/* ---- three devices ------------------------------------------------------------- */

/* x -> a (cpu0) -> b (cpu1) -> c (gpu0) -> d (cpu0), and e = a + c on cpu1. */
static void test_chain_three_devices(void) {
    static const tgc_placer_device devs[] = {CPU0, CPU1, GPU0};
    fx f;
    CU_ASSERT_FATAL(fx_load_text(&f, "format: tgc/1\n"
                                     "inputs:\n"
                                     "  - {name: x, dtype: float32, shape: [2, 3]}\n"
                                     "outputs: [d, e]\n"
                                     "nodes:\n"
                                     "  - {name: a, op: Relu, inputs: [x]}\n"
                                     "  - {name: b, op: Neg, inputs: [a]}\n"
                                     "  - {name: c, op: Abs, inputs: [b]}\n"
                                     "  - {name: d, op: Sigmoid, inputs: [c]}\n"
                                     "  - {name: e, op: Add, inputs: [a, c]}\n"));
    fx_place(&f, 0, "b=1 e=1 c=2");
    CU_ASSERT_FATAL(fx_build(&f, devs, 3));
    CU_ASSERT_EQUAL(f.parts.n_parts, 3);
    CU_ASSERT_EQUAL(f.parts.n_pairs, 4);
    static const char *const keys[] = {"cpu0;cpu1;a", "cpu1;gpu0;b", "gpu0;cpu0;c", "gpu0;cpu1;c"};
    for (int i = 0; i < 4; i++) {
        const tgc_partition_pair *pr = pair_of_key(&f, keys[i]);
        CU_ASSERT_PTR_NOT_NULL(pr);
        if (pr != NULL) CU_ASSERT_EQUAL(pr->bytes, 24);
    }
    /* cpu0: x a a/_send_cpu1 c/_recv_gpu0 d; cpu1: a/_recv_cpu0 b b/_send_gpu0 c/_recv_gpu0 e;
     * gpu0: b/_recv_cpu1 c c/_send_cpu0 c/_send_cpu1. */
    CU_ASSERT_EQUAL(part_graph(&f, "cpu0")->n_nodes, 5);
    CU_ASSERT_EQUAL(part_graph(&f, "cpu1")->n_nodes, 5);
    CU_ASSERT_EQUAL(part_graph(&f, "gpu0")->n_nodes, 4);
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu1", "e", 0), "a/_recv_cpu0");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu1", "e", 1), "c/_recv_gpu0");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "gpu0", "c", 0), "b/_recv_cpu1");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu0", "d", 0), "c/_recv_gpu0");
    CU_ASSERT_STRING_EQUAL(node_in(&f, "gpu0", "c")->device, "gpu0");
    for (int i = 0; i < f.parts.n_parts; i++) CU_ASSERT(ids_topological(f.parts.parts[i].graph));
    /* Outputs: d from cpu0, e from cpu1. */
    CU_ASSERT_EQUAL(f.parts.outputs[0].part, part_of_device(&f, "cpu0"));
    CU_ASSERT_EQUAL(f.parts.outputs[1].part, part_of_device(&f, "cpu1"));
    /* Traffic per device pair. */
    tgc_partition_traffic t[16];
    int n = tgc_partition_traffic_list(&f.parts, t, 16);
    CU_ASSERT_EQUAL(n, 4);
    int64_t total = 0;
    for (int i = 0; i < n && i < 16; i++) {
        CU_ASSERT_EQUAL(t[i].pairs, 1);
        total += t[i].bytes;
    }
    CU_ASSERT_EQUAL(total, 4 * 24);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    tgc_partition_summary(&f.parts, m);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "4 send/recv pairs"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "cpu1->gpu0 1 pair 24 bytes"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "symbolic dims counted as 1"));
    free(text);
    check_dumps_load(&f, NULL);
    fx_end(&f);
}

/* ---- control edges ---------------------------------------------------------------- */

static void test_control_edges(void) {
    static const tgc_placer_device devs[] = {CPU0, CPU1};
    fx f;
    CU_ASSERT_FATAL(fx_load_text(&f, "format: tgc/1\n"
                                     "inputs:\n"
                                     "  - {name: x, dtype: float32, shape: [4]}\n"
                                     "outputs: [b, c, d]\n"
                                     "nodes:\n"
                                     "  - {name: a, op: Relu, inputs: [x]}\n"
                                     "  - {name: b, op: Neg, inputs: [x, ^a]}\n"
                                     "  - {name: c, op: Abs, inputs: [x, ^a]}\n"
                                     "  - {name: d, op: Exp, inputs: [x, ^a]}\n"));
    fx_place(&f, 0, "b=1 c=1");
    CU_ASSERT_FATAL(fx_build(&f, devs, 2));
    /* x's data pair and a's control pair, each once for b and c. */
    CU_ASSERT_EQUAL(f.parts.n_pairs, 2);
    CU_ASSERT_PTR_NOT_NULL(pair_of_key(&f, "cpu0;cpu1;x"));
    const tgc_partition_pair *pr = pair_of_key(&f, "cpu0;cpu1;^a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(pr);
    CU_ASSERT(pr->control);
    CU_ASSERT_STRING_EQUAL(pr->tensor_name, "^a");
    CU_ASSERT_EQUAL(pr->dtype, TGC_BOOL);
    CU_ASSERT_EQUAL(pr->shape.rank, 1);
    CU_ASSERT(tgc_dim_is(pr->shape.dims[0], 0));
    CU_ASSERT_EQUAL(pr->bytes, 0);
    /* Sending side: Constant(^a) -> _Send. */
    const tgc_node *k = node_in(&f, "cpu0", "a/_ctrl_empty");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_STRING_EQUAL(k->op_name, "Constant");
    CU_ASSERT_EQUAL(k->n_controls, 1);
    CU_ASSERT_STRING_EQUAL(part_graph(&f, "cpu0")->nodes[k->controls[0].node].name, "a");
    CU_ASSERT_EQUAL(k->outputs[0].dtype, TGC_BOOL);
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu0", "a/_send_ctrl_cpu1", 0), "a/_ctrl_empty");
    /* Receiving side: _Recv -> Identity, b's and c's control input. */
    const tgc_node *ident = node_in(&f, "cpu1", "a/_ctrl_cpu0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ident);
    CU_ASSERT_STRING_EQUAL(ident->op_name, "Identity");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu1", "a/_ctrl_cpu0", 0), "a/_recv_ctrl_cpu0");
    const tgc_graph *g1 = part_graph(&f, "cpu1");
    int32_t ident_id = tgc_graph_find(g1, "a/_ctrl_cpu0");
    const tgc_node *b = node_in(&f, "cpu1", "b"), *c = node_in(&f, "cpu1", "c");
    CU_ASSERT(b->n_controls == 1 && b->controls[0].node == ident_id);
    CU_ASSERT(c->n_controls == 1 && c->controls[0].node == ident_id);
    /* d stays with a: its control edge is a plain one. */
    const tgc_node *d = node_in(&f, "cpu0", "d");
    CU_ASSERT(d->n_controls == 1 && d->controls[0].node == tgc_graph_find(part_graph(&f, "cpu0"), "a"));
    /* cpu0: x a d x/_send_cpu1 a/_ctrl_empty a/_send_ctrl_cpu1;
     * cpu1: x/_recv_cpu0 a/_recv_ctrl_cpu0 a/_ctrl_cpu0 b c. */
    CU_ASSERT_EQUAL(part_graph(&f, "cpu0")->n_nodes, 6);
    CU_ASSERT_EQUAL(g1->n_nodes, 5);
    check_dumps_load(&f, NULL);
    fx_end(&f);
}

/* A control edge whose source feeds two other devices: one Constant, two pairs. */
static void test_control_to_two_devices(void) {
    static const tgc_placer_device devs[] = {CPU0, CPU1, GPU0};
    fx f;
    CU_ASSERT_FATAL(fx_load_text(&f, "format: tgc/1\n"
                                     "inputs:\n"
                                     "  - {name: x, dtype: float32, shape: [4]}\n"
                                     "outputs: [b, c]\n"
                                     "nodes:\n"
                                     "  - {name: a, op: Relu, inputs: [x]}\n"
                                     "  - {name: b, op: Neg, inputs: [a, ^a]}\n"
                                     "  - {name: c, op: Abs, inputs: [x, ^a]}\n"));
    fx_place(&f, 0, "b=1 c=2");
    CU_ASSERT_FATAL(fx_build(&f, devs, 3));
    CU_ASSERT_EQUAL(f.parts.n_pairs, 4); /* a -> cpu1, ^a -> cpu1, x -> gpu0, ^a -> gpu0 */
    CU_ASSERT_PTR_NOT_NULL(pair_of_key(&f, "cpu0;cpu1;a"));
    CU_ASSERT_PTR_NOT_NULL(pair_of_key(&f, "cpu0;cpu1;^a"));
    CU_ASSERT_PTR_NOT_NULL(pair_of_key(&f, "cpu0;gpu0;^a"));
    CU_ASSERT_PTR_NOT_NULL(pair_of_key(&f, "cpu0;gpu0;x"));
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu0", "a/_send_ctrl_cpu1", 0), "a/_ctrl_empty");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "cpu0", "a/_send_ctrl_gpu0", 0), "a/_ctrl_empty");
    CU_ASSERT_PTR_NULL(node_in(&f, "cpu0", "a/_ctrl_empty_2"));
    check_dumps_load(&f, NULL);
    fx_end(&f);
}

/* ---- host memory ---------------------------------------------------------------- */

/* On gpu0: Reshape takes its shape argument in host memory (a _HostRecv),
 * its data in device memory; Shape reads only metadata (host). Shape's
 * output on gpu0 is host memory, so its _Send says so. */
static void test_host_memory_receives(void) {
    static const tgc_placer_device devs[] = {CPU0, GPU0};
    fx f;
    CU_ASSERT_FATAL(fx_load_text(&f, "format: tgc/1\n"
                                     "inputs:\n"
                                     "  - {name: x, dtype: float32, shape: [N, 4]}\n"
                                     "outputs: [y, w]\n"
                                     "nodes:\n"
                                     "  - {name: a, op: Relu, inputs: [x]}\n"
                                     "  - {name: shp, op: Shape, inputs: [a]}\n"
                                     "  - {name: y, op: Reshape, inputs: [a, shp]}\n"
                                     "  - {name: z, op: Shape, inputs: [a]}\n"
                                     "  - {name: w, op: Concat, inputs: [z, z], attrs: {axis: 0}}\n"));
    fx_place(&f, 0, "y=1 z=1");
    CU_ASSERT_FATAL(fx_build(&f, devs, 2));
    CU_ASSERT_EQUAL(f.parts.n_pairs, 4);
    const tgc_partition_pair *a_dev = pair_of_key(&f, "cpu0;gpu0;a");
    const tgc_partition_pair *a_host = pair_of_key(&f, "cpu0;gpu0;a;host");
    const tgc_partition_pair *shp = pair_of_key(&f, "cpu0;gpu0;shp;host");
    const tgc_partition_pair *z = pair_of_key(&f, "gpu0;cpu0;z");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a_dev);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a_host);
    CU_ASSERT_PTR_NOT_NULL_FATAL(shp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(z);
    CU_ASSERT_PTR_NULL(pair_of_key(&f, "cpu0;gpu0;shp"));
    CU_ASSERT(!a_dev->recv_host_memory && a_host->recv_host_memory && shp->recv_host_memory);
    CU_ASSERT(z->send_host_memory && !z->recv_host_memory);
    CU_ASSERT_EQUAL(shp->dtype, TGC_INT64);
    CU_ASSERT_EQUAL(shp->bytes, 16);
    /* The nodes say it too. */
    const tgc_node *hr = node_in(&f, "gpu0", "shp/_hostrecv_cpu0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(hr);
    CU_ASSERT_EQUAL(attr_i(hr, "host_memory"), 1);
    CU_ASSERT_STRING_EQUAL(attr_s(hr, "key"), "cpu0;gpu0;shp;host");
    CU_ASSERT_EQUAL(attr_i(node_in(&f, "gpu0", "a/_recv_cpu0"), "host_memory"), 0);
    CU_ASSERT_EQUAL(attr_i(node_in(&f, "gpu0", "a/_hostrecv_cpu0"), "host_memory"), 1);
    CU_ASSERT_EQUAL(attr_i(node_in(&f, "cpu0", "a/_send_gpu0_host"), "host_memory"), 0);
    CU_ASSERT_EQUAL(attr_i(node_in(&f, "gpu0", "z/_send_cpu0"), "host_memory"), 1);
    CU_ASSERT_EQUAL(attr_i(node_in(&f, "cpu0", "z/_recv_gpu0"), "host_memory"), 0);
    CU_ASSERT_STRING_EQUAL(input_name(&f, "gpu0", "y", 0), "a/_recv_cpu0");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "gpu0", "y", 1), "shp/_hostrecv_cpu0");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "gpu0", "z", 0), "a/_hostrecv_cpu0");
    /* The compile-time value of shp travels with its _Recv: [N, 4]. */
    const tgc_tensor_info *v = &hr->outputs[0];
    CU_ASSERT_EQUAL(v->value_len, 2);
    check_dumps_load(&f, NULL);
    fx_end(&f);
}

/* ---- graph inputs ------------------------------------------------------------------ */

static void test_inputs_feeding_two_devices(void) {
    static const tgc_placer_device devs[] = {CPU0, CPU1, GPU0};
    fx f;
    CU_ASSERT_FATAL(fx_load_text(&f, "format: tgc/1\n"
                                     "inputs:\n"
                                     "  - {name: x, dtype: float32, shape: [N, 4]}\n"
                                     "  - {name: u, dtype: float32, shape: [N, 4]}\n"
                                     "outputs: [a, b, c]\n"
                                     "nodes:\n"
                                     "  - {name: a, op: Relu, inputs: [x]}\n"
                                     "  - {name: b, op: Neg, inputs: [x]}\n"
                                     "  - {name: c, op: Add, inputs: [x, u]}\n"));
    fx_place(&f, 0, "u=2 b=1 c=2");
    CU_ASSERT_FATAL(fx_build(&f, devs, 3));
    CU_ASSERT_EQUAL(f.parts.n_pairs, 2);
    CU_ASSERT_PTR_NOT_NULL(pair_of_key(&f, "cpu0;cpu1;x"));
    CU_ASSERT_PTR_NOT_NULL(pair_of_key(&f, "cpu0;gpu0;x"));
    /* x is fed to cpu0's partition, u to gpu0's; cpu1 has no input. */
    const tgc_graph *c0 = part_graph(&f, "cpu0"), *c1 = part_graph(&f, "cpu1"), *g0 = part_graph(&f, "gpu0");
    CU_ASSERT_EQUAL(c0->n_inputs_nodes, 1);
    CU_ASSERT_EQUAL(c1->n_inputs_nodes, 0);
    CU_ASSERT_EQUAL(g0->n_inputs_nodes, 1);
    CU_ASSERT_STRING_EQUAL(c0->nodes[0].name, "x");
    CU_ASSERT_EQUAL(c0->nodes[0].kind, TGC_NODE_INPUT);
    CU_ASSERT_STRING_EQUAL(g0->nodes[0].name, "u");
    int32_t x = tgc_graph_find(f.g, "x"), u = tgc_graph_find(f.g, "u");
    CU_ASSERT_EQUAL(f.parts.part_of[x], part_of_device(&f, "cpu0"));
    CU_ASSERT_EQUAL(f.parts.local_id[x], 0);
    CU_ASSERT_EQUAL(f.parts.part_of[u], part_of_device(&f, "gpu0"));
    /* The input's declared shape is kept where it is fed, with its symbol. */
    CU_ASSERT_EQUAL(c0->nodes[0].outputs[0].shape.rank, 2);
    CU_ASSERT_STRING_EQUAL(c0->symbols[c0->nodes[0].outputs[0].shape.dims[0].sym], "N");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "gpu0", "c", 0), "x/_recv_cpu0");
    CU_ASSERT_STRING_EQUAL(input_name(&f, "gpu0", "c", 1), "u");
    CU_ASSERT_EQUAL(f.parts.outputs[2].part, part_of_device(&f, "gpu0"));
    check_dumps_load(&f, NULL);
    fx_end(&f);
}

/* A name the partitioner would give an added node, already taken. */
static void test_added_names_unique(void) {
    static const tgc_placer_device devs[] = {CPU0, CPU1};
    fx f;
    CU_ASSERT_FATAL(fx_load_text(&f, "format: tgc/1\n"
                                     "inputs:\n"
                                     "  - {name: x, dtype: float32, shape: [4]}\n"
                                     "outputs: [a/_recv_cpu0]\n"
                                     "nodes:\n"
                                     "  - {name: a, op: Relu, inputs: [x]}\n"
                                     "  - {name: a/_recv_cpu0, op: Neg, inputs: [a]}\n"));
    fx_place(&f, 0, "a/_recv_cpu0=1");
    CU_ASSERT_FATAL(fx_build(&f, devs, 2));
    CU_ASSERT_PTR_NOT_NULL(node_in(&f, "cpu1", "a/_recv_cpu0_2"));
    CU_ASSERT_STRING_EQUAL(node_in(&f, "cpu1", "a/_recv_cpu0_2")->op_name, "_Recv");
    CU_ASSERT_STRING_EQUAL(node_in(&f, "cpu1", "a/_recv_cpu0")->op_name, "Neg");
    check_dumps_load(&f, NULL);
    fx_end(&f);
}

/* ---- every example -------------------------------------------------------------------- */

static int yaml_files(const char *dir, char files[][512], int max, int n) {
    DIR *d = opendir(tgc_test_path(dir));
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < max) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0)
            snprintf(files[n++], 512, "%s/%s", tgc_test_path(dir), e->d_name);
    }
    closedir(d);
    return n;
}

/* Over cpu0,cpu1 with devices alternating by node id, every edge between
 * consecutive ids crosses: the union check and the dumps see many pairs. */
static void test_union_on_every_example(void) {
    static const tgc_placer_device devs[] = {CPU0, CPU1};
    static char files[64][512];
    int n = yaml_files("examples/digits", files, 64, 0);
    n = yaml_files("tests/data/good", files, 64, n);
    CU_ASSERT(n >= 8);
    for (int i = 0; i < n; i++) {
        fx f;
        bool ok = fx_load_file(&f, files[i]);
        CU_ASSERT(ok);
        if (!ok) {
            fx_end(&f);
            continue;
        }
        f.device = tgc_malloc(((size_t)f.g->n_nodes + 1) * sizeof *f.device);
        for (int32_t id = 0; id < f.g->n_nodes; id++) f.device[id] = id % 2;
        f.placement = (tgc_placement){.n_nodes = f.g->n_nodes, .device = f.device};
        ok = fx_build(&f, devs, 2);
        if (!ok) fprintf(stderr, "\n%s: partitioning failed\n", files[i]);
        CU_ASSERT(ok);
        if (ok) {
            CU_ASSERT(f.parts.n_pairs > 0);
            char dir[512];
            memcpy(dir, files[i], sizeof dir);
            *strrchr(dir, '/') = '\0';
            check_dumps_load(&f, dir);
        }
        fx_end(&f);
    }
}

/* ---- the digits CNN over cpu0,gpu0 ------------------------------------------------------ */

/* No pair takes a shape value (an integer tensor) through GPU memory: an
 * integer pair into gpu0 is a _HostRecv, one out of gpu0 a host-memory
 * _Send; every device-memory pair carries a float tensor. */
static void check_no_shape_value_on_gpu(const fx *f) {
    for (int32_t i = 0; i < f->parts.n_pairs; i++) {
        const tgc_partition_pair *pr = &f->parts.pairs[i];
        bool is_float = pr->dtype == TGC_FLOAT32 || pr->dtype == TGC_FLOAT16;
        bool to_gpu = strncmp(f->parts.parts[pr->recv_part].device_name, "gpu", 3) == 0;
        bool from_gpu = strncmp(f->parts.parts[pr->send_part].device_name, "gpu", 3) == 0;
        if (!is_float) {
            CU_ASSERT(!to_gpu || pr->recv_host_memory);
            CU_ASSERT(!from_gpu || pr->send_host_memory);
        }
        CU_ASSERT(pr->send_part != pr->recv_part);
    }
}

static void test_digits_cnn_cpu_gpu(void) {
    static const tgc_placer_device devs[] = {CPU0, GPU0};
    fx f;
    CU_ASSERT_FATAL(fx_load_file(&f, tgc_test_path("examples/digits/cnn.yaml")));
    /* The placement the placer's rules give (docs: DESIGN "Placement"): the
     * float work on gpu0, Shape with its input, the integer shape
     * arithmetic and its constants on the host cpu. */
    fx_place(&f, 1, "zero=0 axes0=0 minus1=0 batch=0 batch1=0 flat_shape=0");
    CU_ASSERT_FATAL(fx_build(&f, devs, 2));
    /* Derived by hand: Shape's output (host memory on gpu0) goes to the
     * cpu, the target shape comes back into host memory for Reshape. */
    CU_ASSERT_EQUAL(f.parts.n_pairs, 2);
    const tgc_partition_pair *fs = pair_of_key(&f, "gpu0;cpu0;feat_shape");
    const tgc_partition_pair *target = pair_of_key(&f, "cpu0;gpu0;flat_shape;host");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(target);
    CU_ASSERT(fs->send_host_memory);
    CU_ASSERT(target->recv_host_memory);
    CU_ASSERT_EQUAL(fs->bytes, 32);
    CU_ASSERT_EQUAL(target->bytes, 16);
    check_no_shape_value_on_gpu(&f);
    /* gpu0: x, the 8 weights, the 12 ops not on cpu0 (conv1..pool2,
     * feat_shape, flat, fc1, relu3, logits, probs), a _Send, a _HostRecv. */
    CU_ASSERT_EQUAL(part_graph(&f, "gpu0")->n_nodes, 1 + 8 + 12 + 2);
    /* cpu0: zero, axes0, minus1, batch, batch1, flat_shape, and a _Recv, a _Send. */
    CU_ASSERT_EQUAL(part_graph(&f, "cpu0")->n_nodes, 3 + 3 + 2);
    CU_ASSERT_EQUAL(f.parts.outputs[0].part, part_of_device(&f, "gpu0"));
    check_dumps_load(&f, tgc_test_path("examples/digits"));
    fx_end(&f);

    /* The convolutions on the cpu and the classifier on gpu0: one pair, the
     * float features where they change device; the weights go with their
     * consumers and never cross. */
    CU_ASSERT_FATAL(fx_load_file(&f, tgc_test_path("examples/digits/cnn.yaml")));
    fx_place(&f, 0, "fc1=1 relu3=1 logits=1 probs=1 fc1.w=1 fc1.b=1 fc2.w=1 fc2.b=1");
    CU_ASSERT_FATAL(fx_build(&f, devs, 2));
    CU_ASSERT_EQUAL(f.parts.n_pairs, 1);
    const tgc_partition_pair *flat = pair_of_key(&f, "cpu0;gpu0;flat");
    CU_ASSERT_PTR_NOT_NULL_FATAL(flat);
    CU_ASSERT_EQUAL(flat->dtype, TGC_FLOAT32);
    CU_ASSERT_EQUAL(flat->bytes, 64 * 4);
    CU_ASSERT(!flat->recv_host_memory);
    check_no_shape_value_on_gpu(&f);
    fx_end(&f);
}

/* ---- dumps --------------------------------------------------------------------------- */

static void test_json_and_dot(void) {
    static const tgc_placer_device devs[] = {CPU0, CPU1};
    fx f;
    CU_ASSERT_FATAL(fx_load_text(&f, dedup_yaml));
    fx_place(&f, 1, "x=0 a=0");
    CU_ASSERT_FATAL(fx_build(&f, devs, 2));
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    CU_ASSERT_EQUAL(tgc_partition_dump_json(&f.parts, m, f.diags), TGC_OK);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"key\": \"cpu0;cpu1;a\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"send_node\": \"a/_send_cpu1\", \"recv_node\": \"a/_recv_cpu0\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"shape\": [\"N\", 4], \"bytes\": 16"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "{\"send_device\": \"cpu0\", \"recv_device\": \"cpu1\", \"pairs\": 1"));
    free(text);
    text = NULL;
    m = open_memstream(&text, &len);
    CU_ASSERT_EQUAL(tgc_partition_dump_dot(&f.parts, m, f.diags), TGC_OK);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "subgraph cluster_0 {\n    label=\"cpu0\";"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "subgraph cluster_1 {\n    label=\"cpu1\";"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"cpu0/a/_send_cpu1\" -> \"cpu1/a/_recv_cpu0\" [style=dashed"));
    free(text);
    fx_end(&f);
}

/* ---- validation catches what is wrong ---------------------------------------------------- */

static void test_validate_rejects(void) {
    static const tgc_placer_device devs[] = {CPU0, CPU1};
    fx f;
    CU_ASSERT_FATAL(fx_load_text(&f, dedup_yaml));
    fx_place(&f, 1, "x=0 a=0");
    CU_ASSERT_FATAL(fx_build(&f, devs, 2));
    tgc_graph *g1 = f.parts.parts[1].graph;
    tgc_node *recv = &g1->nodes[tgc_graph_find(g1, "a/_recv_cpu0")];
    tgc_attr *key = (tgc_attr *)tgc_node_attr(recv, "key");
    /* A _Recv with no _Send. */
    char *saved = key->s;
    key->s = tgc_strdup("cpu0;cpu1;nothing");
    tgc_diags *d = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_partition_validate(f.g, &f.parts, d), TGC_ERR_INVALID);
    CU_ASSERT(tgc_diags_error_count(d) >= 1);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(d, 0), "bad-partition");
    tgc_free(key->s);
    key->s = saved;
    tgc_diags_free(d);
    /* An edge rewired: b reads c instead of a. */
    tgc_node *b = &g1->nodes[tgc_graph_find(g1, "b")];
    int32_t was = b->inputs[0].node;
    b->inputs[0].node = tgc_graph_find(g1, "c");
    d = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_partition_validate(f.g, &f.parts, d), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(d, 0), "input 0 of 'b' reads 'c:0'; the original reads 'a:0'"));
    b->inputs[0].node = was;
    tgc_diags_free(d);
    /* A cycle: c reads d, d reads c. */
    tgc_node *c = &g1->nodes[tgc_graph_find(g1, "c")], *dn = &g1->nodes[tgc_graph_find(g1, "d")];
    c->inputs[0].node = tgc_graph_find(g1, "d");
    dn->inputs[0].node = tgc_graph_find(g1, "c");
    d = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_partition_validate(f.g, &f.parts, d), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(d, 0), "cycle"));
    tgc_diags_free(d);
    c->inputs[0].node = was;
    dn->inputs[0].node = was;
    d = tgc_diags_create();
    CU_ASSERT_EQUAL(tgc_partition_validate(f.g, &f.parts, d), TGC_OK);
    tgc_diags_free(d);
    fx_end(&f);
}

static void test_bad_placement(void) {
    static const tgc_placer_device devs[] = {CPU0, CPU1};
    fx f;
    CU_ASSERT_FATAL(fx_load_text(&f, dedup_yaml));
    fx_place(&f, 0, "b=2");
    tgc_status s = tgc_partition_build(f.g, &f.placement, devs, 2, f.diags, &f.parts);
    CU_ASSERT_EQUAL(s, TGC_ERR_INVALID);
    CU_ASSERT_EQUAL(f.parts.n_parts, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(f.diags, 0), "node 'b' is placed on device 2"));
    fx_end(&f);
}

/* Every allocation the partitioner makes may fail: each failure is a clean
 * TGC_ERR_NOMEM that leaves nothing behind. */
static void test_out_of_memory(void) {
    static const tgc_placer_device devs[] = {CPU0, GPU0};
    fx f;
    CU_ASSERT_FATAL(fx_load_file(&f, tgc_test_path("tests/data/good/split_control.yaml")));
    f.device = tgc_malloc(((size_t)f.g->n_nodes + 1) * sizeof *f.device);
    for (int32_t id = 0; id < f.g->n_nodes; id++) f.device[id] = id % 2;
    f.placement = (tgc_placement){.n_nodes = f.g->n_nodes, .device = f.device};
    int failures = 0;
    for (int64_t nth = 1; nth < 100000; nth++) {
        tgc_host_alloc_stats before = tgc_host_alloc_stats_get();
        tgc_diags *d = tgc_diags_create();
        tgc_partitioning parts;
        tgc_host_alloc_fail_nth(nth);
        tgc_status s = tgc_partition_build(f.g, &f.placement, devs, 2, d, &parts);
        tgc_host_alloc_fail_nth(0);
        int64_t made = tgc_host_alloc_stats_get().num_allocs - before.num_allocs;
        if (s == TGC_OK) {
            /* A failure it could do without (a size hint) leaves a sound result. */
            CU_ASSERT_EQUAL(tgc_partition_validate(f.g, &parts, d), TGC_OK);
            tgc_partitioning_release(&parts);
        } else {
            failures++;
            CU_ASSERT_EQUAL(s, TGC_ERR_NOMEM);
        }
        tgc_diags_free(d);
        CU_ASSERT_EQUAL(tgc_host_alloc_stats_get().live_blocks, before.live_blocks);
        if (s == TGC_OK && made + 1 < nth) break; /* the nth allocation never came: all done */
    }
    CU_ASSERT(failures > 50);
    fx_end(&f);
}

TGC_TEST_MAIN("partition", {"one pair per tensor and device however many consumers", test_dedup},
              {"small constants are copied, not sent", test_small_constants_copied},
              {"a chain across cpu0, cpu1 and gpu0", test_chain_three_devices},
              {"control edges become pairs of an empty tensor", test_control_edges},
              {"one control source, two devices", test_control_to_two_devices},
              {"host-memory receives and sends", test_host_memory_receives},
              {"graph inputs feeding two devices", test_inputs_feeding_two_devices},
              {"added names never take a user's name", test_added_names_unique},
              {"union of partitions is the graph, on every example", test_union_on_every_example},
              {"digits CNN over cpu0,gpu0", test_digits_cnn_cpu_gpu},
              {"JSON and DOT dumps", test_json_and_dot},
              {"validation rejects broken partitions", test_validate_rejects},
              {"a placement out of range", test_bad_placement},
              {"out of memory anywhere", test_out_of_memory})
