/* RNN, GRU and LSTM on the gpu (float32), the same work as the cpu kernel
 * (devices/cpu/kernels_rnn.c) with CLBlast's SGEMM for the products and
 * devices/opencl/kernels/rnn.cl for the rest. Per direction:
 *   xw = biases (rnn_bias_f32), then xw += X W^T (one SGEMM, every step);
 *   h, c = the initial states (rnn_state_f32);
 *   each step k: hr = h R^T (SGEMM over the batch), then the gate kernel
 *   (GRU without linear_before_reset: z and r first, then (r . h) Rh^T by
 *   a second SGEMM, then the update); Y rows written as they are made;
 *   Y_h, Y_c = the final states (rnn_state_f32).
 * sequence_lens stays an int32 device buffer the kernels read per row. */
#include "devices/opencl/cl_kernel_util.h"
#include "devices/opencl/kernels_nn.h"
#include "devices/rnn_geometry.h"

#include "support/checked.h"

#include <string.h>

/* rnn.cl's rnn_step_geom, laid out alike (longs, then ints, then floats). */
typedef struct cl_step_geom {
    cl_long seq, batch, hidden, gh, k;
    cl_int reverse, batch_first, dirs, d, has_lens, has_y, has_p, flag;
    cl_float clip;
    cl_int kind[3];
    cl_float alpha[3], beta[3];
} cl_step_geom;

typedef struct rnn_bufs {
    cl_mem xw, hr, h, cs, rh;
    tgc_buffer *held[5]; /* their scratch buffers, in that order */
} rnn_bufs;

static void release_bufs(rnn_bufs *b) {
    for (int i = 0; i < 5; i++) {
        tgc_cl_scratch_release(b->held[i]);
        b->held[i] = NULL;
    }
}

static tgc_status alloc_bufs(tgc_kernel_ctx *c, const tgc_rnn_geometry *g, rnn_bufs *b) {
    int64_t gh = g->gates * g->hidden, rows, xw, hr, st;
    size_t bytes[3];
    if (!tgc_checked_mul_i64(g->seq, g->batch, &rows) || !tgc_checked_mul_i64(rows, gh, &xw) ||
        !tgc_checked_mul_i64(g->batch, gh, &hr) || !tgc_checked_mul_i64(g->batch, g->hidden, &st) ||
        !tgc_checked_nbytes(xw + 1, sizeof(float), &bytes[0]) || !tgc_checked_nbytes(hr + 1, sizeof(float), &bytes[1]) ||
        !tgc_checked_nbytes(st + 1, sizeof(float), &bytes[2]))
        return tgc_kernel_fail(c, "the scratch buffers' sizes do not fit");
    cl_mem *all[] = {&b->xw, &b->hr, &b->h, &b->cs, &b->rh};
    size_t sizes[] = {bytes[0], bytes[1], bytes[2], bytes[2], bytes[2]};
    bool ok = true;
    for (int i = 0; i < 5; i++) {
        b->held[i] = tgc_cl_scratch(c->device, sizes[i]);
        *all[i] = b->held[i] != NULL ? b->held[i]->mem : NULL;
        ok = ok && b->held[i] != NULL;
    }
    if (ok) return TGC_OK;
    release_bufs(b);
    return tgc_kernel_fail_nomem(c, "out of device memory for the recurrent state (%zu bytes)", bytes[0] + bytes[1]);
}

static tgc_status state_move(tgc_kernel_ctx *c, const tgc_rnn_geometry *g, cl_mem state, int index, bool load, int d,
                             bool output) {
    bool has = output ? tgc_kernel_has_output(c, index) && tgc_value_numel(&c->outputs[index]) > 0
                      : tgc_kernel_has_input(c, index);
    if (!load && !has) return TGC_OK;
    cl_mem other = has ? (output ? c->outputs[index].buf->mem : c->inputs[index].buf->mem) : state;
    size_t global = (size_t)(g->batch * g->hidden);
    tgc_cl_arg args[] = {TGC_CL_MEM(state),        TGC_CL_MEM(other),           TGC_CL_INT(load),
                         TGC_CL_INT(has),          TGC_CL_INT(d),               TGC_CL_INT(g->dirs),
                         TGC_CL_INT(g->batch_first), TGC_CL_LONG(g->batch),     TGC_CL_LONG(g->hidden)};
    return tgc_cl_enqueue(c, "rnn_state_f32", 1, &global, NULL, 9, args);
}

