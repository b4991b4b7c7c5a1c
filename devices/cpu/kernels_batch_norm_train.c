/* BatchNormalization-15 with training_mode = 1 on the cpu (float32), after
 * ONNX's reference (onnx/reference/ops/op_batch_normalization.py,
 * _batchnorm_training_mode): over every axis but the channel axis 1,
 *   saved_mean = mean(X), saved_var = mean((X - saved_mean)^2) (population),
 *   Y = (X - saved_mean) / sqrt(saved_var + epsilon) * scale + B,
 *   running_mean = input_mean * momentum + saved_mean * (1 - momentum),
 *   running_var = input_var * momentum + saved_var * (1 - momentum),
 * momentum defaulting to 0.9. The statistics are summed in double and
 * rounded to float32 (as the reference's are float32) before use; an empty
 * batch gives NaN statistics (numpy's mean of nothing). Each element of X
 * is read before Y's is written, so Y may be X's buffer (forwarding). */
#include "devices/cpu/kernels_nn.h"

#include <math.h>
#include <string.h>

tgc_status tgc_cpu_batch_norm_train_f32(tgc_kernel_ctx *c) {
    static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
    if (c->n_inputs < 5 || c->n_outputs < 1)
        return tgc_kernel_fail(c, "BatchNormalization takes 5 inputs (X, scale, B, input_mean, input_var)");
    const tgc_value *x = &c->inputs[0], *y = &c->outputs[0];
    tgc_status st = TGC_OK;
    for (int i = 0; st == TGC_OK && i < 5; i++) st = tgc_kernel_need_f32(c, &c->inputs[i], names[i]);
    if (st == TGC_OK) st = tgc_kernel_need_f32(c, y, "output Y");
    for (int o = 1; st == TGC_OK && o < 3; o++)
        if (tgc_kernel_has_output(c, o))
            st = tgc_kernel_need_f32(c, &c->outputs[o], o == 1 ? "output running_mean" : "output running_var");
    if (st != TGC_OK) return st;
    if (x->rank < 2) return tgc_kernel_fail(c, "input X has rank %d; it must be [N, C, ...]", x->rank);
    int64_t ch = x->dims[1], batch = x->dims[0], size = 1;
    for (int i = 2; i < x->rank; i++) size *= x->dims[i];
    for (int i = 1; i < 5; i++)
        if (c->inputs[i].rank != 1 || c->inputs[i].dims[0] != ch)
            return tgc_kernel_fail(c, "input %s must be [C = %lld]", names[i], (long long)ch);
    if (y->rank != x->rank || memcmp(y->dims, x->dims, (size_t)x->rank * sizeof x->dims[0]) != 0)
        return tgc_kernel_fail(c, "output Y must have X's shape");
    for (int o = 1; o < 3; o++)
        if (tgc_kernel_has_output(c, o) && (c->outputs[o].rank != 1 || c->outputs[o].dims[0] != ch))
            return tgc_kernel_fail(c, "output %d must be [C = %lld]", o, (long long)ch);
    double eps = (float)tgc_kernel_attr_float(c, "epsilon", 1e-5); /* float attributes in ONNX */
    double momentum = (float)tgc_kernel_attr_float(c, "momentum", 0.9);
    const float *px = tgc_kernel_in_ptr(c, 0), *scale = tgc_kernel_in_ptr(c, 1), *bias = tgc_kernel_in_ptr(c, 2);
    const float *in_mean = tgc_kernel_in_ptr(c, 3), *in_var = tgc_kernel_in_ptr(c, 4);
    float *py = tgc_kernel_out_ptr(c, 0);
    float *run_mean = tgc_kernel_has_output(c, 1) ? tgc_kernel_out_ptr(c, 1) : NULL;
    float *run_var = tgc_kernel_has_output(c, 2) ? tgc_kernel_out_ptr(c, 2) : NULL;
    double count = (double)batch * (double)size;
    for (int64_t k = 0; k < ch; k++) {
        double sum = 0, sq = 0;
        for (int64_t n = 0; n < batch; n++)
            for (int64_t i = 0; i < size; i++) sum += px[(n * ch + k) * size + i];
        float mean = (float)(sum / count);
        for (int64_t n = 0; n < batch; n++)
            for (int64_t i = 0; i < size; i++) {
                double d = px[(n * ch + k) * size + i] - (double)mean;
                sq += d * d;
            }
        float var = (float)(sq / count);
        if (run_mean != NULL) run_mean[k] = (float)(in_mean[k] * momentum + mean * (1 - momentum));
        if (run_var != NULL) run_var[k] = (float)(in_var[k] * momentum + var * (1 - momentum));
        double a = scale[k] / sqrt((double)var + eps), b = bias[k] - mean * a;
        for (int64_t n = 0; n < batch; n++)
            for (int64_t i = 0; i < size; i++) {
                int64_t at = (n * ch + k) * size + i;
                py[at] = (float)(px[at] * a + b);
            }
    }
    return TGC_OK;
}
