#!/usr/bin/env bash
# Peer benchmark (issue 9, item 3): tgc on cpu beside ONNX Runtime CPU and
# PyTorch, same ONNX-exported models, same inputs, 2 threads each.
#
#   bash bench/peers/run.sh [MODEL...]      (default: all five models)
#
# Needs: build/tgc (cmake --build build), /usr/bin/python3 with torch
# (+ torchvision if present), node + npm (onnxruntime-node is installed into
# build/peers/node with --ignore-scripts on first use), /usr/bin/time.
# Everything it writes goes under $PEERS_DIR (default build/peers): models,
# inputs, outputs, logs; compare.py then prints the table from those logs.
# ORT runs twice: with its default intra-op spin-wait and with it off
# (session.intra_op.allow_spinning=0); the table keeps the faster. PyTorch runs
# with OMP_WAIT_POLICY=PASSIVE (see export.py). On a loaded machine both
# spin-waits cost far more than they save.
# ROUNDS=K runs the three peers K times per model, interleaved, and keeps
# the best median of each (helps on a loaded machine); REPEAT_SCALE=F scales
# the per-model run counts.
set -u
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
PEERS_DIR="${PEERS_DIR:-$ROOT/build/peers}"
TGC="${TGC:-$ROOT/build/tgc}"
PY=/usr/bin/python3
ROUNDS="${ROUNDS:-1}"
REPEAT_SCALE="${REPEAT_SCALE:-1}"
HERE="$ROOT/bench/peers"
mkdir -p "$PEERS_DIR/logs" "$PEERS_DIR/out"

[ -x "$TGC" ] || { echo "run.sh: $TGC missing: cmake -S . -B build && cmake --build build -j2" >&2; exit 2; }

# ONNX Runtime (npm onnxruntime-node bundles libonnxruntime.so under bin/napi-v*/linux/x64)
NODE_DIR="$PEERS_DIR/node"
if [ ! -d "$NODE_DIR/node_modules/onnxruntime-node" ]; then
  mkdir -p "$NODE_DIR"
  (cd "$NODE_DIR" && { [ -f package.json ] || npm init -y >/dev/null; } &&
     npm install --ignore-scripts onnxruntime-node) || { echo "run.sh: npm install onnxruntime-node failed" >&2; exit 1; }
fi
if ! ls "$NODE_DIR"/node_modules/onnxruntime-node/bin/napi-v*/linux/x64/onnxruntime_binding.node >/dev/null 2>&1; then
  echo "run.sh: onnxruntime-node has no linux/x64 native binding (--ignore-scripts?)" >&2
fi
export NODE_PATH="$NODE_DIR/node_modules"

# Export (PyTorch -> ONNX, inputs, PyTorch reference outputs)
if [ ! -f "$PEERS_DIR/models.json" ] || [ "$HERE/export.py" -nt "$PEERS_DIR/models.json" ]; then
  "$PY" "$HERE/export.py" export "$PEERS_DIR" 2> "$PEERS_DIR/logs/export.stderr" || {
    cat "$PEERS_DIR/logs/export.stderr" >&2; exit 1; }
fi

MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(mlp_b1 mlp_b64 resnet18 resnet50 transformer)

{ date -Is; uname -srm; nproc; grep -m1 'model name' /proc/cpuinfo; uptime; } > "$PEERS_DIR/logs/machine.txt"
rm -f "$PEERS_DIR"/logs/*.uptime

for m in "${MODELS[@]}"; do
  onnx="$PEERS_DIR/$m.onnx"; x="$PEERS_DIR/$m.input.npy"
  n=$("$PY" -c "import json,sys;print(max(3,int(json.load(open(sys.argv[1]))[sys.argv[2]]['repeats']*float(sys.argv[3]))))" \
      "$PEERS_DIR/models.json" "$m" "$REPEAT_SCALE")
  L="$PEERS_DIR/logs/$m"
  rm -f "$L".*
  # tgc import (once)
  "$TGC" import "$onnx" -o "$PEERS_DIR/$m.yaml" > "$L.import.log" 2>&1
  echo $? > "$L.import.rc"
  for r in $(seq 1 "$ROUNDS"); do
    uptime >> "$L.uptime"
    echo "[$m round $r/$ROUNDS, N=$n] tgc"
    # tgc run has no warm-up: its median covers all runs, the first (cold)
    # one included, so it gets N+1 runs where the others get 1 warm-up + N.
    if [ "$(cat "$L.import.rc")" = 0 ]; then
      /usr/bin/time -f "%M" -o "$L.tgc.$r.rss" \
        "$TGC" run "$PEERS_DIR/$m.yaml" --devices cpu --threads cpu=2 --input "input=$x" \
          --repeat "$((n + 1))" --output-dir "$PEERS_DIR/out/$m.tgc" > "$L.tgc.$r.log" 2>&1
      echo $? > "$L.tgc.$r.rc"
    fi
    echo "[$m round $r/$ROUNDS, N=$n] onnxruntime"
    node "$HERE/ort_bench.js" "$onnx" "$x" "$n" "$PEERS_DIR/out/$m.ort.npy" > "$L.ort.$r.json" 2> "$L.ort.$r.err"
    echo "[$m round $r/$ROUNDS, N=$n] onnxruntime, intra-op spinning off"
    ORT_ALLOW_SPINNING=0 node "$HERE/ort_bench.js" "$onnx" "$x" "$n" "$PEERS_DIR/out/$m.ortns.npy" \
      > "$L.ortns.$r.json" 2> "$L.ortns.$r.err"
    echo "[$m round $r/$ROUNDS, N=$n] pytorch"
    "$PY" "$HERE/export.py" bench "$PEERS_DIR" "$m" "$n" > "$L.torch.$r.json" 2> "$L.torch.$r.err"
  done
done
uptime >> "$PEERS_DIR/logs/machine.txt"

"$PY" "$HERE/compare.py" "$PEERS_DIR" "${MODELS[@]}"