static tgc_status run_direction(tgc_kernel_ctx *c, const tgc_rnn_geometry *g, int d, rnn_bufs *b) {
    int64_t n = g->hidden, gh = g->gates * n, rows = g->seq * g->batch;
    bool gru = g->gates == 3, lstm = g->gates == 4, has_bias = tgc_kernel_has_input(c, 3);
    cl_mem bias = has_bias ? c->inputs[3].buf->mem : b->xw, w = c->inputs[1].buf->mem, r = c->inputs[2].buf->mem;
    cl_mem lens = tgc_kernel_has_input(c, 4) ? c->inputs[4].buf->mem : b->xw;
    bool has_y = tgc_kernel_has_output(c, 0) && tgc_value_numel(&c->outputs[0]) > 0;
    cl_mem y = has_y ? c->outputs[0].buf->mem : b->xw;
    bool has_p = lstm && tgc_kernel_has_input(c, 7);
    cl_mem p = has_p ? c->inputs[7].buf->mem : b->xw;

    size_t total = (size_t)(rows * gh);
    tgc_cl_arg bias_args[] = {TGC_CL_MEM(b->xw), TGC_CL_MEM(bias), TGC_CL_LONG(d * 2 * gh), TGC_CL_LONG(gh),
                              TGC_CL_LONG(gru && g->linear_before_reset ? 2 * n : gh), TGC_CL_INT(has_bias),
                              TGC_CL_LONG(rows * gh)};
    tgc_status st = tgc_cl_enqueue(c, "rnn_bias_f32", 1, &total, NULL, 7, bias_args);
    if (st == TGC_OK && g->input > 0)
        st = tgc_cl_nn_sgemm(c, false, true, rows, gh, g->input, 1.0f, c->inputs[0].buf->mem, 0, g->input, w,
                             d * gh * g->input, g->input, 1.0f, b->xw, 0, gh);
    if (st == TGC_OK) st = state_move(c, g, b->h, 5, true, d, false);
    if (st == TGC_OK && lstm) st = state_move(c, g, b->cs, 6, true, d, false);

    cl_step_geom sg = {.seq = g->seq, .batch = g->batch, .hidden = n, .gh = gh,
                       .reverse = d == 1 || g->reverse_only, .batch_first = g->batch_first, .dirs = g->dirs, .d = d,
                       .has_lens = tgc_kernel_has_input(c, 4), .has_y = has_y, .has_p = has_p,
                       .flag = lstm ? g->input_forget : g->linear_before_reset, .clip = g->clip};
    for (int i = 0; i < g->functions; i++) {
        const tgc_rnn_act *a = &g->f[d * g->functions + i];
        sg.kind[i] = (cl_int)a->kind, sg.alpha[i] = a->alpha, sg.beta[i] = a->beta;
    }
    size_t units = (size_t)(g->batch * n);
    int64_t r_off = d * gh * n;
    for (int64_t k = 0; st == TGC_OK && k < g->seq; k++) {
        sg.k = k;
        bool split = gru && !g->linear_before_reset;
        st = tgc_cl_nn_sgemm(c, false, true, g->batch, split ? 2 * n : gh, n, 1.0f, b->h, 0, n, r, r_off, n, 0.0f,
                             b->hr, 0, gh);
        if (st != TGC_OK) break;
        if (lstm) {
            tgc_cl_arg args[] = {TGC_CL_MEM(b->xw), TGC_CL_MEM(b->hr), TGC_CL_MEM(b->h), TGC_CL_MEM(b->cs),
                                 TGC_CL_MEM(p),     TGC_CL_LONG(d * 3 * n), TGC_CL_MEM(y), TGC_CL_MEM(lens),
                                 TGC_CL_BYTES(&sg, sizeof sg)};
            st = tgc_cl_enqueue(c, "rnn_lstm_step_f32", 1, &units, NULL, 9, args);
        } else if (!gru) {
            tgc_cl_arg args[] = {TGC_CL_MEM(b->xw), TGC_CL_MEM(b->hr), TGC_CL_MEM(b->h), TGC_CL_MEM(y),
                                 TGC_CL_MEM(lens),  TGC_CL_BYTES(&sg, sizeof sg)};
            st = tgc_cl_enqueue(c, "rnn_simple_step_f32", 1, &units, NULL, 6, args);
        } else {
            if (split) {
                tgc_cl_arg zr[] = {TGC_CL_MEM(b->xw), TGC_CL_MEM(b->hr), TGC_CL_MEM(b->h), TGC_CL_MEM(b->rh),
                                   TGC_CL_MEM(lens),  TGC_CL_BYTES(&sg, sizeof sg)};
                st = tgc_cl_enqueue(c, "rnn_gru_zr_f32", 1, &units, NULL, 6, zr);
                if (st == TGC_OK)
                    st = tgc_cl_nn_sgemm(c, false, true, g->batch, n, n, 1.0f, b->rh, 0, n, r, r_off + 2 * n * n, n,
                                         0.0f, b->hr, 2 * n, gh);
            }
            tgc_cl_arg args[] = {TGC_CL_MEM(b->xw), TGC_CL_MEM(b->hr), TGC_CL_MEM(b->h), TGC_CL_MEM(bias),
                                 TGC_CL_LONG(d * 2 * gh + gh + 2 * n), TGC_CL_INT(has_bias), TGC_CL_MEM(y),
                                 TGC_CL_MEM(lens), TGC_CL_BYTES(&sg, sizeof sg)};
            if (st == TGC_OK) st = tgc_cl_enqueue(c, "rnn_gru_h_f32", 1, &units, NULL, 9, args);
        }
    }
    if (st == TGC_OK) st = state_move(c, g, b->h, 1, false, d, true);
    if (st == TGC_OK && lstm) st = state_move(c, g, b->cs, 2, false, d, true);
    return st;
}

