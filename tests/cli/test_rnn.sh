#!/usr/bin/env bash
# RNN, GRU and LSTM end to end: ONNX models (tests/data/rnn, made by
# make_rnn_refs.py) imported and run, each output compared with its
# reference: PyTorch's own outputs for the exported nn.LSTM/GRU/RNN modules,
# a numpy transcription of ONNX's equations for what PyTorch cannot express
# (sequence_lens, reverse, clip, input_forget, peepholes, activations with
# alpha/beta, linear_before_reset 0, layout 1). On cpu, and where gpu0
# exists on cpu,gpu0 and on gpu0 alone (the OpenCL kernels).
. "$(dirname "$0")/lib.bash"
D="$ROOT/tests/data/rnn"

# run_case MODEL DEVICES FEEDS... -- OUTPUT=REF...: OUTPUT is the graph output
# by its ONNX name (its node's output k > 0 too: an LSTM's Y_h), REF the
# reference file's suffix.
run_case() {
    local model=$1 devices=$2
    shift 2
    local args=() outs=()
    while [ "$1" != "--" ]; do args+=(--input "$1=$D/${model}_$1.npy"); shift; done
    shift
    for o in "$@"; do args+=(--compare "${o%%=*}=$D/${model}_${o#*=}.npy"); outs+=("${o%%=*}"); done
    expect_exit 0 "$model on $devices" -- "$TGC" run "$D/$model.onnx" --devices "$devices" "${args[@]}" --tolerance 2e-5
    for o in "${outs[@]}"; do expect_grep "compare $o .* ok" "$WORK/out" "$model $o on $devices"; done
}

devices_list="cpu"
"$TGC" devices | grep -q "^gpu0" && devices_list="cpu cpu,gpu0 gpu0"
for dev in $devices_list; do
    run_case torch_lstm_bidir "$dev" x -- y=y h=h c=c
    run_case torch_lstm_batch_first_2layers "$dev" x -- y=y h=h c=c
    run_case torch_gru_bidir "$dev" x -- y=y h=h
    run_case torch_rnn_relu "$dev" x -- y=y h=h
    run_case lstm_bidir_seqlens_peepholes "$dev" x lens -- y=y yh=yh yc=yc
    run_case lstm_reverse_input_forget_layout1 "$dev" x lens -- y=y yh=yh yc=yc
    run_case gru_bidir_lbr0 "$dev" x lens -- y=y yh=yh
    run_case gru_bidir_lbr1 "$dev" x lens -- y=y yh=yh
    run_case rnn_reverse_relu "$dev" x lens -- y=y yh=yh
    run_case torch_lstm_batch1_bidir_2layers "$dev" x -- y=y h=h c=c
    run_case torch_gru_batch1_bidir "$dev" x -- y=y h=h
    run_case torch_rnn_batch1 "$dev" x -- y=y h=h
done

# One batch row on the cpu: each R (2 layers x 2 directions x 4 x 70 x 70
# floats, 313600 bytes) is read from column panels held in its node's
# kernel cache in place of R, which the session lets go.
expect_exit 0 "batch-1 LSTM memory report" -- "$TGC" run "$D/torch_lstm_batch1_bidir_2layers.onnx" --memory-report \
    --input "x=$D/torch_lstm_batch1_bidir_2layers_x.npy"
expect_grep "weights replaced *313600 " "$WORK/out" "R held once, in column panels"

# A sequence length past the sequence: a clear error naming the node, exit 1.
python_free_bad_lens() { # the lens feed of the peephole model with 9 in place of 5
    cp "$D/lstm_bidir_seqlens_peepholes_lens.npy" "$WORK/bad_lens.npy"
    printf '\x09' | dd of="$WORK/bad_lens.npy" bs=1 seek=$(($(stat -c %s "$WORK/bad_lens.npy") - 12)) conv=notrunc 2>/dev/null
}
python_free_bad_lens
expect_exit 1 "sequence_lens past the sequence" -- "$TGC" run "$D/lstm_bidir_seqlens_peepholes.onnx" \
    --input "x=$D/lstm_bidir_seqlens_peepholes_x.npy" --input "lens=$WORK/bad_lens.npy"
expect_grep "LSTM.*sequence_lens\[0\] is 9, outside \[0, 5\]" "$WORK/err" "bad sequence_lens message"
if [ "$devices_list" != cpu ]; then
    expect_exit 1 "sequence_lens past the sequence on gpu0" -- "$TGC" run "$D/lstm_bidir_seqlens_peepholes.onnx" \
        --devices gpu0 --input "x=$D/lstm_bidir_seqlens_peepholes_x.npy" --input "lens=$WORK/bad_lens.npy"
    expect_grep "on gpu0: .*sequence_lens\[0\] is 9, outside \[0, 5\]" "$WORK/err" "bad sequence_lens message on gpu0"
fi
finish
