/* The OpenCL C side of _Attention (float32; the host side is
 * devices/opencl/kernels_attention.c, the geometry
 * devices/attention_geometry.c):
 *     Y = softmax(scale * Q K^T + mask, last axis) V
 * One work-item per (batch index, query row, chunk of ATT_CHUNK output
 * columns), one walk over the keys with the online softmax of Milakov and
 * Gimelshein (2018), as FlashAttention computes it: the running maximum m,
 * sum of exp(score - m) and exp(score - m) * V[key] for the chunk's
 * columns, both rescaled by exp(m_old - m_new) when the maximum grows; the
 * chunk is divided by the sum at the end. The scores are never stored. A
 * NaN score makes the row NaN; a row masked everywhere by -inf is NaN, as
 * the unfused Softmax makes it. Batch axes (at most 8) are
 * walked with each operand's strides (0 along a broadcast axis). */

#pragma OPENCL FP_CONTRACT OFF

#define ATT_CHUNK 64

/* scale * Q[i] . K[j] (+ mask[i, j]). */
float att_score(__global const float *q, __global const float *k, __global const float *mask, long j, long lk,
                long d, int kt, float scale, int has_mask, long mrow, long m_col) {
    float s = 0.0f;
    if (kt)
        for (long x = 0; x < d; x++) s += q[x] * k[x * lk + j];
    else
        for (long x = 0; x < d; x++) s += q[x] * k[j * d + x];
    s *= scale;
    if (has_mask) s += mask[mrow + j * m_col];
    return s;
}

__kernel void attention_f32(__global const float *q, __global const float *k, __global const float *v,
                            __global const float *mask, __global float *y, long n_items, long lq, long lk, long d,
                            long dv, int kt, float scale, int has_mask, int nb, long8 bdims, long8 sq, long8 sk,
                            long8 sv, long8 sm, long m_row, long m_col) {
    long o = get_global_id(0);
    if (o >= n_items) return;
    long chunks = (dv + ATT_CHUNK - 1) / ATT_CHUNK;
    long chunk = o % chunks, row = o / chunks;
    long i = row % lq, t = row / lq;
    long bd[8], s_q[8], s_k[8], s_v[8], s_m[8];
    vstore8(bdims, 0, bd);
    vstore8(sq, 0, s_q);
    vstore8(sk, 0, s_k);
    vstore8(sv, 0, s_v);
    vstore8(sm, 0, s_m);
    long oq = 0, ok = 0, ov = 0, om = 0, rest = t;
    for (int a = nb - 1; a >= 0; a--) {
        long idx = rest % bd[a];
        rest /= bd[a];
        oq += idx * s_q[a];
        ok += idx * s_k[a];
        ov += idx * s_v[a];
        om += idx * s_m[a];
    }
    __global const float *qi = q + oq + i * d;
    long mrow = om + i * m_row;
    long c0 = chunk * ATT_CHUNK, n = dv - c0 < ATT_CHUNK ? dv - c0 : ATT_CHUNK;
    float acc[ATT_CHUNK];
    for (int c = 0; c < ATT_CHUNK; c++) acc[c] = 0.0f;
    float m = -INFINITY, sum = 0.0f;
    for (long j = 0; j < lk; j++) {
        float s = att_score(qi, k + ok, mask, j, lk, d, kt, scale, has_mask, mrow, m_col);
        if (s > m) { /* a new maximum: what was summed is rescaled to it */
            float f = exp(m - s);
            sum *= f;
            for (int c = 0; c < n; c++) acc[c] *= f;
            m = s;
        }
        float e = exp(s - m);
        sum += e;
        __global const float *vj = v + ov + j * dv + c0;
        for (int c = 0; c < n; c++) acc[c] += e * vj[c];
    }
    __global float *yi = y + (t * lq + i) * dv + c0;
    for (int c = 0; c < n; c++) yi[c] = acc[c] / sum;
}
