#!/usr/bin/env bash
# tgc compile from the command line: dumps, round trips, errors, usage.
. "$(dirname "$0")/lib.bash"

# Every example compiles, and its dump compiles again to the same text.
for model in "$ROOT"/examples/*/*.yaml; do
    name=$(basename "$model" .yaml)
    expect_exit 0 "compile $name" -- "$TGC" compile "$model" --dump shapes -o "$WORK/$name.1.yaml"
    expect_exit 0 "recompile $name" -- "$TGC" compile "$WORK/$name.1.yaml" -o "$WORK/$name.2.yaml"
    if cmp -s "$WORK/$name.1.yaml" "$WORK/$name.2.yaml"; then pass; else fail "$name: dump is not a fixed point"; fi
done

# Shapes are inferred through the shape arithmetic (Shape -> Gather -> Concat -> Reshape).
"$TGC" compile "$ROOT/examples/digits/cnn.yaml" >"$WORK/cnn.txt" 2>&1
expect_grep "{dtype: float32, shape: \[N, 64\]}" "$WORK/cnn.txt" "cnn flat shape"
expect_grep "{dtype: float32, shape: \[N, 10\]}" "$WORK/cnn.txt" "cnn logits shape"

# A bad graph: FILE:LINE:COL: error, exit 2, nothing written.
cat >"$WORK/bad.yaml" <<'YAML'
format: tgc/1
inputs:
  - {name: x, dtype: float32, shape: [2, 3]}
outputs: [y]
nodes:
  - {name: y, op: Relux, inputs: [x]}
  - {name: z, op: Relu, inputs: [nothere]}
YAML
expect_exit 2 "bad graph" -- "$TGC" compile "$WORK/bad.yaml" -o "$WORK/bad.out.yaml"
expect_grep "bad.yaml:6:19: error: node 'y': unknown op 'Relux' \[unknown-op\]" "$WORK/err" "unknown op message"
expect_grep "bad.yaml:7:34: error: node 'z': 'nothere' names no input" "$WORK/err" "dangling message"
if [ -e "$WORK/bad.out.yaml" ] || ls "$WORK"/bad.out.yaml.tmp* >/dev/null 2>&1; then fail "output written for a bad graph"; else pass; fi

# Usage errors exit 2 with a hint; help and version exit 0.
expect_exit 2 "no command" -- "$TGC"
expect_grep "hint:" "$WORK/err" "usage hint"
expect_exit 2 "unknown command" -- "$TGC" frobnicate
expect_exit 2 "unknown option" -- "$TGC" compile --frob "$ROOT/examples/digits/cnn.yaml"
expect_exit 2 "missing file" -- "$TGC" compile "$WORK/does-not-exist.yaml"
expect_grep "does-not-exist.yaml: error: cannot open" "$WORK/err" "missing file message"
expect_exit 2 "unknown dump" -- "$TGC" compile "$ROOT/examples/digits/cnn.yaml" --dump frob
expect_exit 0 "help" -- "$TGC" --help
expect_grep "usage: tgc COMMAND" "$WORK/out" "help text"
expect_exit 0 "compile help" -- "$TGC" compile --help
expect_exit 0 "version" -- "$TGC" --version
expect_grep "^tgc [0-9]" "$WORK/out" "version text"
finish
