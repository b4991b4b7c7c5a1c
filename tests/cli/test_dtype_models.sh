#!/usr/bin/env bash
# Whole models in float16, bfloat16 and the quantized types give the values
# the ONNX operator definitions give, computed by numpy, never by tgc
# (tests/data/dtype_models: each model, its inputs and the reference outputs,
# made once by make_models.py), on the cpu, on cpu,gpu0 and, for the float
# models (the quantized ops have no gpu kernels), on gpu0 alone.
#
# Tolerances (absolute, as --compare takes them):
#   float16   2e-3: one float16 step at the largest |value| (conv 2.0, logits
#             2.6: 2^-9); the reference rounds to float16 after every op, a
#             kernel may keep float32 between ops (passes/compute_in_float32.c
#             does: up to 1.6 steps on the logits, 1.5e-5 on the probabilities);
#             5e-4 for fp16_rnn (two float16 steps at its largest |value|, 0.28:
#             the LSTM and the Gemm kept in float32 between them).
#             2e-3 for fp16_nn (one step at its largest |value|, 2.3; it
#             matches to the bit on the cpu and on PoCL) and for fp32_nn run
#             with --float16 against its float32 reference (float16 rounding
#             after every op takes it 6.5e-4 away: make_models.py prints it);
#             1e-5 for fp32_nn in float32.
#   bfloat16  0 for the Cast to bfloat16 (round to nearest even, ties both
#             ways); 0 on the cpu for the Mul/Add and MatMul results too
#             (Mul and Add have bfloat16 kernels; the MatMul computed in
#             float32 is narrowed before the graph's Cast to float32 reads
#             it); 1.6e-2 (one bfloat16 step, 2^-6, at |value| < 4) where
#             the device has no bfloat16 Mul and Add (gpu0), for the same
#             reason as float16.
#   quantized 0: QuantizeLinear's ties and saturation, requantization, and
#             every float output (one rounding each, or exact by construction);
#             ordinary-scale cases keep every value 1e-3 step from a tie.
. "$(dirname "$0")/lib.bash"
D="$ROOT/tests/data/dtype_models"
gpu=0
"$TGC" devices | grep -q "^gpu0" && gpu=1

# check MODEL DEV TOL "INPUT..." "OUTPUT..." [ARG...]: one run, every output
# compared.
check() {
    local m=$1 dev=$2 tol=$3 ins=$4 outs=$5 args=() n
    shift 5
    args+=("$@")
    for n in $ins; do args+=(--input "$n=$D/$m.$n.npy"); done
    for n in $outs; do args+=(--compare "$n=$D/$m.$n.ref.npy"); done
    expect_exit 0 "$m on $dev: $outs within $tol of numpy's" -- \
        "$TGC" run "$D/$m.onnx" --devices "$dev" "${args[@]}" --tolerance "$tol"
    for n in $outs; do expect_grep "^compare $n with .* ok$" "$WORK/out" "$m $n on $dev"; done
}

float_models() {
    check fp16_cnn "$1" 2e-3 "x" "conv logits probs"
    check fp16_rnn "$1" 5e-4 "ids" "logits probs"
    check bf16_mlp "$1" 0 "x" "xr"
    check bf16_mlp "$1" "$2" "x" "ar y"
    check fp16_nn "$1" 2e-3 "x z a" "mp gap gemm ln mm"
    check fp32_nn "$1" 1e-5 "x z a" "mp gap gemm ln mm"
}

# --float16 on a device list with a gpu: every one of the float32 model's
# 12 ops has a gpu kernel in float16, so all 12 are rewritten (the pass's
# report says so without opening a device), and its values are within
# float16's rounding of float32's where a gpu runs it.
float16_option() {
    expect_exit 0 "fp32_nn --float16: compute-in-float16 runs" -- \
        "$TGC" compile "$D/fp32_nn.onnx" --devices cpu,gpu0 --float16 --dump optimized -o "$WORK/half.yaml"
    expect_grep "^pass compute-in-float16 .* 12 rewrites" "$WORK/out" "fp32_nn --float16 on cpu,gpu0"
    expect_grep "dtype: float16, shape: \[12, 4, 3, 3\]" "$WORK/half.yaml" "the grouped Conv's weight held in float16"
    expect_exit 0 "fp32_nn --float16 on the cpu alone" -- \
        "$TGC" compile "$D/fp32_nn.onnx" --devices cpu --float16 --dump optimized -o "$WORK/cpu.yaml"
    expect_grep "^pass compute-in-float16 .* 0 rewrites" "$WORK/out" "fp32_nn --float16 on cpu: nothing to do"
}
float16_option

quant_models() {
    check quant_linear "$1" 0 "x qu qi q32" "y_u8 y_i8 y_t dq_u8 dq_i8 dq_i32"
    check qlinear_matmul "$1" 0 "a" "y1 y2"
    check qlinear_conv "$1" 0 "x" "y1 y2"
    check dynamic_quant_matmul "$1" 0 "x x2" "xq x_scale x_zp acc y acc2 x2q x2_scale x2_zp"
    check qdq_conv "$1" 0 "x" "y1 y2"
    check int_conv_paths "$1" 0 "x x8 xb xp x3 xc xc8" "dw_strided dw_mult dw_1d pointwise_zp conv3d q_dw q_dw_s8 q_big_some q_dw7 q_dense q_grouped dense_s8 dense_u8w"
}

float_models cpu 0
quant_models cpu
# one thread: every integer product whole (two or more cut the large ones)
check int_conv_paths cpu 0 "x x8 xb xp x3 xc xc8" "dw_strided dw_mult dw_1d pointwise_zp conv3d q_dw q_dw_s8 q_big_some q_dw7 q_dense q_grouped dense_s8 dense_u8w" \
    --threads cpu=1
if [ $gpu = 1 ]; then
    float_models cpu,gpu0 1.6e-2
    quant_models cpu,gpu0
    float_models gpu0 1.6e-2
    check fp32_nn gpu0 2e-3 "x z a" "mp gap gemm ln mm" --float16
    check fp32_nn cpu,gpu0 2e-3 "x z a" "mp gap gemm ln mm" --float16
    # the float16 Convs take in their Clip (its bounds float16 initializers) and Relu
    check fp16_nn gpu0 2e-3 "x z a" "mp" --memory-report
    expect_grep "10 ran a kernel, 2 activations absorbed" "$WORK/out" "fp16_nn's activations in its Convs on gpu0"
    # --tune times the float16 GEMM kernel at both tiles: a cache folder of
    # its own, so that no tile tuned before is taken, given the OpenCL
    # programs the runs above built (a fresh folder built them all again:
    # 72 of the test's 90 s on this 2-core machine, without a sanitizer)
    mkdir -p "$WORK/cache/tgc"
    cp "${XDG_CACHE_HOME:-$HOME/.cache}"/tgc/*.cl.bin "$WORK/cache/tgc/" 2>/dev/null
    XDG_CACHE_HOME="$WORK/cache" check fp16_nn gpu0 2e-3 "x z a" "mp gemm mm" --tune
    tiles=("$WORK"/cache/tgc/gemm-tiles-*.txt)
    expect_grep " \(32\|64\)$" "${tiles[0]}" "--tune kept a tile for fp16_nn's GEMMs"
fi
finish
