#!/usr/bin/env bash
# Elementwise chains (issue 20): every float32 elementwise op of tgc beside
# ONNX Runtime CPU, chains of 8 at 2^16, 2^20 and 2^24 elements, 1 and 2
# threads, alternating per op in one run; see ew_chains.py for what each
# figure is.
#
#   bash bench/peers/ew_chains.sh [--quick] [--ops LIST] [--sizes LIST] [--threads LIST] [--repeat N]
#
# --quick: a few ops (Relu Abs Add Mul Sigmoid Tanh Exp Erf Less) at 2^20.
# Needs build/bench/bench_elementwise (cmake --build build --target
# bench_elementwise), node + npm (onnxruntime-node is installed into
# build/peers/node with --ignore-scripts on first use, as run.sh does) and
# /usr/bin/python3 with onnx and numpy (Debian python3-onnx python3-numpy:
# installed with apt-get when missing and this runs as root). Writes under
# $PEERS_DIR/ew (default build/peers/ew): models, results.json, table.txt.
set -u
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
PEERS_DIR="${PEERS_DIR:-$ROOT/build/peers}"
BENCH="${BENCH:-$ROOT/build/bench/bench_elementwise}"
PY=/usr/bin/python3

[ -x "$BENCH" ] || { echo "ew_chains.sh: $BENCH missing: cmake --build build --target bench_elementwise" >&2; exit 2; }

if ! "$PY" -c 'import onnx, numpy' 2>/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y python3-onnx python3-numpy >/dev/null || { echo "ew_chains.sh: apt-get install python3-onnx python3-numpy failed" >&2; exit 1; }
  else
    echo "ew_chains.sh: $PY lacks onnx/numpy: sudo apt-get install -y python3-onnx python3-numpy" >&2; exit 1
  fi
fi

NODE_DIR="$PEERS_DIR/node"
if [ ! -d "$NODE_DIR/node_modules/onnxruntime-node" ]; then
  mkdir -p "$NODE_DIR"
  (cd "$NODE_DIR" && { [ -f package.json ] || npm init -y >/dev/null; } &&
     npm install --ignore-scripts onnxruntime-node) || { echo "ew_chains.sh: npm install onnxruntime-node failed" >&2; exit 1; }
fi
export NODE_PATH="$NODE_DIR/node_modules"

exec "$PY" "$ROOT/bench/peers/ew_chains.py" --out "$PEERS_DIR/ew" --bench "$BENCH" "$@"
