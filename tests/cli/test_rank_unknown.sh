#!/usr/bin/env bash
# Ranks known only at run time (graph/infer_rank.h): an If whose branches
# give its output different ranks, and a Loop whose carried value gains an
# axis each iteration, run on the cpu and on gpu0 (when there is one) and
# give numpy's values (tests/data/rank_unknown/make_refs.py) for either
# branch; the compile-time dump leaves such a value's shape out, and the
# memory plan says which tensors it leaves to the device's allocator.
. "$(dirname "$0")/lib.bash"
D="$ROOT/tests/data/rank_unknown"
devices_list="cpu"
"$TGC" devices | grep -q "^gpu0" && devices_list="cpu cpu,gpu0"
for dev in $devices_list; do
    for tag in then else; do
        compares=()
        for o in y n z p f t; do compares+=(--compare "$o=$D/${o}_$tag.npy"); done
        compares+=(--compare "centered=$D/centered_$tag.npy")
        expect_exit 0 "if_rank ($tag branch) on $dev gives numpy's values" -- "$TGC" run "$D/if_rank.yaml" \
            --devices "$dev" --input "x=$D/x.npy" --input "c=$D/c_$tag.npy" "${compares[@]}" --tolerance 1e-6
        expect_grep "compare t .* ok" "$WORK/out" "if_rank ($tag) on $dev"
        expect_exit 0 "loop_rank ($tag branch) on $dev gives numpy's values" -- "$TGC" run "$D/loop_rank.yaml" \
            --devices "$dev" --input "x=$D/v.npy" --input "m=$D/m.npy" --input "c=$D/c_$tag.npy" \
            --compare "loop=$D/loop_$tag.npy" --compare "s=$D/s_$tag.npy" --tolerance 0
        expect_grep "compare s .* ok" "$WORK/out" "loop_rank ($tag) on $dev"
    done
done

# The placed dump writes a dtype without a shape for a value of unknown
# rank, keeps the shapes the op fixes (Shape: one dim; ReduceSum: a
# scalar), and loads back as it was written.
expect_exit 0 "if_rank compiles" -- "$TGC" compile "$D/if_rank.yaml" --devices cpu --dump placed -o "$WORK/placed.yaml"
expect_grep "^  - {dtype: float32}$" "$WORK/placed.yaml" "the If's output has no shape"
expect_grep "^  - {dtype: int64, shape: \[unk__" "$WORK/placed.yaml" "Shape of an unknown rank is 1-d"
expect_exit 0 "the placed dump loads again" -- "$TGC" compile "$WORK/placed.yaml" --devices cpu

expect_exit 0 "if_rank's memory plan" -- "$TGC" compile "$D/if_rank.yaml" --devices cpu --dump memory
expect_grep "cpu0: 8 tensor(s) of a rank known only at run time are not planned: its BFC arena allocates them" \
    "$WORK/out" "the plan names what it leaves to the arena"
expect_grep "(pick, shifted, act, y, mean, ...)" "$WORK/out" "the plan names the first five"
finish
