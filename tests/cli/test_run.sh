#!/usr/bin/env bash
# tgc run from the command line: the digits models on real data.
. "$(dirname "$0")/lib.bash"
D="$ROOT/examples/digits"

expect_exit 0 "run cnn" -- "$TGC" run "$D/cnn.yaml" --devices cpu --input "x=$D/test_x.npy" \
    --compare "logits=$D/ref_logits_cnn.npy" --labels "$D/test_y.npy" --output-dir "$WORK/out_cnn" --repeat 3
expect_grep "logits .*\[400, 10\] .*float32" "$WORK/out" "logits summary"
expect_grep "compare logits .* ok" "$WORK/out" "logits within tolerance"
expect_grep "accuracy: " "$WORK/out" "accuracy line"
expect_grep "wall time per run" "$WORK/out" "timing line"
[ -f "$WORK/out_cnn/logits.npy" ] && [ -f "$WORK/out_cnn/probs.npy" ] && pass || fail "outputs not written"
cmp -s <(tail -c 16000 "$WORK/out_cnn/logits.npy") <(tail -c 16000 "$WORK/out_cnn/logits.npy") && pass

expect_exit 0 "run mlp" -- "$TGC" run "$D/mlp.yaml" --input "x=$D/test_x_flat.npy" --compare "logits=$D/ref_logits_mlp.npy"
expect_grep "compare logits .* ok" "$WORK/out" "mlp logits within tolerance"

# On gpu0 (PoCL stands in where there is no GPU): the same answers.
if "$TGC" devices | grep -q '^gpu0'; then
    expect_exit 0 "run mlp on gpu0" -- "$TGC" run "$D/mlp.yaml" --devices gpu0 --input "x=$D/test_x_flat.npy" \
        --compare "logits=$D/ref_logits_mlp.npy"
    expect_grep "compare logits .* ok" "$WORK/out" "mlp on gpu0 within tolerance"
    expect_grep "on gpu0" "$WORK/out" "ran on gpu0"
    expect_exit 0 "run cnn on gpu0" -- "$TGC" run "$D/cnn.yaml" --devices gpu0 --input "x=$D/test_x.npy" \
        --compare "logits=$D/ref_logits_cnn.npy" --labels "$D/test_y.npy"
    expect_grep "compare logits .* ok" "$WORK/out" "cnn on gpu0 within tolerance"
fi
expect_exit 2 "a gpu that is not there" -- "$TGC" run "$D/mlp.yaml" --devices gpu7 --input "x=$D/test_x_flat.npy"
expect_grep "device 'gpu7' is not available" "$WORK/err" "missing gpu message"

# A feed that breaks the declaration: a clear message, exit 2.
expect_exit 2 "wrong shape" -- "$TGC" run "$D/cnn.yaml" --input "x=$D/test_x_flat.npy"
expect_grep "input 'x' is declared with shape \[N, 1, 8, 8\] but the feed has shape \[400, 64\]" "$WORK/err" "feed message"
expect_exit 2 "unknown input" -- "$TGC" run "$D/cnn.yaml" --input "y=$D/test_x.npy"
expect_exit 2 "bad --input" -- "$TGC" run "$D/cnn.yaml" --input "x"
expect_exit 2 "bad --repeat" -- "$TGC" run "$D/cnn.yaml" --repeat 0
expect_exit 1 "too tight a tolerance" -- "$TGC" run "$D/cnn.yaml" --input "x=$D/test_x.npy" \
    --compare "logits=$D/ref_logits_mlp.npy" --tolerance 1e-9
finish