static tgc_status run_rnn(tgc_kernel_ctx *c, int gates) {
    tgc_status st = tgc_cl_check(c, 3, 0, 0);
    if (st != TGC_OK) return st;
    for (int i = 0; i < c->n_inputs; i++)
        if (i != 4 && tgc_kernel_has_input(c, i) && (st = tgc_kernel_need_f32(c, &c->inputs[i], "an input")) != TGC_OK)
            return st;
    tgc_rnn_geometry g;
    if ((st = tgc_rnn_geometry_read(c, gates, &g)) != TGC_OK) return st;
    if (tgc_kernel_has_input(c, 4)) {
        const tgc_value *sl = &c->inputs[4];
        if (sl->dtype != TGC_INT32 || sl->rank != 1 || sl->dims[0] != g.batch)
            return tgc_kernel_fail(c, "sequence_lens must be int32 [batch]");
        /* Read back to check (a small host copy): a length past seq would index past X. */
        int32_t lens[256];
        for (int64_t b0 = 0; b0 < g.batch; b0 += 256) {
            int64_t m = g.batch - b0 < 256 ? g.batch - b0 : 256;
            cl_int err = clEnqueueReadBuffer(tgc_cl_queue(c->device), sl->buf->mem, CL_TRUE, (size_t)b0 * sizeof(int32_t),
                                             (size_t)m * sizeof(int32_t), lens, 0, NULL, NULL);
            tgc_cl_count_wait(c->device);
            if (err != CL_SUCCESS)
                return tgc_kernel_fail(c, "reading sequence_lens back failed: %s", tgc_cl_error_name(err));
            for (int64_t i = 0; i < m; i++)
                if (lens[i] < 0 || lens[i] > g.seq)
                    return tgc_kernel_fail(c, "sequence_lens[%lld] is %d, outside [0, %lld]", (long long)(b0 + i),
                                           lens[i], (long long)g.seq);
        }
    }
    if (tgc_kernel_has_output(c, 0) && (st = tgc_cl_nn_fill(c, c->outputs[0].buf->mem, c->outputs[0].dtype, 0.0f,
                                                              tgc_value_numel(&c->outputs[0]))) != TGC_OK)
        return st;
    if (g.batch == 0 || g.seq == 0) { /* the states pass through unchanged */
        rnn_bufs b = {0};
        if ((st = alloc_bufs(c, &g, &b)) != TGC_OK) return st;
        for (int d = 0; d < g.dirs && st == TGC_OK; d++) {
            st = state_move(c, &g, b.h, 5, true, d, false);
            if (st == TGC_OK) st = state_move(c, &g, b.h, 1, false, d, true);
            if (st == TGC_OK && gates == 4) st = state_move(c, &g, b.cs, 6, true, d, false);
            if (st == TGC_OK && gates == 4) st = state_move(c, &g, b.cs, 2, false, d, true);
        }
        release_bufs(&b);
        return st;
    }
    rnn_bufs b = {0};
    if ((st = alloc_bufs(c, &g, &b)) != TGC_OK) return st;
    for (int d = 0; d < g.dirs && st == TGC_OK; d++) st = run_direction(c, &g, d, &b);
    release_bufs(&b);
    return st;
}

static tgc_status rnn_gpu(tgc_kernel_ctx *c) { return run_rnn(c, 1); }
static tgc_status gru_gpu(tgc_kernel_ctx *c) { return run_rnn(c, 3); }
static tgc_status lstm_gpu(tgc_kernel_ctx *c) { return run_rnn(c, 4); }

#define F32_ONLY {TGC_FLOAT32, TGC_DTYPE_INVALID}

const tgc_kernel_def tgc_gpu_kernels_rnn[] = {
    {.op = "RNN", .fn = rnn_gpu, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "GRU", .fn = gru_gpu, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = "LSTM", .fn = lstm_gpu, .forward_input = -1, .dtypes = F32_ONLY},
    {.op = NULL},
};
