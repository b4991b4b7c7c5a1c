#!/usr/bin/env bash
# tgc compile --devices: the placement dumps (yaml, json, dot), the YAML
# round trip, the summary, placement errors and soft placement, usage.
. "$(dirname "$0")/lib.bash"

CNN=$ROOT/examples/digits/cnn.yaml
DATA=$ROOT/tests/data/placer

# YAML: a tgc/1 graph with every op's device filled in; compiling it again
# on the same devices gives the same placement, so the dump is a fixed point.
expect_exit 0 "placed yaml" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu,gpu0 --dump placed -o "$WORK/cnn.1.yaml"
expect_grep "^placement on 2 devices:" "$WORK/out" "summary on stdout with -o"
expect_grep "crossing devices: 2 tensors, 48 bytes per step" "$WORK/out" "crossing tensors"
if [ -s "$WORK/err" ]; then fail "placed yaml: unexpected stderr"; sed 's/^/  | /' "$WORK/err" >&2; else pass; fi
ops=$(grep -c "^- name:" "$WORK/cnn.1.yaml")
devs=$(grep -c "^  device: " "$WORK/cnn.1.yaml")
if [ "$ops" = 15 ] && [ "$devs" = 15 ]; then pass; else fail "placed yaml: $ops ops, $devs devices (want 15, 15)"; fi
grep -A4 "name: conv1$" "$WORK/cnn.1.yaml" >"$WORK/conv1.txt"
expect_grep "device: gpu0" "$WORK/conv1.txt" "conv1 on gpu0"
grep -A4 "name: flat_shape$" "$WORK/cnn.1.yaml" >"$WORK/flat_shape.txt"
expect_grep "device: cpu0" "$WORK/flat_shape.txt" "flat_shape on cpu0"
expect_exit 0 "placed yaml again" -- "$TGC" compile "$WORK/cnn.1.yaml" --optimize 0 --devices cpu,gpu0 --dump placed -o "$WORK/cnn.2.yaml"
if cmp -s "$WORK/cnn.1.yaml" "$WORK/cnn.2.yaml"; then pass; else fail "placed yaml is not a fixed point"; fi
# ...and the dump still runs through --dump shapes unchanged but for devices.
expect_exit 0 "placed yaml as shapes" -- "$TGC" compile "$WORK/cnn.1.yaml" --optimize 0 -o "$WORK/cnn.3.yaml"
if cmp -s "$WORK/cnn.1.yaml" "$WORK/cnn.3.yaml"; then pass; else fail "shapes dump of the placed dump differs"; fi

# JSON: node -> device and reason; the summary goes to stderr without -o.
expect_exit 0 "placed json" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu,gpu0 --dump placed --format json
expect_grep '"conv1": {"device": "gpu0", "reason": "default"}' "$WORK/out" "json conv1"
expect_grep '"feat_shape": {"device": "gpu0", "reason": "host-memory"}' "$WORK/out" "json Shape"
expect_grep '"batch": {"device": "cpu0", "reason": "host-memory"}' "$WORK/out" "json Gather"
expect_grep '"axes0": {"device": "cpu0", "reason": "host-memory"}' "$WORK/out" "json host initializer"
expect_grep "^placement on 2 devices:" "$WORK/err" "summary on stderr"
if command -v python3 >/dev/null 2>&1; then
    if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["nodes"]) == 27' "$WORK/out"; then
        pass
    else
        fail "json dump does not parse or lacks nodes"
    fi
fi

# Kernel ways: the JSON names how each Conv, MatMul and Gemm on the cpu
# will run, from the shapes (the chooser a run asks), and a run's trace
# shows the same way for every node.
KW=$ROOT/tests/data/kernel_ways/graph.yaml
expect_exit 0 "kernel ways json" -- "$TGC" compile "$KW" --optimize 0 --devices cpu --dump placed --format json
cp "$WORK/out" "$WORK/ways.json"
for want in '"c_pw": .*"kernel": "pointwise gemm"' '"c_wino": .*"kernel": "winograd f(2x2,3x3)"' \
            '"c_dw": .*"kernel": "direct"' '"c_im2col": .*"kernel": "im2col + gemm"' \
            '"mm_row": .*"kernel": "gemv on column panels"' '"gemm_ta": .*"kernel": "sgemm (onednn or openblas)"'; do
    expect_grep "$want" "$WORK/ways.json" "kernel way"
