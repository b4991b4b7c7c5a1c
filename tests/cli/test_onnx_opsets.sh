#!/usr/bin/env bash
# Opsets the importer refuses, warns about, or cannot convert a node of
# (tests/data/onnx_opsets/refused, made by make_models.py): each `tgc import`
# exits as a user expects and its message names the opset, the op and the
# node; a model with several problems reports them all at once. (The
# models tgc converts run through tgc-conformance: ctest onnx/opsets_handmade.)
. "$(dirname "$0")/lib.bash"
D="$ROOT/tests/data/onnx_opsets/refused"

# refused NAME EXIT PATTERN...: `tgc import` exits EXIT and stderr has each PATTERN.
refused() {
    local name=$1 code=$2
    shift 2
    expect_exit "$code" "$name" -- "$TGC" import "$D/$name.onnx" -o "$WORK/$name.yaml"
    for p in "$@"; do expect_grep "$p" "$WORK/err" "$name"; done
}

refused opset19 2 "opset 19 is newer than tgc reads (7 to 18" "opset_version=18" "convert_version(model, 18)" \
    "\[unsupported-opset\]"
refused opset0 2 "imports ONNX opset 0; ONNX's opsets start at 1 \[bad-model\]"
refused opset5_warning 0 "warning: opset 5 is older than 7, the oldest tgc is tested at" "\[old-opset\]"
refused batchnorm7_spatial0 2 \
    "op 'BatchNormalization' (opset 7): attribute 'spatial' 0 (a mean and variance per activation, not per channel)" \
    "(1 node: #0 (output 'y')) \[unsupported-attribute\]"
refused batchnorm9_training_output_read 2 \
    "op 'BatchNormalization' (opset 9): outputs 1 to 4 (the statistics of training" "\[unsupported-output\]"
refused dropout7_mask_used 2 "op 'Dropout' (opset 7): the mask output, of the data's type before opset 10" \
    "\[unsupported-output\]"
refused split18_num_outputs_mismatch 2 "op 'Split' (opset 18): num_outputs differs from the number of outputs" \
    "\[bad-model\]"
refused tile1_tiles_axis 2 "op 'Tile' (opset 5): Tile-1's inputs 'tiles' and 'axis'" "\[unsupported-input\]" \
    "warning: opset 5 is older than 7"
refused col2im18_image_shape_fed 2 \
    "op 'Col2Im' (opset 18): image_shape and block_shape must be constant int64 lists" "\[unsupported-input\]"
refused col2im18_block_too_large 2 "op 'Col2Im' (opset 18): a block is larger than the padded image" \
    "\[bad-model\]"
refused upsample7_no_scales 2 "op 'Upsample' (opset 7): Upsample without scales"
refused several_problems 2 "op 'BatchNormalization' (opset 7): attribute 'spatial' 0" \
    "unsupported op 'DeformConv' (1 node: #1 (output 'u'))" "op 'Dropout' (opset 7): the mask output"

# The warning is given once, and the model still runs.
expect_exit 0 "opset 5 runs" -- "$TGC" run "$D/opset5_warning.onnx" --input "x=$ROOT/tests/data/onnx_opsets/x23.npy"
[ "$(grep -c "old-opset" "$WORK/err")" = 1 ] && pass || fail "opset 5: one warning expected"
finish
