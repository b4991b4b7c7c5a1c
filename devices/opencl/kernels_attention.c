/* _Attention on the gpu (float32): the host side of
 * kernels/attention.cl's attention_f32, one work-item per (batch index,
 * query row, chunk of 64 output columns), each walking the keys once
 * (online softmax) and never storing the scores. Arguments are checked by the geometry the cpu
 * kernel reads too (devices/attention_geometry.c). */
#include "devices/attention_geometry.h"
#include "devices/opencl/cl_kernel_util.h"
#include "devices/opencl/kernels_nn.h"
#include "support/checked.h"

#include <string.h>

#define ATT_CHUNK 64 /* attention.cl's output columns a work-item */
#define ATT_MAX_BATCH_AXES 8

static tgc_status attention_cl(tgc_kernel_ctx *c) {
    tgc_status st = tgc_cl_check(c, 3, 1, 0);
    if (st != TGC_OK) return st;
    tgc_attention_geometry g;
    if ((st = tgc_attention_geometry_read(c, &g)) != TGC_OK) return st;
    if (g.nb > ATT_MAX_BATCH_AXES)
        return tgc_kernel_fail(c, "%d batch axes; the gpu kernel takes at most %d", g.nb, ATT_MAX_BATCH_AXES);
    if (g.batch == 0 || g.lq == 0 || g.dv == 0) return TGC_OK;
    if (g.lk == 0) /* no keys: an empty softmax, a zero product */
        return tgc_cl_nn_fill(c, c->outputs[0].buf->mem, c->outputs[0].dtype, 0.0f, tgc_value_numel(&c->outputs[0]));
    cl_long8 bdims, sq, sk, sv, sm;
    memset(&sq, 0, sizeof sq);
    memset(&sk, 0, sizeof sk);
    memset(&sv, 0, sizeof sv);
    memset(&sm, 0, sizeof sm);
    for (int a = 0; a < 8; a++) bdims.s[a] = a < g.nb ? g.bdims[a] : 1;
    for (int a = 0; a < g.nb; a++) {
        sq.s[a] = g.sq[a];
        sk.s[a] = g.sk[a];
        sv.s[a] = g.sv[a];
        sm.s[a] = g.sm[a];
    }
    int64_t rows, items;
    if (!tgc_checked_mul_i64(g.batch, g.lq, &rows) ||
        !tgc_checked_mul_i64(rows, (g.dv + ATT_CHUNK - 1) / ATT_CHUNK, &items))
        return tgc_kernel_fail(c, "attention sizes overflow");
    tgc_buffer *mask = g.has_mask ? c->inputs[3].buf : c->inputs[0].buf; /* unread without a mask */
    tgc_cl_arg args[] = {TGC_CL_BUF(c->inputs[0].buf),
                         TGC_CL_BUF(c->inputs[1].buf),
                         TGC_CL_BUF(c->inputs[2].buf),
                         TGC_CL_BUF(mask),
                         TGC_CL_BUF(c->outputs[0].buf),
                         TGC_CL_LONG(items),
                         TGC_CL_LONG(g.lq),
                         TGC_CL_LONG(g.lk),
                         TGC_CL_LONG(g.d),
                         TGC_CL_LONG(g.dv),
                         TGC_CL_INT(g.kt),
                         TGC_CL_FLOAT(g.scale),
                         TGC_CL_INT(g.has_mask),
                         TGC_CL_INT(g.nb),
                         TGC_CL_BYTES(&bdims, sizeof bdims),
                         TGC_CL_BYTES(&sq, sizeof sq),
                         TGC_CL_BYTES(&sk, sizeof sk),
                         TGC_CL_BYTES(&sv, sizeof sv),
                         TGC_CL_BYTES(&sm, sizeof sm),
                         TGC_CL_LONG(g.m_row),
                         TGC_CL_LONG(g.m_col)};
    return tgc_cl_run1d(c, "attention_f32", items, (int)(sizeof args / sizeof *args), args);
}

const tgc_kernel_def tgc_gpu_kernels_attention[] = {
    {.op = "_Attention", .fn = attention_cl, .forward_input = -1,
     .dtypes = {TGC_FLOAT32, TGC_DTYPE_INVALID}},
    {.op = NULL},
};
