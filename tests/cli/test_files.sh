#!/usr/bin/env bash
# Files stay where they belong: a graph's `file:` weights resolve beneath its
# folder (or the --weights-dir folder) and never through a link out of it;
# only regular files; outputs are written where --output-dir / -o say and
# never through a pre-placed symlink.
. "$(dirname "$0")/lib.bash"
B="$ROOT/examples/digits/weights/mlp_fc2_b.npy" # float32 [10]

# model DIR FILE: a graph in DIR/m.yaml adding x to an initializer read from FILE.
model() {
    mkdir -p "$1"
    cat >"$1/m.yaml" <<EOF
format: tgc/1
name: files
inputs:
  - {name: x, dtype: float32, shape: [10]}
outputs: [y]
initializers:
  - {name: w, dtype: float32, shape: [10], file: $2}
nodes:
  - {name: y, op: Add, inputs: [x, w]}
EOF
}

# A plain file beside the graph, and one a folder down: loaded.
model "$WORK/ok" w.npy
cp "$B" "$WORK/ok/w.npy"
expect_exit 0 "file beside the graph" -- "$TGC" compile "$WORK/ok/m.yaml"

# A symlink to /etc/passwd inside the model's folder: refused, FILE:LINE:COL.
model "$WORK/evil" w.npy
ln -s /etc/passwd "$WORK/evil/w.npy"
expect_exit 2 "symlink to /etc/passwd" -- "$TGC" compile "$WORK/evil/m.yaml"
expect_grep "m.yaml:7:[0-9]*: error: initializer 'w': file 'w.npy' is a symlink leaving the model's folder ('w.npy' -> '/etc/passwd') \[file-outside\]" \
    "$WORK/err" "symlink message"
expect_exit 2 "symlink to /etc/passwd, run" -- "$TGC" run "$WORK/evil/m.yaml"
expect_grep "symlink leaving the model's folder" "$WORK/err" "run refuses it too"

# A relative symlink climbing out, and a symlinked folder pointing outside.
model "$WORK/evil2" w.npy
cp "$B" "$WORK/outside.npy"
ln -s ../outside.npy "$WORK/evil2/w.npy"
expect_exit 2 "relative symlink out" -- "$TGC" compile "$WORK/evil2/m.yaml"
expect_grep "is a symlink leaving the model's folder" "$WORK/err" "relative symlink message"
model "$WORK/evil3" weights/outside.npy
ln -s .. "$WORK/evil3/weights"
expect_exit 2 "symlinked folder out" -- "$TGC" compile "$WORK/evil3/m.yaml"
expect_grep "file 'weights/outside.npy' passes through a symlink leaving the model's folder" "$WORK/err" \
    "symlinked folder message"
# A link that stays inside is followed.
model "$WORK/inside" alias.npy
cp "$B" "$WORK/inside/w.npy"
ln -s w.npy "$WORK/inside/alias.npy"
expect_exit 0 "symlink inside" -- "$TGC" compile "$WORK/inside/m.yaml"

# Absolute paths and '..' climbing out.
model "$WORK/abs" "$WORK/outside.npy"
expect_exit 2 "absolute path" -- "$TGC" compile "$WORK/abs/m.yaml"
expect_grep "is an absolute path; files resolve beneath the model's folder \[file-outside\]" "$WORK/err" "absolute message"
model "$WORK/up" ../outside.npy
expect_exit 2 "'..' out" -- "$TGC" compile "$WORK/up/m.yaml"
expect_grep "leaves the model's folder through '..'" "$WORK/err" "'..' message"

# Not a regular file: a FIFO (without blocking on it) and a folder.
model "$WORK/fifo" w.npy
mkfifo "$WORK/fifo/w.npy"
expect_exit 2 "fifo" -- timeout 10 "$TGC" compile "$WORK/fifo/m.yaml"
expect_grep "is not a regular file (a FIFO)" "$WORK/err" "fifo message"
model "$WORK/dir" sub
mkdir "$WORK/dir/sub"
expect_exit 2 "folder" -- "$TGC" compile "$WORK/dir/m.yaml"
expect_grep "is not a regular file (a directory)" "$WORK/err" "folder message"

# Too small for the declaration: said before reading.
model "$WORK/small" w.npy
head -c 20 "$B" >"$WORK/small/w.npy"
expect_exit 2 "file too small" -- "$TGC" compile "$WORK/small/m.yaml"
expect_grep "it holds 20 bytes, but the declared float32 data alone needs 40" "$WORK/err" "size message"

# --weights-dir: files resolve beneath the named folder instead.
model "$WORK/shared/a" w.npy
mkdir -p "$WORK/shared/weights"
cp "$B" "$WORK/shared/weights/w.npy"
expect_exit 2 "weights elsewhere, no --weights-dir" -- "$TGC" compile "$WORK/shared/a/m.yaml"
expect_exit 0 "--weights-dir" -- "$TGC" compile "$WORK/shared/a/m.yaml" --weights-dir "$WORK/shared/weights"
expect_exit 0 "--weights-dir, run" -- "$TGC" run "$WORK/shared/a/m.yaml" --weights-dir "$WORK/shared/weights" \
    --input "x=$B" --output-dir "$WORK/shared/out"
