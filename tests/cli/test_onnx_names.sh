#!/usr/bin/env bash
# A model's own names (tests/data/onnx_names, made by make_models.py): an
# ONNX model's inputs are fed and its outputs compared by their ONNX names
# as written ("onnx::Flatten_0", "input.1", "x:0", "/block/Split_output_1",
# a JSON text), on cpu and cpu,gpu0; --output-dir writes each output under
# its name %XX-escaped; a trace and a runtime error name nodes by their
# ONNX names; a feed naming no input lists the inputs with dtypes and
# shapes. References are numpy's.
. "$(dirname "$0")/lib.bash"
D="$ROOT/tests/data/onnx_names"
JSON='{"1": "1_minute_timer", "2": "5_minute_timer"}'
LONG=$(/usr/bin/python3 -c 'print("{" + ", ".join("\"%d\": \"%d_minute_timer\"" % (i, 5 * i) for i in range(1, 11)) + "}")')
feeds=(--input "onnx::Flatten_0=$D/a.npy" --input "input.1=$D/b.npy" --input "x:0=$D/x.npy")

devices_list="cpu"
"$TGC" devices | grep -q "^gpu0" && devices_list="cpu cpu,gpu0"
for dev in $devices_list; do
    expect_exit 0 "run by ONNX names on $dev" -- "$TGC" run "$D/exporter_names.onnx" --devices "$dev" "${feeds[@]}" \
        --compare "/block/Split_output_1=$D/split1.npy" --compare "y:0=$D/y.npy" --compare "$JSON=$D/json.npy" \
        --compare "$LONG=$D/long.npy" \
        --output-dir "$WORK/out_$dev" --trace "$WORK/trace_$dev.json" --optimize 0
    expect_grep "compare /block/Split_output_1 with .* ok" "$WORK/out" "output 1 of a Split by its ONNX name ($dev)"
    expect_grep "compare y:0 with .* ok" "$WORK/out" "a renamed output by its ONNX name ($dev)"
    expect_grep "compare {\"1\": \"1_minute_timer\", \"2\": \"5_minute_timer\"} with .* ok" "$WORK/out" \
        "a JSON-named output ($dev)"
    for f in %2Fblock%2FSplit_output_1.npy y%3A0.npy \
             %7B%221%22%3A%20%221_minute_timer%22%2C%20%222%22%3A%20%225_minute_timer%22%7D.npy; do
        [ -f "$WORK/out_$dev/$f" ] && pass || fail "--output-dir: $f not written ($dev): $(ls "$WORK/out_$dev")"
    done
    expect_grep '"name":"/block/Split"' "$WORK/trace_$dev.json" "the trace names the ONNX node ($dev)"
    expect_grep '"name":"relu node"' "$WORK/trace_$dev.json" "the trace names a node with a space ($dev)"
done
/usr/bin/python3 - "$WORK/out_cpu" "$D" "$LONG" <<'PY' && pass || fail "escaped file names read back with unquote"
import os, sys, urllib.parse
import numpy as np
out, data, long_name = sys.argv[1:]
names = {urllib.parse.unquote(f[:-4]): f for f in os.listdir(out) if "~" not in f}
assert set(names) == {"/block/Split_output_1", "y:0", '{"1": "1_minute_timer", "2": "5_minute_timer"}'}, names
np.testing.assert_allclose(np.load(os.path.join(out, names["y:0"])), np.load(os.path.join(data, "y.npy")))
# Past 200 escaped bytes: the first 191, '~' and the FNV-1a hash of the name (docs/graph-format.md).
escaped = urllib.parse.quote(long_name, safe="_.-")
h = 2166136261
for b in long_name.encode():
    h = ((h ^ b) * 16777619) & 0xFFFFFFFF
want = escaped[:191] + "~%08x.npy" % h
assert len(escaped) > 200 and os.path.exists(os.path.join(out, want)), (want, os.listdir(out))
np.testing.assert_allclose(np.load(os.path.join(out, want)), np.load(os.path.join(data, "long.npy")), rtol=1e-5)
PY

# tgc's names of the inputs work too; x_0 is tgc's name of x:0.
expect_exit 0 "run by tgc names" -- "$TGC" run "$D/exporter_names.onnx" --input "onnx::Flatten_0=$D/a.npy" \
    --input "input.1=$D/b.npy" --input "x_0=$D/x.npy" --compare "y:0=$D/y.npy"

