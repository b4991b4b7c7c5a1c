#!/usr/bin/env bash
# String tensors through the command line: .npy text in ('<U' and '|S'),
# StringNormalizer and Cast both ways, .npy text out. The references are
# numpy's (tests/data/strings/make_strings.py made every file).
. "$(dirname "$0")/lib.bash"
D="$ROOT/tests/data/strings"
expect_exit 0 "strings run" -- "$TGC" run "$D/strings.yaml" --input "x=$D/x.npy" --input "n=$D/n.npy" \
    --compare "y=$D/y_ref.npy" --compare "f=$D/f_ref.npy" --compare "s=$D/s_ref.npy" --output-dir "$WORK/outs"
expect_grep "compare y .*: 0 of 5 strings differ ok" "$WORK/out" "StringNormalizer values"
expect_grep "compare f .* ok" "$WORK/out" "string -> float32 values"
expect_grep "compare s .*: 0 of 7 strings differ ok" "$WORK/out" "float32 -> string values"
expect_grep 'y  *\[5\]  *string  *"TUESDAY"' "$WORK/out" "string summary"
# tgc writes text as np.save(np.array(list_of_str)) does: the same bytes.
if cmp -s "$WORK/outs/y.npy" "$D/y_ref.npy"; then pass; else fail "y.npy differs from numpy's"; fi
# A reference that differs in one string fails the comparison.
expect_exit 1 "a differing string" -- "$TGC" run "$D/strings.yaml" --input "x=$D/x.npy" --input "n=$D/n.npy" \
    --compare "y=$D/y_wrong.npy"
expect_grep "compare y .*: 1 of 5 strings differ FAILED" "$WORK/out" "the differing string is counted"
# A string that is not a number: the run fails naming the node and the element.
expect_exit 1 "not a number" -- "$TGC" run "$D/strings.yaml" --input "x=$D/x.npy" --input "n=$D/bad_n.npy"
expect_grep "node 'f' (Cast).*element 3, \"four\", is not a float32 value" "$WORK/err" "bad element message"
finish
