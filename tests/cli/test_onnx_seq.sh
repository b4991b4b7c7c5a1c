#!/usr/bin/env bash
# SplitToSequence read only through SequenceAt at constant positions,
# imported as Split (+ Squeeze): ONNX models (tests/data/onnx_seq, made by
# make_models.py) run and each output compared with numpy's slicing of the
# input; a position past the sequence is refused at import with a clear
# message (exit 2, a model error); a sequence read by another op stays one.
. "$(dirname "$0")/lib.bash"
D="$ROOT/tests/data/onnx_seq"

# run_case MODEL DEVICES OUTPUT...: OUTPUT is the SequenceAt's output name
# (the importer names the node after it), compared with MODEL_OUTPUT.npy.
run_case() {
    local model=$1 devices=$2
    shift 2
    local args=(--input "x=$D/${model}_x.npy")
    for o in "$@"; do args+=(--compare "$o=$D/${model}_$o.npy"); done
    expect_exit 0 "$model on $devices" -- "$TGC" run "$D/$model.onnx" --devices "$devices" "${args[@]}" --tolerance 0
    for o in "$@"; do expect_grep "compare $o .* ok" "$WORK/out" "$model $o on $devices"; done
}

devices_list="cpu"
"$TGC" devices | grep -q "^gpu0" && devices_list="cpu gpu0"
for dev in $devices_list; do
    run_case scalar_split "$dev" a b c
    run_case list_split "$dev" a b
    run_case unbind_keepdims0 "$dev" a b c
    run_case unbind_keepdims1 "$dev" a b
    run_case split_keepdims0_ignored "$dev" a
done

expect_exit 2 "position past the sequence" -- "$TGC" run "$D/position_out_of_range.onnx" \
    --input "x=$D/position_out_of_range_x.npy"
expect_grep "op 'SequenceAt': position 2 is outside \[-2, 1\]: the sequence of SplitToSequence 'seq' has 2 tensors" \
    "$WORK/err" "position past the sequence message"

# A sequence read by another op stays a sequence: SplitToSequence and
# SequenceAt import as the ops they are.
expect_exit 0 "sequence read by SequenceLength imports" -- "$TGC" import "$D/sequence_read_elsewhere.onnx" \
    -o "$WORK/elsewhere.yaml"
expect_grep "op: SplitToSequence" "$WORK/elsewhere.yaml" "sequence read elsewhere stays a SplitToSequence"
expect_grep "op: SequenceAt" "$WORK/elsewhere.yaml" "its reader stays a SequenceAt"
finish
