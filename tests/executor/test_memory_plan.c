/* The static memory plan, limits and the memory report: offsets and lower
 * bounds on hand-made lifetimes and graphs (numbers derived by hand in the
 * comments), the digits CNN with N = 400 against what a real run measures,
 * a run past a memory limit (a clean error, nothing left behind) and the
 * report's lines. */
#include "tests/harness.h"

#include "executor/memory_plan.h"
#include "support/parse_size.h"
#include "executor/session.h"
#include "tgc.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the core, on bare lifetimes ---------------------------------------------- */

/* Four buffers in a chain (sizes in units of 64 bytes, steps 5..8):
 *   a 2u [5,6], b 1u [6,7], c 1u [7,8], d 2u [8,8].
 * Lower bound: step 6: a+b = 3u; step 7: b+c = 2u; step 8: c+d = 3u -> 3u,
 * first at step 6.
 * Greedy by size (a, d, then b, c by first step):
 *   a @0; d [8,8] does not meet a -> @0; b meets a (0..2u) -> @2u;
 *   c meets b (2u..3u) and d (0..2u): no gap fits below 3u -> @3u.
 * Arena 4u > 3u: greedy by size is a heuristic. In order of first use
 * (a, b, c, d): a @0; b meets a -> @2u; c meets b: the gap [0, 2u) ->
 * @0; d meets c (0..1u) -> @1u. Arena 3u, the lower bound: kept. */
static void test_greedy_can_exceed_lower_bound(void) {
    tgc_memory_buffer b[] = {{128, 5, 6, 0, -1}, {64, 6, 7, 0, -1}, {64, 7, 8, 0, -1}, {128, 8, 8, 0, -1}};
    int64_t arena = -1;
    CU_ASSERT_EQUAL(tgc_memory_assign_offsets(b, 4, 9, 64, &arena), TGC_OK);
    CU_ASSERT_EQUAL(b[0].offset, 0);
    CU_ASSERT_EQUAL(b[1].offset, 128);
    CU_ASSERT_EQUAL(b[2].offset, 0);
    CU_ASSERT_EQUAL(b[3].offset, 64);
    CU_ASSERT_EQUAL(arena, 192);
    int32_t busiest = -2;
    CU_ASSERT_EQUAL(tgc_memory_lower_bound(b, 4, 9, &busiest), 192);
    CU_ASSERT_EQUAL(busiest, 6);
}

/* The other way round (units of 64 bytes): a 1u [1,2], b 2u [2,3],
 * c 2u [3,4]; lower bound 4u (step 3: b + c). In order of first use: a @0;
 * b meets a -> @1u; c meets b (1u..3u), the gap [0, 1u) is too small ->
 * @3u: arena 5u. By size (b, c, then a): b @0; c meets b -> @2u; a meets
 * b (0..2u) -> @2u: arena 4u, kept. */
static void test_smaller_packing_kept(void) {
    tgc_memory_buffer b[] = {{64, 1, 2, 0, -1}, {128, 2, 3, 0, -1}, {128, 3, 4, 0, -1}};
    int64_t arena = -1;
    CU_ASSERT_EQUAL(tgc_memory_assign_offsets(b, 3, 5, 64, &arena), TGC_OK);
    CU_ASSERT_EQUAL(b[0].offset, 128);
    CU_ASSERT_EQUAL(b[1].offset, 0);
    CU_ASSERT_EQUAL(b[2].offset, 128);
    CU_ASSERT_EQUAL(arena, 256);
}

/* TFLite takes the smallest gap that fits, not the lowest (sizes in units
 * of 64 bytes, steps 0..3):
 *   p 1u [3,3], q 1u [1,2], r 3u [1,2], s 1u [2,3], t 2u [2,3].
 * Order: r (3u), t (2u), then the 1u ones by first step: q, s, p.
 *   r @0; t meets r -> @3u; q meets r, t -> @5u; s meets r, t, q -> @6u;
 *   p [3,3] meets t (3u..5u) and s (6u..7u): gaps [0, 3u) and [5u, 6u):
 *   the smaller wins -> @5u (first fit would say 0). Arena 7u; the lower
 *   bound, step 2: r+q+s+t = 7u. */
static void test_smallest_gap_wins(void) {
    tgc_memory_buffer b[] = {{64, 3, 3, 0, -1}, {64, 1, 2, 0, -1}, {192, 1, 2, 0, -1}, {64, 2, 3, 0, -1},
                             {128, 2, 3, 0, -1}};
    int64_t arena = 0;
    CU_ASSERT_EQUAL(tgc_memory_assign_offsets(b, 5, 4, 64, &arena), TGC_OK);
    int64_t want[] = {320, 320, 0, 384, 192};
    for (int i = 0; i < 5; i++) CU_ASSERT_EQUAL(b[i].offset, want[i]);
    CU_ASSERT_EQUAL(arena, 448);
    int32_t busiest;
    CU_ASSERT_EQUAL(tgc_memory_lower_bound(b, 5, 4, &busiest), 448);
    CU_ASSERT_EQUAL(busiest, 2);
}