done
if grep -q '"x": .*"kernel"' "$WORK/ways.json"; then fail "Expand, a kernel of one way, names one"; else pass; fi
# Without oneDNN (TGC_DNNL=0) the constant B is not packed.
TGC_DNNL=0 expect_exit 0 "kernel ways without oneDNN" -- "$TGC" compile "$KW" --optimize 0 --devices cpu --dump placed --format json
expect_grep '"mm_packed": .*"kernel": "sgemm (onednn or openblas)"' "$WORK/out" "no packing without oneDNN"
K=$ROOT/tests/data/kernel_ways
expect_exit 0 "kernel ways run" -- "$TGC" run "$KW" --optimize 0 --devices cpu --input xs="$K/xs.npy" --input a="$K/a.npy" \
    --input a1="$K/a1.npy" --trace "$WORK/ways_trace.json" --output-dir "$WORK/ways_out"
for node in c_pw c_wino c_dw c_im2col c_small c_dnnl mm_packed mm_row gemm_ta; do
    dumped=$(sed -n "s/.*\"$node\": {.*\"kernel\": \"\([^\"]*\)\".*/\1/p" "$WORK/ways.json")
    traced=$(grep -o "\"name\":\"$node\",[^}]*\"kernel\":\"[^\"]*\"" "$WORK/ways_trace.json" | sed 's/.*"kernel":"//; s/"$//')
    if [ -n "$dumped" ] && [ "$dumped" = "$traced" ]; then pass; else fail "$node: dump says '$dumped', trace '$traced'"; fi
done

# The trace names how finely each node's kernel split its work
# (tgc_parallel_for calls and pieces), the same at every thread count: by
# hand from kernels_gemm.c's rule, a [512, 512] x [512, 512] product (134M
# multiply-adds, 8 pieces by SGEMM_PIECE_MACS) keeps 128 columns a piece
# (SGEMM_MIN_WIDTH): 4 pieces; [2048, 512] x [512, 512] cuts its 2048 rows
# into SGEMM_MAX_PIECES 8 of 256.
cat > "$WORK/pieces.yaml" <<'YAML'
format: tgc/1
name: pieces
outputs: [square, tall]
initializers:
  - {name: half, dtype: float32, shape: [1, 1], values: [0.5]}
  - {name: square_shape, dtype: int64, shape: [2], values: [512, 512]}
  - {name: tall_shape, dtype: int64, shape: [2], values: [2048, 512]}
nodes:
  - {name: b, op: Expand, inputs: [half, square_shape]}
  - {name: a, op: Expand, inputs: [half, tall_shape]}
  - {name: square, op: MatMul, inputs: [b, b]}
  - {name: tall, op: MatMul, inputs: [a, b]}
YAML
for t in 1 3; do
    expect_exit 0 "pieces traced at $t threads" -- "$TGC" run "$WORK/pieces.yaml" --optimize 0 --devices cpu \
        --threads cpu=$t --trace "$WORK/pieces_trace.json"
    expect_grep '"name":"square",[^}]*"splits":1,"pieces":4}' "$WORK/pieces_trace.json" "square's pieces at $t threads"
    expect_grep '"name":"tall",[^}]*"splits":1,"pieces":8}' "$WORK/pieces_trace.json" "tall's pieces at $t threads"
done

# DOT: nodes coloured by device; Graphviz renders it when it is installed.
expect_exit 0 "placed dot" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu,gpu0 --dump placed --format dot -o "$WORK/cnn.dot"
expect_grep '^digraph "digits_cnn" {' "$WORK/cnn.dot" "dot header"
expect_grep '"conv1" \[label="conv1\\nConv\\ngpu0 (default)", fillcolor="#ffb703"\]' "$WORK/cnn.dot" "dot conv1 colour"
expect_grep '"flat_shape" -> "flat" \[label="\[2\]", penwidth=2.5' "$WORK/cnn.dot" "dot crossing edge"
if command -v dot >/dev/null 2>&1; then
    expect_exit 0 "dot renders" -- dot -Tsvg "$WORK/cnn.dot" -o "$WORK/cnn.svg"
    expect_grep "<svg" "$WORK/cnn.svg" "svg written"
else
    echo "note: dot not installed; the DOT dump was not rendered"
fi

