/* The OpenCL C side of RNN, GRU and LSTM (float32); the host side, with the
 * equations and the order of the work, is devices/opencl/kernels_rnn_cl.c,
 * the cpu kernel devices/cpu/kernels_rnn.c. GEMMs are CLBlast's; these
 * kernels fill the biases, move states, and apply the gate equations, one
 * work-item per (batch row, hidden unit). Activation kinds are the numbers
 * of tgc_rnn_act_kind (devices/rnn_geometry.h). */

float rnn_act(int kind, float a, float b, float x) {
    switch (kind) {
    case 0: return x < 0.0f ? 0.0f : x;                          /* Relu */
    case 1: return tanh(x);                                       /* Tanh */
    case 2: return x >= 0.0f ? 1.0f / (1.0f + exp(-x)) : exp(x) / (1.0f + exp(x)); /* Sigmoid */
    case 3: return a * x + b;                                     /* Affine */
    case 4: return x < 0.0f ? a * x : x;                          /* LeakyRelu */
    case 5: return x > a ? x : 0.0f;                              /* ThresholdedRelu */
    case 6: return a * tanh(b * x);                               /* ScaledTanh */
    case 7: return fmax(0.0f, fmin(1.0f, a * x + b));             /* HardSigmoid */
    case 8: return x < 0.0f ? a * expm1(x) : x;                   /* Elu */
    case 9: return x / (1.0f + fabs(x));                          /* Softsign */
    default: return x > 20.0f ? x : log1p(exp(x));                /* Softplus */
    }
}

float rnn_clip(float clip, float v) { return clip > 0.0f ? clamp(v, -clip, clip) : v; }

/* The time index batch row b works on at the k-th step, or -1. */
long rnn_time(__global const int *lens, int has_lens, long seq, int reverse, long k, long b) {
    long len = has_lens ? (long)lens[b] : seq;
    if (k >= len) return -1;
    return reverse ? len - 1 - k : k;
}

/* The step geometry every step kernel takes, by value (ints and longs only). */
typedef struct rnn_step_geom {
    long seq, batch, hidden, gh;
    long k;          /* the step */
    int reverse, batch_first, dirs, d, has_lens, has_y, has_p, flag; /* flag: input_forget / linear_before_reset */
    float clip;
    int kind[3];
    float alpha[3], beta[3];
} rnn_step_geom;

long rnn_y_row(const rnn_step_geom *g, long t, long b) {
    return g->batch_first ? (b * g->seq + t) * g->dirs + g->d : (t * g->dirs + g->d) * g->batch + b;
}
long rnn_x_row(const rnn_step_geom *g, long t, long b) {
    return g->batch_first ? b * g->seq + t : t * g->batch + b;
}

#define ACT(i, x) rnn_act(g.kind[i], g.alpha[i], g.beta[i], (x))

/* xw[i] = the biases that simply add (Wb + Rb; GRU's Rbh not when it is
 * applied after the reset gate: columns from skip_from on get Wb only). */
__kernel void rnn_bias_f32(__global float *xw, __global const float *bias, long bias_off, long gh, long skip_from,
                           int has_bias, long total) {
    long i = get_global_id(0);
    if (i >= total) return;
    long j = i % gh;
    xw[i] = has_bias ? bias[bias_off + j] + (j >= skip_from ? 0.0f : bias[bias_off + gh + j]) : 0.0f;
}

/* state[b, j] <-> src/dst laid out [dirs, batch, hidden] ([batch, dirs,
 * hidden] when batch_first) at direction d; load: has_src 0 gives zeros. */
__kernel void rnn_state_f32(__global float *state, __global float *other, int load, int has_src, int d, int dirs,
                            int batch_first, long batch, long hidden) {
    long i = get_global_id(0);
    if (i >= batch * hidden) return;
    long b = i / hidden, j = i % hidden;
    long at = (batch_first ? b * dirs + d : d * batch + b) * hidden + j;
    if (load) state[i] = has_src ? other[at] : 0.0f;
    else other[at] = state[i];
}

__kernel void rnn_simple_step_f32(__global const float *xw, __global const float *hr, __global float *h,
                                  __global float *y, __global const int *lens, rnn_step_geom g) {
    long i = get_global_id(0);
    if (i >= g.batch * g.hidden) return;
    long b = i / g.hidden, j = i % g.hidden;
    long t = rnn_time(lens, g.has_lens, g.seq, g.reverse, g.k, b);
    if (t < 0) return;
    float v = ACT(0, rnn_clip(g.clip, xw[rnn_x_row(&g, t, b) * g.gh + j] + hr[b * g.gh + j]));
    h[i] = v;
    if (g.has_y) y[rnn_y_row(&g, t, b) * g.hidden + j] = v;
}

