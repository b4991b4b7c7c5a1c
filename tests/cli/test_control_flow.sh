#!/usr/bin/env bash
# Control flow from the command line: tests/data/good/control_flow.yaml
# (a counting Loop, a while-loop, a Scan, an If holding a Loop) run on cpu,
# and on cpu,gpu0 where there is one, each output compared with numpy's
# (tests/data/control_flow/make_refs.py); --max-iterations stops a loop
# that would run on; a failing kernel inside a body names its iteration;
# a sequence output is written element by element.
. "$(dirname "$0")/lib.bash"
G="$ROOT/tests/data/good/control_flow.yaml"
D="$ROOT/tests/data/control_flow"

devices_list="cpu"
"$TGC" devices | grep -q "^gpu0" && devices_list="cpu cpu,gpu0"
for dev in $devices_list; do
    for flag in true false; do
        branch=else
        [ $flag = true ] && branch=then
        expect_exit 0 "control_flow on $dev, flag $flag" -- "$TGC" run "$G" --devices "$dev" \
            --input "x=$D/x.npy" --input "flag=$D/flag_$flag.npy" \
            --compare "count=$D/count.npy" --compare "count:1=$D/count_1.npy" --compare "while=$D/while.npy" \
            --compare "scan=$D/scan.npy" --compare "scan:1=$D/scan_1.npy" --compare "pick=$D/pick_$branch.npy" \
            --tolerance 0
        for o in count while scan pick; do expect_grep "compare $o .* ok" "$WORK/out" "$o on $dev, flag $flag"; done
    done
done

# The while-loop runs 7 iterations: a limit of 5 stops it, cleanly.
expect_exit 1 "--max-iterations 5" -- "$TGC" run "$G" --input "x=$D/x.npy" --input "flag=$D/flag_true.npy" \
    --max-iterations 5
expect_grep "node 'while' (Loop): it would run past the session's limit of 5 iterations (--max-iterations)" \
    "$WORK/err" "max-iterations message"
expect_exit 2 "--max-iterations 0 is a usage error" -- "$TGC" run "$G" --max-iterations 0

# x of 2 rows: the counting Loop gathers row 2 in its third iteration.
cat > "$WORK/two_rows.py" <<'PY'
import numpy as np, sys
np.save(sys.argv[1], np.arange(8, dtype=np.float32).reshape(2, 4))
PY
if /usr/bin/python3 "$WORK/two_rows.py" "$WORK/x2.npy" 2>/dev/null; then
    expect_exit 1 "iteration 2 fails" -- "$TGC" run "$G" --input "x=$WORK/x2.npy" --input "flag=$D/flag_true.npy"
    expect_grep "node 'row' (Gather) on cpu0 in iteration 2 of Loop 'count'" "$WORK/err" "failure names the iteration"
fi

# Placement and partitioning go inside subgraphs: a Loop body with a node on
# gpu0 and one on cpu0 is placed and split per device, with a pair between.
cat > "$WORK/across.yaml" <<'YAML'
format: tgc/1
inputs:
  - {name: v0, dtype: float32, shape: [8]}
outputs: [loop]
initializers:
  - {name: m, dtype: int64, shape: [], values: [40]}
  - {name: half, dtype: float32, shape: [], values: [0.5]}
  - {name: one, dtype: float32, shape: [], values: [1]}
nodes:
  - name: loop
    op: Loop
    inputs: [m, '', v0]
    attrs:
      body:
        inputs: [{name: i}, {name: c}, {name: v}]
        outputs: [c, w]
        nodes:
          - {name: h, op: Mul, inputs: [v, half], device: gpu0}
          - {name: w, op: Add, inputs: [h, one], device: cpu0}
YAML
if "$TGC" devices | grep -q "^gpu0"; then
    expect_exit 0 "--dump placed shows each body's devices" -- "$TGC" compile "$WORK/across.yaml" --devices cpu,gpu0 \
        --dump placed -o "$WORK/placed.yaml"
    expect_grep "subgraph loop.body: cpu0 1 ops, gpu0 1 ops" "$WORK/out" "placement summary of the body"
    expect_grep "        device: gpu0" "$WORK/placed.yaml" "a body node's device in the placed dump"
    expect_exit 0 "--dump partitioned writes each body per device" -- "$TGC" compile "$WORK/across.yaml" \
        --devices cpu,gpu0 --dump partitioned -o "$WORK/parts"
    expect_grep "subgraph loop.body: 2 partitions (cpu0: .*, gpu0: .*), 1 send/recv pair" "$WORK/out" \
        "partition summary of the body"
    expect_grep "key: gpu0;cpu0;h" "$WORK/parts/loop.body@gpu0.yaml" "the body's _Send"
    expect_grep "key: gpu0;cpu0;h" "$WORK/parts/loop.body@cpu0.yaml" "the body's _Recv"
    for f in "$WORK"/parts/*.yaml; do
        expect_exit 0 "$(basename "$f") loads again" -- "$TGC" compile "$f"
    done
fi

# A sequence output, written element by element.
cat > "$WORK/seq.yaml" <<'YAML'
format: tgc/1
inputs:
  - {name: x, dtype: float32, shape: [4, 4]}
outputs: [parts]
initializers:
  - {name: two, dtype: int64, shape: [], values: [2]}
nodes:
  - {name: parts, op: SplitToSequence, inputs: [x, two]}
YAML
expect_exit 0 "a sequence output" -- "$TGC" run "$WORK/seq.yaml" --input "x=$D/x.npy" --output-dir "$WORK/seq_out"
expect_grep "parts            2 elements       seq(float32)" "$WORK/out" "sequence summary"
expect_exit 0 "its elements are written" -- test -f "$WORK/seq_out/parts_0.npy" -a -f "$WORK/seq_out/parts_1.npy"
finish
