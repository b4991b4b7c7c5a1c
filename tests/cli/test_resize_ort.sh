#!/usr/bin/env bash
# Bilinear Resize gives ONNX Runtime's float32 values bit for bit, on the cpu
# and on gpu0 (tests/data/resize_ort: each model's input and ORT's output,
# made once by make_refs.py with onnxruntime-node): every coordinate mode ORT
# computes in its UpsampleBilinear, up and down, scales and sizes. A one-ulp
# difference there becomes another integer in a dynamically quantized model
# downstream.
. "$(dirname "$0")/lib.bash"
D="$ROOT/tests/data/resize_ort"
devices_list="cpu"
"$TGC" devices | grep -q "^gpu0" && devices_list="cpu gpu0"
for dev in $devices_list; do
    for c in half_pixel_x2 pytorch_half_pixel_sizes align_corners_x4 asymmetric_x8 half_pixel_down; do
        expect_exit 0 "$c on $dev equals ORT's output exactly" -- "$TGC" run "$D/$c.onnx" --devices "$dev" \
            --input "x=$D/$c.x.npy" --compare "y=$D/$c.ort.npy" --tolerance 0
        expect_grep "compare y .* ok" "$WORK/out" "$c on $dev"
    done
done
finish