/* A buffer live for the whole run goes first, at offset 0, whatever its
 * size; offsets are aligned: w 8 bytes [0,3], big 256 [1,2], small 100 [2,3]
 * with alignment 64: w @0; big meets w (0..8) -> @64; small meets both ->
 * @320; arena 420. Nothing live: arena 0, lower bound 0. */
static void test_whole_run_first_and_alignment(void) {
    tgc_memory_buffer b[] = {{8, 0, 3, 0, -1}, {256, 1, 2, 0, -1}, {100, 2, 3, 0, -1}};
    int64_t arena = 0;
    CU_ASSERT_EQUAL(tgc_memory_assign_offsets(b, 3, 4, 64, &arena), TGC_OK);
    CU_ASSERT_EQUAL(b[0].offset, 0);
    CU_ASSERT_EQUAL(b[1].offset, 64);
    CU_ASSERT_EQUAL(b[2].offset, 320);
    CU_ASSERT_EQUAL(arena, 420);
    int32_t busiest;
    CU_ASSERT_EQUAL(tgc_memory_lower_bound(b, 3, 4, &busiest), 364); /* step 2 */
    CU_ASSERT_EQUAL(tgc_memory_assign_offsets(b, 0, 4, 64, &arena), TGC_OK);
    CU_ASSERT_EQUAL(arena, 0);
    CU_ASSERT_EQUAL(tgc_memory_lower_bound(b, 0, 4, &busiest), 0);
    CU_ASSERT_EQUAL(busiest, -1);
}

/* ---- hand-made graphs ----------------------------------------------------------- */

/* A graph with input x: float32 [1, 16], initializers w<i> of the given
 * [rows, cols] (values 0.01), and `nodes` as written. Node ids (the
 * schedule's steps): x is 0, w1.. are 1.., then the nodes in order. */
static tgc_graph *make_graph(const char *outputs, const int (*w)[2], int n_w, const char *nodes) {
    size_t size = 4096 + strlen(nodes);
    for (int i = 0; i < n_w; i++) size += (size_t)w[i][0] * (size_t)w[i][1] * 6;
    char *text = malloc(size);
    size_t at = (size_t)snprintf(text, size,
                                 "format: tgc/1\nname: hand\ninputs:\n  - {name: x, dtype: float32, shape: [1, 16]}\n"
                                 "outputs: [%s]\ninitializers:\n",
                                 outputs);
    for (int i = 0; i < n_w; i++) {
        at += (size_t)snprintf(text + at, size - at, "  - {name: w%d, dtype: float32, shape: [%d, %d], values: [", i + 1,
                               w[i][0], w[i][1]);
        for (int k = 0; k < w[i][0] * w[i][1]; k++) at += (size_t)snprintf(text + at, size - at, "%s0.01", k ? "," : "");
        at += (size_t)snprintf(text + at, size - at, "]}\n");
    }
    snprintf(text + at, size - at, "nodes:\n%s", nodes);
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load_string(text, strlen(text), "hand.yaml", NULL, d, &g) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    free(text);
    return g;
}

static tgc_memory_plan *plan_of(const tgc_graph *g, const char *devices, const char *bind) {
    tgc_diags *d = tgc_diags_create();
    tgc_memory_plan *mp = NULL;
    /* the planner's arithmetic on the graph as written (no passes) */
    tgc_memory_plan_options o = {.bind = bind, .optimize = TGC_OPTIMIZE_NONE};
    if (tgc_graph_memory_plan(g, devices, &o, d, &mp) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return mp;
}

/* The memory (a device's, or "host") of the plan by name. */
static tgc_memory_plan_figures figures_of(const tgc_memory_plan *mp, const char *device) {
    for (int i = 0; i < tgc_memory_plan_count(mp); i++) {
        tgc_memory_plan_figures f = tgc_memory_plan_get(mp, i);
        if (strcmp(f.device, device) == 0) return f;
    }
    tgc_memory_plan_figures none = {.planned_peak = -1};
    return none;
}

/* Runs g once on `devices` with x = zeros [1, 16]; returns the bytes device
 * 0 held at its peak beyond what it held before (the weights): the
 * measured peak of the run's tensors. */
static int64_t measured_peak(const tgc_graph *g, const char *devices, int device) {
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    int64_t peak = -1;
    if (tgc_session_create(g, devices, NULL, d, &s) == TGC_OK) {
        tgc_tensor *x = NULL, *outs[4] = {NULL};
        tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){1, 16}, NULL, &x);
        const char *names[] = {"x"};
        tgc_memory_figures before = tgc_session_memory(s, device);
        if (tgc_session_run(s, 1, names, &x, outs, d) == TGC_OK)
            peak = tgc_session_memory(s, device).peak_bytes_in_use - before.bytes_in_use;
        for (int i = 0; i < tgc_session_output_count(s); i++) tgc_tensor_release(outs[i]);
        tgc_tensor_release(x);
        tgc_session_free(s);
    }
    tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return peak;
}