[ -f "$WORK/shared/out/y.npy" ] && pass || fail "--weights-dir run wrote no output"
ln -s /etc/passwd "$WORK/shared/weights/p.npy"
model "$WORK/shared/b" p.npy
expect_exit 2 "--weights-dir keeps the rule" -- "$TGC" compile "$WORK/shared/b/m.yaml" --weights-dir "$WORK/shared/weights"
expect_grep "symlink leaving the weights folder" "$WORK/err" "weights folder message"
expect_exit 2 "--weights-dir missing" -- "$TGC" compile "$WORK/shared/a/m.yaml" --weights-dir "$WORK/nowhere"
expect_grep "the weights folder cannot be used" "$WORK/err" "missing weights folder message"
# A dump of it is self-contained: its weights are written beside it, and it reloads without the option.
mkdir -p "$WORK/dump"
expect_exit 0 "dump with --weights-dir" -- "$TGC" compile "$WORK/shared/a/m.yaml" --weights-dir "$WORK/shared/weights" \
    -o "$WORK/dump/m.yaml"
expect_grep "file: w.npy" "$WORK/dump/m.yaml" "dump names the copy"
expect_exit 0 "dump reloads" -- "$TGC" compile "$WORK/dump/m.yaml"

# Outputs: a pre-placed symlink named like an output is replaced, never written through.
mkdir -p "$WORK/outdir"
echo precious >"$WORK/victim"
ln -s "$WORK/victim" "$WORK/outdir/y.npy"
expect_exit 0 "run over a planted link" -- "$TGC" run "$WORK/ok/m.yaml" --input "x=$B" --output-dir "$WORK/outdir"
[ "$(cat "$WORK/victim")" = precious ] && pass || fail "--output-dir wrote through a symlink"
[ -f "$WORK/outdir/y.npy" ] && [ ! -L "$WORK/outdir/y.npy" ] && pass || fail "y.npy is not a new regular file"
ls "$WORK/outdir" | grep -q tmp && fail "a temporary file was left" || pass
# The same for -o.
ln -s "$WORK/victim" "$WORK/dump.yaml"
expect_exit 0 "compile -o over a planted link" -- "$TGC" compile "$WORK/ok/m.yaml" -o "$WORK/dump.yaml"
[ "$(cat "$WORK/victim")" = precious ] && pass || fail "-o wrote through a symlink"
[ ! -L "$WORK/dump.yaml" ] && pass || fail "dump.yaml is still a link"
# A dump's weights folder planted as a link out is refused, and nothing lands outside.
mkdir -p "$WORK/planted" "$WORK/elsewhere"
ln -s "$WORK/elsewhere" "$WORK/planted/weights"
expect_exit 1 "dump into a planted weights link" -- "$TGC" compile "$ROOT/examples/digits/mlp.yaml" -o "$WORK/planted/m.yaml"
expect_grep "symlink 'weights'" "$WORK/err" "planted weights message"
[ -z "$(ls "$WORK/elsewhere")" ] && pass || fail "weights written through a planted link"

# tgc import: the weights folder beside the YAML planted as a link out is
# refused (exit 1), nothing is written through it, and no YAML is left.
LIN=/usr/share/libonnx-testdata/data/pytorch-converted/test_Linear/model.onnx
if [ -f "$LIN" ]; then
    mkdir -p "$WORK/imp" "$WORK/imp_elsewhere"
    expect_exit 0 "import" -- "$TGC" import "$LIN" -o "$WORK/imp/ok.yaml"
    expect_grep "file: ok_weights/" "$WORK/imp/ok.yaml" "import writes relative paths beneath"
    ln -s "$WORK/imp_elsewhere" "$WORK/imp/lin_weights"
    expect_exit 1 "import into a planted weights link" -- "$TGC" import "$LIN" -o "$WORK/imp/lin.yaml"
    expect_grep "symlink 'lin_weights'" "$WORK/err" "planted import weights message"
    [ -z "$(ls "$WORK/imp_elsewhere")" ] && [ ! -e "$WORK/imp/lin.yaml" ] && pass || fail "import wrote through a link"
fi

# A path that is a device or a FIFO (as /dev/null is) is written in place, never replaced by the
# temporary file's rename: `-o /dev/null` as root once turned the machine's /dev/null into a file.
D="$ROOT/examples/digits"
for what in "compile $D/mlp.yaml --dump shapes -o" "run $D/mlp.yaml --input x=$D/test_x_flat.npy --trace"; do
    rm -f "$WORK/pipe" "$WORK/pipe.got"
    mkfifo "$WORK/pipe"
    cat "$WORK/pipe" >"$WORK/pipe.got" &
    reader=$!
    # shellcheck disable=SC2086
    expect_exit 0 "${what%% *} into a FIFO" -- timeout 60 "$TGC" $what "$WORK/pipe"
    if [ -p "$WORK/pipe" ]; then pass; else fail "${what%% *}: the FIFO was replaced by a file"; kill "$reader"; fi
    wait "$reader"
    [ -s "$WORK/pipe.got" ] && pass || fail "${what%% *}: nothing came through the FIFO"
done

finish