# Virtual cpus: all on cpu0 by default, nothing crosses.
expect_exit 0 "virtual cpus" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu0,cpu1 --dump placed --format json
if grep -q '"cpu1"' "$WORK/out" && ! grep -q '"device": "cpu1"' "$WORK/out"; then pass; else fail "cpu0,cpu1: something on cpu1"; fi
expect_grep "crossing devices: 0 tensors, 0 bytes per step" "$WORK/err" "virtual cpus summary"
expect_exit 0 "virtual cpus with a spec" -- "$TGC" compile "$DATA/virtual_cpus.yaml" --devices cpu0,cpu1 \
    --dump placed --format json
expect_grep '"a": {"device": "cpu1", "reason": "spec"}' "$WORK/out" "cpu1 spec"
expect_grep "crossing devices: 2 tensors, 128 bytes per step (counting N as 1)" "$WORK/err" "symbolic bytes"

# --dump shapes keeps working, with the summary when --devices is given.
expect_exit 0 "shapes with devices" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu,gpu0
expect_grep "{dtype: float32, shape: \[N, 64\]}" "$WORK/out" "shapes dump"
expect_grep "^placement on 2 devices:" "$WORK/err" "summary with shapes"
if grep -q "device:" "$WORK/out"; then fail "shapes dump has devices"; else pass; fi

# Conflicts: FILE:LINE:COL: error, exit 2, nothing written.
expect_exit 2 "conflict" -- "$TGC" compile "$DATA/coloc_spec_vs_kernel.yaml" --devices cpu,gpu0 --dump placed \
    -o "$WORK/conflict.yaml"
expect_grep "coloc_spec_vs_kernel.yaml:12:5: error: cannot place 'loss' (op Add) on gpu0: it is colocated with 'w' (line 11) which must run on gpu0, but Add has no gpu kernel for uint8; remove the colocation or use --soft-placement \[placement-conflict\]" "$WORK/err" "conflict message"
if [ -e "$WORK/conflict.yaml" ] || ls "$WORK"/conflict.yaml.tmp* >/dev/null 2>&1; then fail "output written for a conflict"; else pass; fi
expect_exit 2 "several conflicts" -- "$TGC" compile "$DATA/multiple_conflicts.yaml" --devices cpu,gpu0
expect_grep "^3 errors; nothing written" "$WORK/err" "error count"
# ...soft placement resolves it with a warning.
expect_exit 0 "soft placement" -- "$TGC" compile "$DATA/coloc_spec_vs_kernel.yaml" --devices cpu,gpu0 \
    --soft-placement --dump placed --format json
expect_grep "coloc_spec_vs_kernel.yaml:11:46: warning: 'w' (op Relu) asks for gpu0" "$WORK/err" "soft warning"
expect_grep '"loss": {"device": "cpu0", "reason": "soft"}' "$WORK/out" "soft placed"
expect_exit 2 "unlisted device" -- "$TGC" compile "$DATA/virtual_cpu_unlisted.yaml" --devices cpu
expect_grep "error: cannot place 'a' (op Relu) on cpu1" "$WORK/err" "unlisted message"

# Usage.
expect_exit 2 "placed without devices" -- "$TGC" compile "$CNN" --dump placed
expect_grep "needs --devices" "$WORK/err" "placed needs devices"
expect_exit 2 "bad format" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu --dump placed --format xml
expect_exit 2 "format for shapes" -- "$TGC" compile "$CNN" --format json
expect_exit 2 "bad device list" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu,tpu0
expect_grep "'tpu0' in device list 'cpu,tpu0' is not a device name" "$WORK/err" "device list message"
expect_exit 2 "device listed twice" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu,cpu0
# An op with no gpu kernel (placement is static: no gpu0 needed here).
expect_exit 0 "no gpu kernel" -- "$TGC" compile "$ROOT/tests/data/placer/no_gpu_kernel.yaml" --devices cpu,gpu0 --dump placed
expect_grep "by kernel availability" "$WORK/err" "kernel availability section"
expect_grep "    y (TfIdfVectorizer) on cpu0" "$WORK/err" "the node moved to the cpu"
expect_exit 0 "compile help" -- "$TGC" compile --help
expect_grep "\-\-dump placed" "$WORK/out" "help mentions placed"
expect_grep "\-\-soft-placement" "$WORK/out" "help mentions soft placement"
finish
