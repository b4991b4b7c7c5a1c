#!/usr/bin/env bash
# tgc run --input-dir DIR --inflight K: many inputs streamed through one
# session, K steps at once, outputs in input order. Each step's output is
# checked against PyTorch or NumPy (tests/data/pipeline/make_data.py) by a
# lone `tgc run --compare`, and the streamed output is byte for byte the
# lone run's: on the digits CNN, on a graph split over cpu0 | cpu1 (and
# cpu0 | gpu0 where OpenCL is there), and on a two-input graph fed from a
# folder per step. Then the errors: each a message and exit 2.
. "$(dirname "$0")/lib.bash"
D="$ROOT/examples/digits"
P="$ROOT/tests/data/pipeline"

# stream MODEL IN OUT_NAME DEVICES K STEMS REF_DIR OUTPUT [--input ...]: streams IN through MODEL,
# checks the summary lines come in order, then each step against its lone run.
stream() {
    local model=$1 in=$2 out=$3 devices=$4 k=$5 stems=$6 ref=$7 output=$8
    shift 8
    expect_exit 0 "$out: stream with $k in flight" -- "$TGC" run "$model" --devices "$devices" --input-dir "$in" \
        --inflight "$k" --output-dir "$WORK/$out" "$@"
    expect_grep "steps/s (after the first: [0-9.]* steps/s); latency median .* $k in flight on $devices" "$WORK/out" \
        "$out: throughput line"
    mkdir -p "$WORK/$out.lone"
    local order
    order=$(grep -o "^[a-z0-9]*/$output " "$WORK/out" | cut -d/ -f1 | tr '\n' ' ')
    [ "$order" = "$stems " ] && pass || fail "$out: steps printed as '$order', expected '$stems '"
    for s in $stems; do
        local feeds=()
        if [ -d "$in/$s" ]; then
            for f in "$in/$s"/*.npy; do feeds+=(--input "$(basename "$f" .npy)=$f"); done
        else
            feeds=(--input "x=$in/$s.npy")
        fi
        expect_exit 0 "$out/$s: lone run" -- "$TGC" run "$model" --devices "$devices" "${feeds[@]}" "$@" \
            --compare "$output=$ref/${s}_$output.npy" --output-dir "$WORK/$out.lone/$s"
        expect_grep "compare $output .* ok" "$WORK/out" "$out/$s: lone run against the reference"
        cmp -s "$WORK/$out/$s/$output.npy" "$WORK/$out.lone/$s/$output.npy" && pass ||
            fail "$out/$s: streamed output differs from the lone run"
    done
}

stream "$D/cnn.yaml" "$P/digits_in" digits cpu 3 "b00 b01 b02 b03 b04" "$P/digits_ref" logits
stream "$D/cnn.yaml" "$P/digits_in" digits1 cpu 1 "b00 b01 b02 b03 b04" "$P/digits_ref" logits
for s in b00 b01 b02 b03 b04; do # K changes nothing in the bytes
    cmp -s "$WORK/digits/$s/probs.npy" "$WORK/digits1/$s/probs.npy" && pass || fail "digits/$s: K=3 and K=1 differ"
done
stream "$ROOT/tests/data/exec/two_devices.yaml" "$P/stages_in" stages cpu0,cpu1 2 "a b c d" "$P/stages_ref" y
if "$TGC" devices | grep -q '^gpu0'; then
    sed 's/device: cpu1/device: gpu0/' "$ROOT/tests/data/exec/two_devices.yaml" >"$WORK/cpu_gpu.yaml"
    stream "$WORK/cpu_gpu.yaml" "$P/stages_in" stages_gpu cpu0,gpu0 4 "a b c d" "$P/stages_ref" y
fi
stream "$P/two_inputs.yaml" "$P/two_in" two cpu 2 "s1 s2 s3" "$P/two_ref" z

# An ONNX model's inputs by their own names, escaped as output files are: onnx::Flatten_0 is
# onnx%3A%3AFlatten_0.npy in a step's folder (numpy's references: tests/data/onnx_names).
N="$ROOT/tests/data/onnx_names"
mkdir -p "$WORK/named/s1"
cp "$N/a.npy" "$WORK/named/s1/onnx%3A%3AFlatten_0.npy"
cp "$N/b.npy" "$WORK/named/s1/input.1.npy"
cp "$N/x.npy" "$WORK/named/s1/x%3A0.npy"
expect_exit 0 "ONNX names from a folder" -- "$TGC" run "$N/exporter_names.onnx" --input-dir "$WORK/named" \
    --output-dir "$WORK/named_out" --inflight 2
expect_exit 0 "ONNX names: lone run" -- "$TGC" run "$N/exporter_names.onnx" --input "onnx::Flatten_0=$N/a.npy" \
    --input "input.1=$N/b.npy" --input "x:0=$N/x.npy" --compare "y:0=$N/y.npy" --output-dir "$WORK/named_lone"
expect_grep "compare y:0 .* ok" "$WORK/out" "ONNX names: lone run against numpy"
cmp -s "$WORK/named_out/s1/y%3A0.npy" "$WORK/named_lone/y%3A0.npy" && pass || fail "ONNX names: streamed y:0 differs"

# --input gives one input to every step; the entries give the other.
mkdir -p "$WORK/x_only"
for s in s1 s2 s3; do cp "$P/two_in/$s/x.npy" "$WORK/x_only/$s.npy"; done
expect_exit 0 "fixed y, streamed x" -- "$TGC" run "$P/two_inputs.yaml" --input-dir "$WORK/x_only" \
    --input "y=$P/two_in/s1/y.npy" --output-dir "$WORK/mixed"
expect_exit 0 "mixed: lone run" -- "$TGC" run "$P/two_inputs.yaml" --input "x=$P/two_in/s1/x.npy" \
    --input "y=$P/two_in/s1/y.npy" --output-dir "$WORK/mixed.lone"
cmp -s "$WORK/mixed/s1/z.npy" "$WORK/mixed.lone/z.npy" && pass || fail "mixed: s1 differs from the lone run"

# --inflight with --repeat: N runs of one input, K at once.
expect_exit 0 "repeat with 2 in flight" -- "$TGC" run "$D/cnn.yaml" --input "x=$D/test_x.npy" --repeat 6 \
    --inflight 2 --compare "logits=$D/ref_logits_cnn.npy"
expect_grep "^6 steps in .* 2 in flight on cpu" "$WORK/out" "repeat: throughput line"
expect_grep "compare logits .* ok" "$WORK/out" "repeat: the last run against PyTorch"

# Errors.
mkdir -p "$WORK/empty" "$WORK/junk" "$WORK/clash/a" "$WORK/gap/s1" "$WORK/gap/s2" "$WORK/gap/s3"
cp "$P/stages_in/a.npy" "$WORK/junk/a.npy"
echo hello >"$WORK/junk/README.txt"
cp "$P/stages_in/a.npy" "$WORK/clash/a.npy"
for s in s1 s3; do cp "$P/two_in/$s/"*.npy "$WORK/gap/$s/"; done
cp "$P/two_in/s2/x.npy" "$WORK/gap/s2/"
expect_exit 2 "an empty folder" -- "$TGC" run "$D/cnn.yaml" --input-dir "$WORK/empty"
expect_grep "holds no inputs" "$WORK/err" "empty folder message"
expect_exit 2 "a folder that is not there" -- "$TGC" run "$D/cnn.yaml" --input-dir "$WORK/nowhere"
expect_grep "cannot open '.*nowhere'" "$WORK/err" "missing folder message"
expect_exit 2 "an entry that is not .npy" -- "$TGC" run "$D/cnn.yaml" --input-dir "$WORK/junk"
expect_grep "README.txt' is neither a folder of NAME.npy files nor a .npy file" "$WORK/err" "junk message"
expect_exit 2 "two entries, one stem" -- "$TGC" run "$D/cnn.yaml" --input-dir "$WORK/clash"
expect_grep "'a' and 'a.npy' .* would be one step" "$WORK/err" "clash message"
expect_exit 2 ".npy entries for two inputs" -- "$TGC" run "$P/two_inputs.yaml" --input-dir "$P/stages_in"
expect_grep "feeds the one graph input not given by --input, but 2 are left" "$WORK/err" "two inputs message"
# A step whose folder lacks y.npy: the steps before it are written, it and those after are not.
expect_exit 2 "a step missing an input" -- "$TGC" run "$P/two_inputs.yaml" --input-dir "$WORK/gap" --inflight 3 \
    --output-dir "$WORK/gap_out"
expect_grep "step 2 (input 's2/') failed" "$WORK/err" "missing input names the step"
expect_grep "s2/y.npy" "$WORK/err" "missing input names the file"
[ -f "$WORK/gap_out/s1/z.npy" ] && [ ! -e "$WORK/gap_out/s2" ] && [ ! -e "$WORK/gap_out/s3" ] && pass ||
    fail "gap: expected s1 written, s2 and s3 not"
# A feed of the wrong shape fails its step the same way.
expect_exit 2 "a feed of the wrong shape" -- "$TGC" run "$D/cnn.yaml" --input-dir "$P/stages_in"
expect_grep "step 1 (input 'a.npy') failed" "$WORK/err" "wrong shape names the step"
expect_grep "input 'x' is declared with shape" "$WORK/err" "wrong shape message"
expect_exit 2 "--inflight 0" -- "$TGC" run "$D/cnn.yaml" --inflight 0
expect_exit 2 "--inflight too many" -- "$TGC" run "$D/cnn.yaml" --inflight 100000
expect_grep "from 1 to 256" "$WORK/err" "--inflight range message"
expect_exit 2 "--input-dir with --repeat" -- "$TGC" run "$D/cnn.yaml" --input-dir "$P/digits_in" --repeat 2
expect_grep "takes no --repeat, --compare or --labels" "$WORK/err" "--input-dir with --repeat message"
finish