__kernel void rnn_lstm_step_f32(__global const float *xw, __global const float *hr, __global float *h,
                                __global float *cs, __global const float *p, long p_off, __global float *y,
                                __global const int *lens, rnn_step_geom g) {
    long i = get_global_id(0);
    if (i >= g.batch * g.hidden) return;
    long n = g.hidden, b = i / n, j = i % n;
    long t = rnn_time(lens, g.has_lens, g.seq, g.reverse, g.k, b);
    if (t < 0) return;
    __global const float *x = xw + rnn_x_row(&g, t, b) * g.gh, *r = hr + b * g.gh;
    float c_prev = cs[i];
    float pi = g.has_p ? p[p_off + j] : 0.0f, po = g.has_p ? p[p_off + n + j] : 0.0f,
          pf = g.has_p ? p[p_off + 2 * n + j] : 0.0f;
    float in = ACT(0, rnn_clip(g.clip, x[j] + r[j] + pi * c_prev));
    float fg = g.flag ? 1.0f - in : ACT(0, rnn_clip(g.clip, x[2 * n + j] + r[2 * n + j] + pf * c_prev));
    float cand = ACT(1, rnn_clip(g.clip, x[3 * n + j] + r[3 * n + j]));
    float c_new = fg * c_prev + in * cand;
    float o = ACT(0, rnn_clip(g.clip, x[n + j] + r[n + j] + po * c_new));
    float v = o * ACT(2, c_new);
    cs[i] = c_new;
    h[i] = v;
    if (g.has_y) y[rnn_y_row(&g, t, b) * n + j] = v;
}

/* GRU without linear_before_reset, first half: z and r activated into hr,
 * and r . H into rh for the GEMM by Rh (0 for a finished row). */
__kernel void rnn_gru_zr_f32(__global const float *xw, __global float *hr, __global const float *h,
                             __global float *rh, __global const int *lens, rnn_step_geom g) {
    long i = get_global_id(0);
    if (i >= g.batch * g.hidden) return;
    long n = g.hidden, b = i / n, j = i % n;
    long t = rnn_time(lens, g.has_lens, g.seq, g.reverse, g.k, b);
    if (t < 0) {
        rh[i] = 0.0f;
        return;
    }
    __global const float *x = xw + rnn_x_row(&g, t, b) * g.gh;
    __global float *r = hr + b * g.gh;
    float z = ACT(0, rnn_clip(g.clip, x[j] + r[j]));
    float rr = ACT(0, rnn_clip(g.clip, x[n + j] + r[n + j]));
    r[j] = z;
    r[n + j] = rr;
    rh[i] = rr * h[i];
}

/* GRU's update: with linear_before_reset (g.flag) z and r come from the
 * raw products here and the candidate takes r . (H Rh^T + Rbh); without,
 * hr holds z, r activated and (r . H) Rh^T already. */
__kernel void rnn_gru_h_f32(__global const float *xw, __global float *hr, __global float *h,
                            __global const float *bias, long rbh_off, int has_bias, __global float *y,
                            __global const int *lens, rnn_step_geom g) {
    long i = get_global_id(0);
    if (i >= g.batch * g.hidden) return;
    long n = g.hidden, b = i / n, j = i % n;
    long t = rnn_time(lens, g.has_lens, g.seq, g.reverse, g.k, b);
    if (t < 0) return;
    __global const float *x = xw + rnn_x_row(&g, t, b) * g.gh;
    __global float *r = hr + b * g.gh;
    float z, rec;
    if (g.flag) {
        z = ACT(0, rnn_clip(g.clip, x[j] + r[j]));
        float rr = ACT(0, rnn_clip(g.clip, x[n + j] + r[n + j]));
        rec = rr * (r[2 * n + j] + (has_bias ? bias[rbh_off + j] : 0.0f));
    } else {
        z = r[j];
        rec = r[2 * n + j];
    }
    float cand = ACT(1, rnn_clip(g.clip, x[2 * n + j] + rec));
    float v = (1.0f - z) * cand + z * h[i];
    h[i] = v;
    if (g.has_y) y[rnn_y_row(&g, t, b) * n + j] = v;
}