/* A chain whose Relus work in place (the executor forwards each MatMul's
 * buffer to its Relu, the MatMul's last reader):
 *   steps: x 0, w1 1, w2 2, a 3, b 4, c 5, d 6
 *   a = x @ w1 [1, 64] 256 B; b = Relu(a) in a's buffer; c = b @ w2 [1, 32]
 *   128 B; d = Relu(c) in c's buffer, a graph output (to step 6).
 *   Buffers: {a, b} 256 B [3, 5]; {c, d} 128 B [5, 6].
 *   Lower bound: step 5: 384. Arena: {a,b} @0, {c,d} @256: 384.
 *   Naive: 256 + 256 + 128 + 128 = 768. Weights: none resident; each MatMul
 *   is one row by an initializer, which its kernel holds in column panels
 *   instead ((16*64 + 64*32) * 4 = 12288 B of kernel caches), the
 *   originals let go.
 *   A run holds exactly the lower bound at c. */
static void test_chain_forwards_in_place(void) {
    const int w[][2] = {{16, 64}, {64, 32}};
    tgc_graph *g = make_graph("d", w, 2,
                              "  - {name: a, op: MatMul, inputs: [x, w1]}\n"
                              "  - {name: b, op: Relu, inputs: [a]}\n"
                              "  - {name: c, op: MatMul, inputs: [b, w2]}\n"
                              "  - {name: d, op: Relu, inputs: [c]}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_memory_plan *mp = plan_of(g, "cpu", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    CU_ASSERT_EQUAL(tgc_memory_plan_count(mp), 1); /* nothing in host memory */
    tgc_memory_plan_figures f = figures_of(mp, "cpu0");
    CU_ASSERT_EQUAL(f.weights_bytes, 0);
    CU_ASSERT_EQUAL(f.lower_bound, 384);
    CU_ASSERT_EQUAL(f.planned_peak, 384);
    CU_ASSERT_EQUAL(f.naive_sum, 768);
    CU_ASSERT_EQUAL(f.tensors, 4);
    const tgc_memory_space *sp = &mp->spaces[0];
    CU_ASSERT_EQUAL_FATAL(sp->n_buffers, 2);
    CU_ASSERT_EQUAL(sp->buffers[0].bytes, 256);
    CU_ASSERT_EQUAL(sp->buffers[0].first, 3);
    CU_ASSERT_EQUAL(sp->buffers[0].last, 5);
    CU_ASSERT_EQUAL(sp->buffers[0].offset, 0);
    CU_ASSERT_EQUAL(sp->buffers[1].first, 5);
    CU_ASSERT_EQUAL(sp->buffers[1].last, 6);
    CU_ASSERT_EQUAL(sp->buffers[1].offset, 256);
    CU_ASSERT_EQUAL(sp->busiest_step, 5);
    CU_ASSERT_EQUAL(sp->feeds_bytes, 64); /* x, read in place */
    CU_ASSERT_EQUAL(measured_peak(g, "cpu", 0), 384);
    tgc_memory_plan_free(mp);
    tgc_graph_free(g);
}

/* A diamond: a feeds b and c, which meet in d.
 *   steps: x 0, w1 1, w2 2, w3 3, a 4, b 5, c 6, d 7
 *   a = x @ w1 [1, 64] 256 B [4, 6]; b = a @ w2 [1, 32] 128 B [5, 7];
 *   c = a @ w3 [1, 16] 64 B [6, 7]; d = Concat(b, c) [1, 48] 192 B [7, 7].
 *   d takes b and c in place (executor/concat_in_place.h): b at byte 0 of
 *   d's buffer, c at 128, one buffer of 192 B from b's step to d's, [5, 7].
 *   Lower bound: steps 5 and 6: a + d's buffer = 448 (copying, step 6 held
 *   a+b+c = 448 too, and step 7 b+c+d = 384).
 *   Greedy: a @0; d's buffer meets a -> @256. Arena 448. Naive 640.
 *   A run holds 448 whatever order b and c take: a lives until both ran. */
static void test_diamond(void) {
    const int w[][2] = {{16, 64}, {64, 32}, {64, 16}};
    tgc_graph *g = make_graph("d", w, 3,
                              "  - {name: a, op: MatMul, inputs: [x, w1]}\n"
                              "  - {name: b, op: MatMul, inputs: [a, w2]}\n"
                              "  - {name: c, op: MatMul, inputs: [a, w3]}\n"
                              "  - {name: d, op: Concat, inputs: [b, c], attrs: {axis: 1}}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_memory_plan *mp = plan_of(g, "cpu", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    tgc_memory_plan_figures f = figures_of(mp, "cpu0");
    CU_ASSERT_EQUAL(f.lower_bound, 448);
    CU_ASSERT_EQUAL(f.planned_peak, 448);
    CU_ASSERT_EQUAL(f.naive_sum, 640);
    const tgc_memory_space *sp = &mp->spaces[0];
    CU_ASSERT_EQUAL_FATAL(sp->n_buffers, 2); /* b and c lie in d's buffer: a Concat in place */
    int64_t offsets[] = {0, 256}, bytes[] = {256, 192}; /* a, d */
    int32_t first[] = {4, 5}, last[] = {6, 7};
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(sp->buffers[i].bytes, bytes[i]);
        CU_ASSERT_EQUAL(sp->buffers[i].offset, offsets[i]);
        CU_ASSERT_EQUAL(sp->buffers[i].first, first[i]);
        CU_ASSERT_EQUAL(sp->buffers[i].last, last[i]);
    }
    CU_ASSERT_EQUAL(sp->busiest_step, 5);
    int32_t live[TGC_MEMORY_TOP];
    CU_ASSERT_EQUAL_FATAL(tgc_memory_space_live_at(sp, 6, live, TGC_MEMORY_TOP), 2);
    CU_ASSERT_EQUAL(sp->tensors[live[0]].bytes, 256); /* a, then d's buffer by its newest part, c */
    CU_ASSERT_EQUAL(sp->tensors[live[1]].bytes, 64);
    CU_ASSERT_EQUAL(measured_peak(g, "cpu", 0), 448);
    tgc_memory_plan_free(mp);
    tgc_graph_free(g);
}

/* The chain of the first test as a graph: four MatMuls, sizes 128, 64, 64,
 * 128 bytes at steps 5..8 (x 0, w1..w4 1..4). Greedy by size would plan
 * 256; in order of first use, the lower bound 192; naive 384; a run needs
 * the lower bound (it frees as it goes, with no offsets to keep). */
static void test_graph_where_greedy_exceeds_lower_bound(void) {
    const int w[][2] = {{16, 32}, {32, 16}, {16, 16}, {16, 32}};
    tgc_graph *g = make_graph("d", w, 4,
                              "  - {name: a, op: MatMul, inputs: [x, w1]}\n"
                              "  - {name: b, op: MatMul, inputs: [a, w2]}\n"
                              "  - {name: c, op: MatMul, inputs: [b, w3]}\n"
                              "  - {name: d, op: MatMul, inputs: [c, w4]}\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_memory_plan *mp = plan_of(g, "cpu", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    tgc_memory_plan_figures f = figures_of(mp, "cpu0");
    CU_ASSERT_EQUAL(f.lower_bound, 192);
    CU_ASSERT_EQUAL(f.planned_peak, 192);
    CU_ASSERT_EQUAL(f.naive_sum, 384);
    int64_t m = measured_peak(g, "cpu", 0);
    CU_ASSERT(m >= f.lower_bound && m <= f.naive_sum);
    CU_ASSERT_EQUAL(m, 192);
    tgc_memory_plan_free(mp);
    tgc_graph_free(g);
}

/* Eight MatMuls at once on four threads, twenty runs, with the watch on:
 * every step gives back what it counted (each gauge's live bytes are 0
 * between runs), and the most it saw lies between the lower bound and the
 * naive sum. The MatMuls write into their places in y (a Concat in place:
 * one buffer of 2048 bytes, made once however many run at once). Run
 * under ThreadSanitizer too. */
static void test_watch_balances_under_parallel_runs(void) {
    const int w[][2] = {{16, 64}};
    char nodes[2048] = "";
    for (int i = 0; i < 8; i++) {
        char line[128];
        snprintf(line, sizeof line, "  - {name: m%d, op: MatMul, inputs: [x, w1]}\n", i);
        strcat(nodes, line);
    }
    strcat(nodes, "  - {name: y, op: Concat, inputs: [m0, m1, m2, m3, m4, m5, m6, m7], attrs: {axis: 1}}\n");
    tgc_graph *g = make_graph("y", w, 1, nodes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_memory_plan *mp = plan_of(g, "cpu", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    tgc_memory_plan_figures f = figures_of(mp, "cpu0");
    CU_ASSERT_EQUAL(f.lower_bound, 2048); /* y's buffer, the eight in it */
    CU_ASSERT_EQUAL(f.naive_sum, 8 * 256 + 2048);
    tgc_diags *d = tgc_diags_create();
    tgc_session *s = NULL;
    tgc_session_options o = {.threads = "cpu0=4", .memory_report = 1, .optimize = TGC_OPTIMIZE_NONE}; /* 8 MatMuls, not one */
    CU_ASSERT_EQUAL_FATAL(tgc_session_create(g, "cpu", &o, d, &s), TGC_OK);
    tgc_tensor *x = NULL;
    tgc_tensor_create(TGC_FLOAT32, 2, (int64_t[]){1, 16}, NULL, &x);
    const char *names[] = {"x"};
    for (int r = 0; r < 20; r++) {
        tgc_tensor *out = NULL;
        CU_ASSERT_EQUAL(tgc_session_run(s, 1, names, &x, &out, d), TGC_OK);
        tgc_tensor_release(out);
        for (int i = 0; i < s->watch->n_gauges; i++) CU_ASSERT_EQUAL(atomic_load(&s->watch->gauges[i].left), 0);
    }
    tgc_memory_gauge *gg = &s->watch->gauges[0];
    CU_ASSERT(gg->snapshot_bytes >= f.lower_bound && gg->snapshot_bytes <= f.naive_sum);
    CU_ASSERT_EQUAL(atomic_load(&gg->peak), gg->snapshot_bytes);
    CU_ASSERT_EQUAL(gg->snapshot_bytes, 2048);
    CU_ASSERT_EQUAL(tgc_session_memory(s, 0).peak_bytes_in_use - tgc_session_memory(s, 0).bytes_in_use, 2048);
    CU_ASSERT_EQUAL(gg->n_top, 1); /* the parts are counted in y's buffer */
    CU_ASSERT_STRING_EQUAL(gg->top[0].node, "y");
    CU_ASSERT_EQUAL(gg->top[0].bytes, 2048);
    CU_ASSERT_EQUAL(gg->top[0].rank, 2);
    tgc_tensor_release(x);
    tgc_session_free(s);
    tgc_diags_free(d);
    tgc_memory_plan_free(mp);
    tgc_graph_free(g);
}

/* ---- the digits CNN -------------------------------------------------------------- */

static tgc_graph *load_cnn(void) {
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    if (tgc_graph_load(tgc_test_path("examples/digits/cnn.yaml"), d, &g) != TGC_OK) tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    return g;
}

static bool have_gpu(void) {
    tgc_device_info info[4];
    return tgc_devices_list(info, 4) > 1;
}

/* N = 400 on cpu, by hand (float32 unless said; each Relu in place of its
 * producer, flat in place of pool2, batch1 in place of batch):
 *   conv1/relu1 [400,8,8,8] 819200   pool1 [400,8,4,4] 204800
 *   conv2/relu2 [400,16,4,4] 409600  pool2/flat [400,16,2,2] / [400,64] 102400
 *   batch/batch1 int64 8, flat_shape int64 [2] 16
 *   fc1/relu3 [400,32] 51200         logits, probs [400,10] 16000 each (outputs)
 *   feat_shape int64 [4] 32 in host memory (Shape's output)
 * Lower bound: at pool1, relu1's buffer and pool1: 1024000 (at conv2,
 * pool1 + conv2: 614400). Greedy: relu1 @0; conv2 (misses relu1) @0;
 * pool1 meets both -> @819200; arena 1024000. Naive: every tensor
 * 2*819200 + 204800 + 2*409600 + 2*102400 + 8 + 8 + 16 + 2*51200 + 2*16000
 * = 3001632. Weights: 14632 bytes of float32 + 2 int64 scalars read on cpu0
 * (zero, minus1) = 14648; axes0 (Unsqueeze's axes, a host argument) is
 * host memory: 8. */
static void test_digits_plan(void) {
    tgc_graph *g = load_cnn();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    tgc_memory_plan *mp = plan_of(g, "cpu", "N=400");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    tgc_memory_plan_figures f = figures_of(mp, "cpu0");
    CU_ASSERT_EQUAL(f.weights_bytes, 14648);
    CU_ASSERT_EQUAL(f.lower_bound, 1024000);
    CU_ASSERT_EQUAL(f.planned_peak, 1024000);
    CU_ASSERT_EQUAL(f.naive_sum, 3001632);
    CU_ASSERT_EQUAL(f.tensors, 14);
    tgc_memory_plan_figures h = figures_of(mp, "host");
    CU_ASSERT_EQUAL(h.weights_bytes, 8);
    CU_ASSERT_EQUAL(h.planned_peak, 32);
    const tgc_memory_space *sp = &mp->spaces[0];
    CU_ASSERT_STRING_EQUAL(mp->parts->parts[0].graph->nodes[sp->busiest_step].name, "pool1");
    CU_ASSERT_FALSE(mp->defaulted[0]);
    tgc_memory_plan_free(mp);

    /* Unbound, N is taken as 1, and the plan says so: 1/400 of the bytes. */
    mp = plan_of(g, "cpu", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    CU_ASSERT_TRUE(mp->defaulted[0]);
    CU_ASSERT_EQUAL(figures_of(mp, "cpu0").lower_bound, 2560);
    tgc_memory_plan_free(mp);

    /* On cpu,gpu0 the float work is gpu0's, and x is copied there (102400
     * more in the naive sum); shape arithmetic stays on cpu0: batch1 8 and
     * flat_shape 16 live together (24), 64-byte aligned offsets plan 72. */
    mp = plan_of(g, "cpu,gpu0", "N=400");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    f = figures_of(mp, "gpu0");
    CU_ASSERT_EQUAL(f.weights_bytes, 14632);
    CU_ASSERT_EQUAL(f.lower_bound, 1024000);
    CU_ASSERT_EQUAL(f.planned_peak, 1024000);
    CU_ASSERT_EQUAL(f.naive_sum, 3104000);
    f = figures_of(mp, "cpu0");
    CU_ASSERT_EQUAL(f.lower_bound, 24);
    CU_ASSERT_EQUAL(f.planned_peak, 72);
    tgc_memory_plan_free(mp);

    /* Bad --bind lists are refused, naming the graph's symbols. */
    tgc_diags *d = tgc_diags_create();
    tgc_memory_plan_options o = {.bind = "M=3"};
    CU_ASSERT_EQUAL(tgc_graph_memory_plan(g, "cpu", &o, d, &mp), TGC_ERR_INVALID);
    CU_ASSERT_PTR_NULL(mp);
    CU_ASSERT_PTR_NOT_NULL(strstr(tgc_diag_message(d, 0), "no symbol 'M' (its symbols: N)"));
    o.bind = "N=x";
    CU_ASSERT_EQUAL(tgc_graph_memory_plan(g, "cpu", &o, d, &mp), TGC_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(d, 1), "bad-bind");
    tgc_diags_free(d);
    tgc_graph_free(g);
}

typedef struct cnn_run {
    tgc_graph *g;
    tgc_session *s;
    tgc_tensor *x;
    tgc_diags *diags;
} cnn_run;

static bool cnn_open(cnn_run *r, const char *devices, const tgc_session_options *opts) {
    memset(r, 0, sizeof *r);
    r->diags = tgc_diags_create();
    r->g = load_cnn();
    if (r->g == NULL || tgc_tensor_load_npy(tgc_test_path("examples/digits/test_x.npy"), r->diags, &r->x) != TGC_OK)
        return false;
    return tgc_session_create(r->g, devices, opts, r->diags, &r->s) == TGC_OK;
}

static tgc_status cnn_run_once(cnn_run *r) {
    const char *names[] = {"x"};
    tgc_tensor *outs[2] = {NULL, NULL};
    tgc_status st = tgc_session_run(r->s, 1, names, &r->x, outs, r->diags);
    tgc_tensor_release(outs[0]);
    tgc_tensor_release(outs[1]);
    return st;
}

static void cnn_close(cnn_run *r) {
    tgc_session_free(r->s);
    tgc_tensor_release(r->x);
    tgc_graph_free(r->g);
    tgc_diags_free(r->diags);
}

/* Measured against predicted, device by device: the run's own tensors at
 * their peak (peak bytes in use less the weights held before) lie between
 * the lower bound and the naive sum. */
static void check_measured(const char *devices) {
    tgc_graph *g = load_cnn();
    tgc_memory_plan *mp = plan_of(g, devices, "N=400");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mp);
    cnn_run r;
    tgc_session_options o = {.memory_report = 1};
    CU_ASSERT_FATAL(cnn_open(&r, devices, &o));
    CU_ASSERT_EQUAL_FATAL(cnn_run_once(&r), TGC_OK);
    for (int i = 0; i < tgc_session_device_count(r.s); i++) {
        tgc_memory_plan_figures f = figures_of(mp, tgc_session_device_name(r.s, i));
        tgc_memory_figures now = tgc_session_memory(r.s, i);
        int64_t measured = now.peak_bytes_in_use - f.weights_bytes;
        printf("\n  digits CNN on %s, %s: predicted %lld, lower bound %lld, naive %lld, measured %lld (weights %lld)",
               devices, f.device, (long long)f.planned_peak, (long long)f.lower_bound, (long long)f.naive_sum,
               (long long)measured, (long long)f.weights_bytes);
        CU_ASSERT_EQUAL(now.bytes_in_use, f.weights_bytes); /* only the weights remain */
        CU_ASSERT(measured >= f.lower_bound);
        CU_ASSERT(measured <= f.naive_sum);
    }
    cnn_close(&r);
    tgc_memory_plan_free(mp);
    tgc_graph_free(g);
}

static void test_digits_measured_on_cpu(void) { check_measured("cpu"); }

static void test_digits_measured_on_cpu_gpu(void) {
    if (have_gpu()) check_measured("cpu,gpu0");
}

/* The report: the figures and the tensors live at the peak. */
static void test_digits_report(void) {
    cnn_run r;
    tgc_session_options o = {.memory_report = 1};
    CU_ASSERT_FATAL(cnn_open(&r, "cpu", &o));
    CU_ASSERT_EQUAL_FATAL(cnn_run_once(&r), TGC_OK);
    CU_ASSERT_EQUAL_FATAL(cnn_run_once(&r), TGC_OK);
    FILE *f = tmpfile();
    CU_ASSERT_EQUAL(tgc_session_memory_report(r.s, f), TGC_OK);
    char text[8192];
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    /* Columns are aligned with spaces; compare with each run of spaces as one. */
    size_t w = 0;
    for (size_t k = 0; k < n; k++)
        if (!(text[k] == ' ' && w > 0 && text[w - 1] == ' ')) text[w++] = text[k];
    text[w] = '\0';
    const char *want[] = {"after 2 runs",
                          "static plan for N=400",
                          "peak bytes in use 1038648 (weights 14648 + tensors 1024000)",
                          /* naive sum: every tensor once, the Relus absorbed into their Conv or Gemm
                           * (executor/fuse.c) included: they forward their producer's buffer, which
                           * the plan knows and the naive sum does not */
                          ("predicted peak 1038648 (weights 14648 + a step's tensors at their most 1024000; packed "
                           "in an arena 1024000, naive sum 3001632)"),
                          "measured peak 1038648 (weights 14648 + a step's tensors at their most 1024000)\n",
                          "in use at the end 14648 (the weights only)",
                          "reserved bytes ",
                          "allocations ",
                          "largest allocation 819200",
                          "fragmentation 0.000",
                          "live at the peak 1024000",
                          "relu1 float32 [400, 8, 8, 8] 819200",
                          "pool1 float32 [400, 8, 4, 4] 204800",
                          "feat_shape int64 [4] 32"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (strstr(text, want[i]) == NULL) printf("\n  missing '%s' in:\n%s", want[i], text);
        CU_ASSERT_PTR_NOT_NULL(strstr(text, want[i]));
    }
    cnn_close(&r);
}

/* Every allocation of a run failing in turn, with the watch on: each
 * failed step gives back all it counted, and the device all it allocated. */
static void test_watch_balances_when_runs_fail(void) {
    cnn_run r;
    tgc_session_options o = {.memory_report = 1};
    CU_ASSERT_FATAL(cnn_open(&r, "cpu", &o));
    tgc_memory_figures before = tgc_session_memory(r.s, 0);
    int failures = 0;
    for (int n = 1; n <= 40; n++) {
        tgc_device_fail_nth_alloc(n);
        tgc_status st = cnn_run_once(&r);
        tgc_device_fail_nth_alloc(0);
        failures += st != TGC_OK;
        for (int i = 0; i < r.s->watch->n_gauges; i++) CU_ASSERT_EQUAL(atomic_load(&r.s->watch->gauges[i].left), 0);
        tgc_memory_figures now = tgc_session_memory(r.s, 0);
        CU_ASSERT_EQUAL(now.live_buffers, before.live_buffers);
        CU_ASSERT_EQUAL(now.bytes_in_use, before.bytes_in_use);
    }
    CU_ASSERT(failures >= 10);
    cnn_close(&r);
}

/* ---- limits ------------------------------------------------------------------------ */

static void test_sizes(void) {
    struct {
        const char *text;
        int64_t bytes;
    } ok[] = {{"1000", 1000}, {"64MiB", 64 << 20}, {"512KiB", 512 << 10}, {"1GB", 1000000000},
              {"1.5kb", 1500}, {"2gib", INT64_C(2) << 30}, {"7B", 7}, {"1TiB", INT64_C(1) << 40}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t v = -1;
        CU_ASSERT_TRUE(tgc_parse_size(ok[i].text, strlen(ok[i].text), &v));
        CU_ASSERT_EQUAL(v, ok[i].bytes);
    }
    const char *bad[] = {"", "MiB", "1.", "-1", "1 MiB", "1XB", "99999999999TiB", "1.5.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v;
        CU_ASSERT_FALSE(tgc_parse_size(bad[i], strlen(bad[i]), &v));
    }
}

static bool contains(const tgc_diags *d, const char *what) {
    for (size_t i = 0; i < tgc_diags_count(d); i++)
        if (strstr(tgc_diag_message(d, i), what) != NULL) return true;
    return false;
}

/* A limit just below what a run needs: a clean error naming the node, the
 * tensor, the device and its figures; afterwards only the weights remain;
 * with enough memory the same session's next run passes. */
static void test_limit_just_below(void) {
    cnn_run r;
    CU_ASSERT_FATAL(cnn_open(&r, "cpu", NULL));
    CU_ASSERT_EQUAL_FATAL(cnn_run_once(&r), TGC_OK);
    tgc_memory_figures first = tgc_session_memory(r.s, 0);
    int64_t needed = first.peak_bytes_in_use; /* weights + the run's peak */
    cnn_close(&r);

    char spec[64];
    snprintf(spec, sizeof spec, "cpu0=%lld", (long long)needed - 1);
    tgc_session_options o = {.memory_limits = spec};
    CU_ASSERT_FATAL(cnn_open(&r, "cpu", &o));
    tgc_memory_figures before = tgc_session_memory(r.s, 0);
    CU_ASSERT_EQUAL(cnn_run_once(&r), TGC_ERR_NOMEM);
    CU_ASSERT_EQUAL(tgc_diags_error_count(r.diags), 1);
    CU_ASSERT_STRING_EQUAL(tgc_diag_rule(r.diags, 0), "out-of-memory");
    const char *msg = tgc_diag_message(r.diags, 0);
    printf("\n  %s", msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "node 'pool1' (MaxPool) on cpu0: out of memory allocating output 0 "
                                       "(float32 [400, 8, 4, 4], 204800 bytes); cpu0 has 833848 bytes in use"));
    char limit[64];
    snprintf(limit, sizeof limit, "limit %lld", (long long)needed - 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, limit));
    tgc_memory_figures after = tgc_session_memory(r.s, 0);
    CU_ASSERT_EQUAL(after.live_buffers, before.live_buffers);
    CU_ASSERT_EQUAL(after.bytes_in_use, before.bytes_in_use);
    cnn_close(&r);

    /* Enough: the peak, plus the arena's rounding of each buffer to 64 bytes. */
    snprintf(spec, sizeof spec, "cpu=%lld", (long long)needed + 4096);
    CU_ASSERT_FATAL(cnn_open(&r, "cpu", &o));
    CU_ASSERT_EQUAL(cnn_run_once(&r), TGC_OK);
    CU_ASSERT_EQUAL(cnn_run_once(&r), TGC_OK);
    cnn_close(&r);
}

/* Weights past the limit: the session is refused before it loads them
 * (14648 bytes of weights against 10000 less the 5% margin); the message
 * gives the figures; nothing stays allocated. */
static void test_limit_below_the_weights(void) {
    cnn_run r;
    tgc_session_options o = {.memory_limits = "cpu0=10000"};
    CU_ASSERT_FALSE(cnn_open(&r, "cpu", &o));
    CU_ASSERT_PTR_NULL(r.s);
    CU_ASSERT_TRUE(contains(r.diags, "cpu0 [does not fit] needs 14648 bytes (14.3 KiB): weights 14648"));
    CU_ASSERT_TRUE(contains(r.diags, "it has 9.8 KiB by --memory-limit (less the 5% margin: 9.3 KiB usable)"));
    cnn_close(&r);
}

static void test_bad_limit_specs(void) {
    const char *bad[] = {"cpu0", "cpu0=", "=1MiB", "gpu3=1MiB", "cpu0=0", "cpu0=12parsecs"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cnn_run r;
        tgc_session_options o = {.memory_limits = bad[i]};
        CU_ASSERT_FALSE(cnn_open(&r, "cpu", &o));
        CU_ASSERT_EQUAL(tgc_diags_error_count(r.diags), 1);
        if (tgc_diags_count(r.diags) > 0) CU_ASSERT_STRING_EQUAL(tgc_diag_rule(r.diags, 0), "bad-memory-limit");
        cnn_close(&r);
    }
}

/* A pipeline's sends: a = Relu(x) on cpu0, read in place by b = Neg(a) on
 * cpu1 (host memory to host memory). By hand, a is 256 x 256 x 4 = 262144
 * bytes; with K steps in flight cpu0 may run a step while cpu1 still reads
 * the K - 1 earlier steps' a, so cpu0's planned peak is K x 262144 (one
 * step's a, plus the sends held). The hard limit counts them: cpu0 limited
 * to what one step needs (less the margin) fits at --inflight 1 and is
 * refused at 2. */
static void test_pipelined_sends(void) {
    const char *yaml = "format: tgc/1\ninputs: [{name: x, dtype: float32, shape: [256, 256]}]\noutputs: [b]\n"
                       "nodes:\n  - {name: a, op: Relu, inputs: [x], device: cpu0}\n"
                       "  - {name: b, op: Neg, inputs: [a], device: cpu1}\n";
    tgc_diags *d = tgc_diags_create();
    tgc_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tgc_graph_load_string(yaml, strlen(yaml), "pipe.yaml", NULL, d, &g), TGC_OK);
    for (int k = 1; k <= 3; k++) {
        tgc_memory_plan_options o = {.max_inflight = k};
        tgc_memory_plan *mp = NULL;
        CU_ASSERT_EQUAL_FATAL(tgc_graph_memory_plan(g, "cpu0,cpu1", &o, d, &mp), TGC_OK);
        int64_t cpu0 = -1;
        for (int i = 0; i < tgc_memory_plan_count(mp); i++)
            if (strcmp(tgc_memory_plan_get(mp, i).device, "cpu0") == 0) cpu0 = tgc_memory_plan_get(mp, i).planned_peak;
        CU_ASSERT_EQUAL(cpu0, (int64_t)k * 262144);
        tgc_memory_plan_free(mp);
    }
    char limits[64];
    snprintf(limits, sizeof limits, "cpu0=%d", 262144 * 100 / 95 + 4096);
    for (int k = 1; k <= 2; k++) {
        tgc_session_options o = {.memory_limits = limits, .max_inflight = k};
        tgc_session *s = NULL;
        tgc_status st = tgc_session_create(g, "cpu0,cpu1", &o, d, &s);
        CU_ASSERT_EQUAL(st, k == 1 ? TGC_OK : TGC_ERR_INVALID);
        if (k == 2) CU_ASSERT_TRUE(contains(d, "cpu0 [does not fit] needs 524288 bytes"));
        tgc_session_free(s);
    }
    tgc_graph_free(g);
    tgc_diags_free(d);
}

TGC_TEST_MAIN("memory_plan", {"greedy can exceed the lower bound", test_greedy_can_exceed_lower_bound},
              {"the smaller packing is kept", test_smaller_packing_kept},
              {"the smallest gap wins", test_smallest_gap_wins},
              {"whole-run buffers first, aligned offsets", test_whole_run_first_and_alignment},
              {"a chain forwards in place", test_chain_forwards_in_place}, {"a diamond", test_diamond},
              {"a graph where greedy exceeds the lower bound", test_graph_where_greedy_exceeds_lower_bound},
              {"the watch balances under parallel runs", test_watch_balances_under_parallel_runs},
              {"digits CNN plan", test_digits_plan}, {"digits CNN measured on cpu", test_digits_measured_on_cpu},
              {"digits CNN measured on cpu,gpu0", test_digits_measured_on_cpu_gpu},
              {"digits CNN report", test_digits_report},
              {"the watch balances when runs fail", test_watch_balances_when_runs_fail}, {"sizes", test_sizes},
              {"a limit just below the need", test_limit_just_below},
              {"a limit below the weights", test_limit_below_the_weights},
              {"bad limit specs", test_bad_limit_specs}, {"a pipeline's sends in flight", test_pipelined_sends})
