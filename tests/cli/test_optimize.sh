#!/usr/bin/env bash
# The optimization passes end to end: a graph that every pass rewrites
# (tests/data/passes, reference outputs by numpy from make_refs.py) run at
# --optimize 0, 1 and 2 against the reference; its --dump optimized loaded
# back and run; the examples' outputs the same with and without the passes
# (against their own PyTorch references); bad --optimize values refused.
. "$(dirname "$0")/lib.bash"
D="$ROOT/tests/data/passes"

for level in 0 1 2; do
    expect_exit 0 "every_pass at --optimize $level" -- "$TGC" run "$D/every_pass.yaml" --optimize $level \
        --input x="$D/every_pass_x.npy" --input img="$D/every_pass_img.npy" \
        --compare y1="$D/every_pass_y1.npy" --compare y2="$D/every_pass_y2.npy" --tolerance 1e-5
    expect_grep "compare y1 .* ok" "$WORK/out" "y1 at --optimize $level"
    expect_grep "compare y2 .* ok" "$WORK/out" "y2 at --optimize $level"
done

mkdir -p "$WORK/opt"
expect_exit 0 "--dump optimized" -- "$TGC" compile "$D/every_pass.yaml" --dump optimized -o "$WORK/opt/every_pass.yaml"
for pass in fold-constants eliminate-common matmul-add-to-gemm fold-batch-norm eliminate-dead; do
    expect_grep "pass $pass" "$WORK/out" "report line of $pass"
done
expect_grep "eliminate-dead .* -> *11 nodes" "$WORK/out" "nodes left after the passes"
for op in BatchNormalization MatMul Shape Exp; do
    if grep -q "op: $op" "$WORK/opt/every_pass.yaml"; then fail "$op left in the optimized dump"; else pass; fi
done
expect_grep "outputs: \[y1, y2\]" "$WORK/opt/every_pass.yaml" "outputs keep their names"
# the Conv takes bn2's BatchNormalization (one Conv named bn2); its Relu stays a node
# (the run's plan absorbs it into the Conv's kernel: executor/fuse.c)
if grep -A1 "name: bn2$" "$WORK/opt/every_pass.yaml" | grep -q "op: Conv" &&
   grep -A2 "name: y2$" "$WORK/opt/every_pass.yaml" | grep -q "inputs: \[bn2\]"; then pass; else
    fail "the Conv with its BatchNormalization is one Conv named bn2, read by the Relu y2"; fi
if grep -A1 "name: bn1$" "$WORK/opt/every_pass.yaml" | grep -q "op: Gemm"; then pass; else
    fail "MatMul + Add + BatchNormalization is one Gemm named bn1"; fi
expect_grep "file: optimized/" "$WORK/opt/every_pass.yaml" "folded weights written beside the dump"
expect_exit 0 "the optimized dump runs" -- "$TGC" run "$WORK/opt/every_pass.yaml" --optimize 0 \
    --input x="$D/every_pass_x.npy" --input img="$D/every_pass_img.npy" \
    --compare y1="$D/every_pass_y1.npy" --compare y2="$D/every_pass_y2.npy" --tolerance 1e-5
expect_grep "compare y2 .* ok" "$WORK/out" "the optimized dump's y2"

# Without -o the dump writes its made weights inline, and still loads.
"$TGC" compile "$D/every_pass.yaml" --dump optimized >"$WORK/inline.yaml" 2>/dev/null
expect_exit 0 "an inline optimized dump runs" -- "$TGC" run "$WORK/inline.yaml" \
    --input x="$D/every_pass_x.npy" --input img="$D/every_pass_img.npy" --compare y1="$D/every_pass_y1.npy" \
    --tolerance 1e-5

# The examples, every pass on, against their references.
E="$ROOT/examples/digits"
for m in mlp cnn; do
    x="$E/test_x.npy"
    [ $m = mlp ] && x="$E/test_x_flat.npy"
    for level in 0 2; do
        expect_exit 0 "digits $m at --optimize $level" -- "$TGC" run "$E/$m.yaml" --optimize $level \
            --input x="$x" --compare logits="$E/ref_logits_$m.npy" --tolerance 1e-4
    done
done

# Groups form with a gpu in the device list too (every device has the fused
# op's kernel), one node placed on one device: every_pass's group, and a
# chain of elementwise ops alone, which the placer puts on gpu0.
expect_exit 0 "compile --devices cpu,gpu0 --dump placed" -- "$TGC" compile "$D/every_pass.yaml" \
    --devices cpu,gpu0 --dump placed
if grep -A4 "op: _FusedElementwise" "$WORK/out" | grep -Eq "device: (cpu0|gpu0)"; then pass; else
    fail "every_pass's fused group placed on a device"; fi
cat >"$WORK/chain.yaml" <<'YAML'
format: tgc/1
inputs: [{name: x, dtype: float32, shape: [N, 3]}]
outputs: [y]
initializers:
  - {name: b, dtype: float32, shape: [3], values: [0.5, -1, 1]}
nodes:
  - {name: s, op: Add, inputs: [x, b]}
  - {name: r, op: Relu, inputs: [s]}
  - {name: y, op: Tanh, inputs: [r]}
YAML
expect_exit 0 "a chain compiled for cpu,gpu0" -- "$TGC" compile "$WORK/chain.yaml" --devices cpu,gpu0 --dump placed
if grep -A4 "op: _FusedElementwise" "$WORK/out" | grep -q "device: gpu0"; then pass; else
    fail "the chain's fused group placed on gpu0"; sed 's/^/  | /' "$WORK/out" >&2; fi

expect_exit 2 "--optimize 3" -- "$TGC" run "$D/every_pass.yaml" --optimize 3
expect_grep "0, 1 or 2" "$WORK/err" "--optimize's message"
expect_exit 2 "compile --optimize x" -- "$TGC" compile "$D/every_pass.yaml" --optimize x --dump optimized
finish