expect_exit 2 "a feed naming no input" -- "$TGC" run "$D/exporter_names.onnx" --input "onnx::Flatten=$D/a.npy"
expect_grep "'onnx::Flatten' is not a graph input; the inputs are 'onnx::Flatten_0' (float32 \[2, 4\]), 'input.1' (float32 \[2, 4\]), 'x:0' (float32 \[2, 4\]) \[bad-feed\]" \
    "$WORK/err" "the unknown feed's message lists the inputs"
expect_exit 2 "--compare naming no output" -- "$TGC" run "$D/exporter_names.onnx" "${feeds[@]}" --compare "y=$D/y.npy"
expect_grep "'y' is not a graph output; the outputs are '/block/Split_output_1', 'y:0', '{\"1\"" "$WORK/err" \
    "the unknown output's message lists the outputs"

# A run-time error names the ONNX node.
expect_exit 1 "a Reshape that fails at run time" -- "$TGC" run "$D/runtime_error.onnx" --input "input.1=$D/four.npy"
expect_grep "node '/head/Reshape' (Reshape) on cpu0: .*cannot reshape \[4\]" "$WORK/err" "the run-time error names the ONNX node"

# The written file keeps the ONNX names beside tgc's, and a dump of it too.
mkdir -p "$WORK/imp"
expect_exit 0 "import" -- "$TGC" import "$D/exporter_names.onnx" -o "$WORK/imp/names.yaml"
expect_grep "{name: x_0, source_name: 'x:0', dtype: float32, shape: \[2, 4\]}" "$WORK/imp/names.yaml" "input source_name"
expect_grep "{ref: '/block/Split_output_0:1', source_name: /block/Split_output_1}" "$WORK/imp/names.yaml" \
    "output source_name"
expect_grep "source_name: relu node" "$WORK/imp/names.yaml" "node source_name"
expect_exit 0 "dump" -- "$TGC" compile "$WORK/imp/names.yaml" --dump shapes -o "$WORK/imp/dumped.yaml"
expect_exit 0 "dump again" -- "$TGC" compile "$WORK/imp/dumped.yaml" --dump shapes -o "$WORK/imp/dumped2.yaml"
cmp -s "$WORK/imp/dumped.yaml" "$WORK/imp/dumped2.yaml" && pass || fail "a dump with source names does not round-trip"
expect_grep "source_name: '/head/Sigmoid'\|source_name: /head/Sigmoid" "$WORK/imp/dumped.yaml" "the dump keeps source names"

# tgc compile reads a .onnx straight into memory: the graph the imported file
# loads as (the same dump, weights written beneath the dump's folder alike).
mkdir -p "$WORK/direct"
expect_exit 0 "compile a .onnx" -- "$TGC" compile "$D/exporter_names.onnx" --dump shapes -o "$WORK/direct/dumped.yaml"
sed 's/exporter_names_weights/names_weights/g' "$WORK/direct/dumped.yaml" >"$WORK/direct/renamed.yaml"
cmp -s "$WORK/imp/dumped.yaml" "$WORK/direct/renamed.yaml" && pass ||
    fail "tgc compile of the .onnx dumps another graph than its imported file"
# A run writes no file: nothing appears in TMPDIR.
mkdir -p "$WORK/tmp"
expect_exit 0 "run a .onnx" -- env TMPDIR="$WORK/tmp" "$TGC" run "$D/exporter_names.onnx" "${feeds[@]}"
[ -z "$(ls -A "$WORK/tmp")" ] && pass || fail "a run of a .onnx left files in TMPDIR: $(ls -A "$WORK/tmp")"

# Inference errors name the ONNX node: the written file with a Relu fed a string.
sed 's/^- name: y_0$/- name: y_0\n  out: [{dtype: int64}]/' "$WORK/imp/names.yaml" >"$WORK/imp/bad.yaml"
expect_exit 2 "a declared output that disagrees" -- "$TGC" compile "$WORK/imp/bad.yaml"
expect_grep "node 'relu node' (Relu)" "$WORK/err" "an inference error names the ONNX node"
finish
