#!/usr/bin/env bash
# TfIdfVectorizer's three modes (ONNX's backend tests cover only TF) on two
# rows counted by hand: tests/data/tfidf/x.npy is [[1 2 1 2 3], [3 3 1 1 2]];
# the pool holds the unigrams [2], [3] and the bigram [1 2] (columns 0, 1, 2).
#   row 0: [2] at 1 and 3, [3] at 4, [1 2] at 0 and 2 (at skip 1: (1,1),
#          (2,2), (1,3): none)                                  -> 2, 1, 2
#   row 1: [2] at 4, [3] at 0 and 1, [1 2] at 3, and at skip 1 x[2], x[4]
#                                                               -> 1, 2, 2
# TF gives the counts, IDF the weight (0.5, 2, 3) where a count is > 0,
# TFIDF count * weight.
. "$(dirname "$0")/lib.bash"
D="$ROOT/tests/data/tfidf"
for mode in TF IDF TFIDF; do
    expect_exit 0 "$mode" -- "$TGC" run "$D/$mode.yaml" --input "x=$D/x.npy" --compare "y=$D/${mode}_y.npy" --tolerance 0
    expect_grep "compare y .* ok" "$WORK/out" "$mode values"
done
# A pool whose indexes do not cover its n-grams: a load-time error at the node.
sed 's/ngram_indexes: \[0, 1, 2\]/ngram_indexes: [0, 1]/' "$D/TF.yaml" > "$WORK/bad.yaml"
expect_exit 2 "indexes short of the pool" -- "$TGC" run "$WORK/bad.yaml" --input "x=$D/x.npy"
expect_grep "bad.yaml:[0-9]*:[0-9]*: error: .*one column per n-gram" "$WORK/err" "bad pool message"
finish
