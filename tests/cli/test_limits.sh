#!/usr/bin/env bash
# --load-limits: what an untrusted model may ask for (file bytes, nodes,
# rank, one tensor's bytes), each refused with a clear error and exit 2;
# the defaults take an ordinary model.
. "$(dirname "$0")/lib.bash"

cat > "$WORK/m.yaml" <<'YAML'
format: tgc/1
inputs:
  - {name: x, dtype: float32, shape: [N, 4, 25]}
outputs: [z]
nodes:
  - {name: y, op: Relu, inputs: [x]}
  - {name: z, op: Sigmoid, inputs: [y]}
YAML

expect_exit 0 "defaults take the model" -- "$TGC" compile "$WORK/m.yaml"
expect_exit 0 "limits it stays within" -- "$TGC" compile "$WORK/m.yaml" --load-limits file=1KiB,nodes=3,rank=3,tensor=400

expect_exit 2 "file over the limit" -- "$TGC" compile "$WORK/m.yaml" --load-limits file=100
expect_grep "m.yaml: error: the file has [0-9]* bytes or more, above the limit of 100 (--load-limits file=SIZE raises it) \[over-limit\]" \
    "$WORK/err" "file limit message"
expect_exit 2 "nodes over the limit" -- "$TGC" compile "$WORK/m.yaml" --load-limits nodes=2
expect_grep "has 3 inputs, initializers and nodes, above the limit of 2 (--load-limits nodes=N raises it) \[over-limit\]" \
    "$WORK/err" "nodes limit message"
expect_exit 2 "rank over the limit" -- "$TGC" compile "$WORK/m.yaml" --load-limits rank=2
expect_grep "m.yaml:3:5: error: graph input 'x': output 0 has shape \[N, 4, 25\] (float32): its rank 3 is above the limit of 2" \
    "$WORK/err" "rank limit message, at the input's position"
expect_exit 2 "a tensor over the limit" -- "$TGC" compile "$WORK/m.yaml" --load-limits tensor=399
expect_grep "its 400 bytes are above the limit of 399 (--load-limits tensor=SIZE) \[over-limit\]" "$WORK/err" "tensor limit message"
expect_exit 2 "a tensor over the limit, run" -- "$TGC" run "$WORK/m.yaml" --load-limits tensor=100
expect_grep "over-limit" "$WORK/err" "run applies the limits"

expect_exit 2 "a malformed list" -- "$TGC" compile "$WORK/m.yaml" --load-limits speed=9
expect_grep "'speed=9' is not a limit" "$WORK/err" "malformed list message"
expect_exit 2 "a rank above tgc's most" -- "$TGC" compile "$WORK/m.yaml" --load-limits rank=9

LIN=/usr/share/libonnx-testdata/data/pytorch-converted/test_Linear/model.onnx
if [ -f "$LIN" ]; then
    expect_exit 2 "an ONNX file over the limit" -- "$TGC" import "$LIN" -o "$WORK/lin.yaml" --load-limits file=64
    expect_grep "above the limit of 64 (--load-limits file=SIZE raises it) \[over-limit\]" "$WORK/err" "import's file limit"
    [ ! -e "$WORK/lin.yaml" ] && pass || fail "nothing is written past a limit"
    expect_exit 0 "an ONNX file within the limits" -- "$TGC" import "$LIN" -o "$WORK/lin.yaml" --load-limits file=1MiB
    expect_exit 2 "an ONNX model's tensor over the limit" -- "$TGC" run "$LIN" --load-limits tensor=16
    expect_grep "over-limit" "$WORK/err" "run of an ONNX model applies the limits"
fi
finish
