#!/usr/bin/env bash
# Peer benchmark (issue 9, item 3; issue 15, item 1): tgc on cpu beside ONNX
# Runtime CPU and PyTorch, same ONNX-exported models, same inputs, at 2 threads
# and at 1 thread each.
#
#   bash bench/peers/run.sh [MODEL...]      (default: every model of export.py)
#
# Needs: build/tgc (cmake --build build), /usr/bin/python3 with torch and
# torchvision, node + npm (onnxruntime-node is installed into build/peers/node
# with --ignore-scripts on first use).
# Everything it writes goes under $PEERS_DIR (default build/peers): models,
# inputs, outputs, logs; compare.py then prints the tables from those logs.
# Per model, round and thread count it runs: tgc at --optimize 2 (the
# default) and at --optimize 0 (the graph as exported, no passes), ORT with
# its default intra-op spin-wait and, above 1 thread, with it off
# (session.intra_op.allow_spinning=0; the table keeps the faster), and PyTorch
# with OMP_WAIT_POLICY=PASSIVE (see export.py). On a loaded machine both
# spin-waits cost far more than they save.
#
# Environment:
#   THREADS="2 1"    the thread counts, each a table of its own
#   ROUNDS=K         run every peer K times per model, interleaved, and keep the
#                    best median of each (helps on a loaded machine)
#   REPEAT_SCALE=F   scale the per-model run counts (export.py's repeats; >= 3)
#   TIMEOUT=S        give up on one process after S seconds (default 900)
#   KEEP_OPENBLAS_ENV=1  keep OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (see below)
set -u
# OpenBLAS (tgc's and PyTorch's GEMMs) picks its kernels by cpuid unless
# OPENBLAS_CORETYPE names others. Some machines here set it (with
# OPENBLAS_L2_SIZE) for older OpenBLAS builds that fail on their processors:
# on the Zen 5 of the results below, Haswell's AVX2 kernels where OpenBLAS
# 0.3.21 itself picks Cooperlake's AVX-512 ones, 1.3-1.8x faster on GEMM-bound
# models. The peers run with OpenBLAS's own choice, as on a user's machine,
# unless KEEP_OPENBLAS_ENV=1; machine.txt names the kernels, and compare.py
# checks every output against PyTorch's.
[ "${KEEP_OPENBLAS_ENV:-0}" = 1 ] || unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT" || exit 2
PEERS_DIR="${PEERS_DIR:-$ROOT/build/peers}"
TGC="${TGC:-$ROOT/build/tgc}"
PY=/usr/bin/python3
THREADS="${THREADS:-2 1}"
ROUNDS="${ROUNDS:-1}"
REPEAT_SCALE="${REPEAT_SCALE:-1}"
TIMEOUT="${TIMEOUT:-900}"
HERE="$ROOT/bench/peers"
# Every model of export.py, in table order.
ALL_MODELS=(mlp_b1 mlp_b64 resnet18 resnet50 transformer
            mobilenet_v2 mobilenet_v3_large efficientnet_b0 resnext50_32x4d convnext_tiny
            densenet121 inception_v3 vit_b_16 swin_t deeplabv3_mobilenet_v3
            gpt_decoder bert_encoder lstm
            resnet50_b16 mobilenet_v2_b16 efficientnet_b0_b16 bert_encoder_b16)
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

MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=("${ALL_MODELS[@]}")

# Export (PyTorch -> ONNX, inputs, PyTorch reference outputs): the models not
# yet exported or exported before export.py (or the models_check.py classes
# it uses) last changed.
STALE=()
for m in "${MODELS[@]}"; do
  onnx="$PEERS_DIR/$m.onnx"
  if [ ! -f "$onnx" ] || [ "$HERE/export.py" -nt "$onnx" ] || [ "$ROOT/scripts/models_check.py" -nt "$onnx" ] ||
     ! grep -q "\"$m\":" "$PEERS_DIR/models.json" 2>/dev/null; then
    STALE+=("$m")
  fi
done
if [ ${#STALE[@]} -gt 0 ]; then
  echo "[export ${STALE[*]}]"
  "$PY" "$HERE/export.py" export "$PEERS_DIR" "${STALE[@]}" 2> "$PEERS_DIR/logs/export.stderr" || {
    cat "$PEERS_DIR/logs/export.stderr" >&2; exit 1; }
fi

# models.json field of model $1: "repeats" (scaled, at least 3) or "inputs" (NAME=FILE lines)
meta() {
  "$PY" -c '
import json, sys
m = json.load(open(sys.argv[1]))[sys.argv[2]]
if sys.argv[3] == "repeats":
    print(max(3, int(m["repeats"] * float(sys.argv[4]))))
else:
    print("\n".join("%s=%s" % kv for kv in m["inputs"].items()))' "$PEERS_DIR/models.json" "$@"
}

# rusage FILE CMD...: runs CMD under timeout, writes its peak RSS (KiB) and
# user and system CPU seconds (its whole process tree) to FILE; CMD's status
rusage() {
  "$PY" -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    f.write("%d %.6f %.6f\n" % (r.ru_maxrss, r.ru_utime, r.ru_stime))
sys.exit(rc)' "$1" timeout "$TIMEOUT" "${@:2}"
}

{ date -Is; uname -srm; nproc; grep -m1 'model name' /proc/cpuinfo; echo "threads: $THREADS; rounds: $ROUNDS;" \
  "repeat scale: $REPEAT_SCALE; tgc $(git -C "$ROOT" describe --always --dirty 2>/dev/null)"
  # OpenBLAS picks its kernels by cpuid (OPENBLAS_CORETYPE overrides): tgc's and PyTorch's GEMMs depend on it
  echo "OpenBLAS $(OPENBLAS_VERBOSE=2 "$TGC" devices 2>&1 | grep -m1 '^Core:')" \
    "(OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-unset}, OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE-unset})"
  uptime; } \
  > "$PEERS_DIR/logs/machine.txt"

for m in "${MODELS[@]}"; do
  onnx="$PEERS_DIR/$m.onnx"
  n=$(meta "$m" repeats "$REPEAT_SCALE")
  mapfile -t INPUTS < <(meta "$m" inputs)
  TGC_INPUTS=()
  for i in "${INPUTS[@]}"; do TGC_INPUTS+=(--input "$i"); done
  L="$PEERS_DIR/logs/$m"
  rm -f "$L".*
  rm -rf "$PEERS_DIR/out/$m".*
  # tgc import (once)
  cmd=("$TGC" import "$onnx" -o "$PEERS_DIR/$m.yaml")
  printf '%q ' "${cmd[@]}" > "$L.import.cmd"
  timeout "$TIMEOUT" "${cmd[@]}" > "$L.import.log" 2>&1
  echo $? > "$L.import.rc"
  for r in $(seq 1 "$ROUNDS"); do
    for t in $THREADS; do
      uptime >> "$L.t$t.uptime"
      # tgc run has no warm-up: its median covers all runs, the first (cold)
      # one included, so it gets N+1 runs where the others get 1 warm-up + N.
      # "tgc" is --optimize 2 (the default), "tgc0" --optimize 0. Its CPU time
      # per run: that of the process with N+1 runs less that of one with 1
      # run (loading, compiling and the cold run), over N; both from rusage,
      # in microseconds (/usr/bin/time's %U has 10 ms steps).
      for o in 2 0; do
        k=tgc; [ "$o" = 2 ] || k=tgc$o
        [ "$(cat "$L.import.rc")" = 0 ] || continue
        echo "[$m round $r/$ROUNDS, $t threads, N=$n] tgc --optimize $o"
        cmd=("$TGC" run "$PEERS_DIR/$m.yaml" --devices cpu --threads "cpu=$t" --optimize "$o" "${TGC_INPUTS[@]}")
        printf '%q ' "${cmd[@]}" --repeat "$((n + 1))" > "$L.t$t.$k.$r.cmd"  # for compare.py's error lines
        rusage "$L.t$t.$k.$r.rss" "${cmd[@]}" --repeat "$((n + 1))" --output-dir "$PEERS_DIR/out/$m.t$t.$k" \
          > "$L.t$t.$k.$r.log" 2>&1
        echo $? > "$L.t$t.$k.$r.rc"
        rusage "$L.t$t.$k.$r.rss1" "${cmd[@]}" --repeat 1 > /dev/null 2>&1
      done
      echo "[$m round $r/$ROUNDS, $t threads, N=$n] onnxruntime"
      timeout "$TIMEOUT" node "$HERE/ort_bench.js" "$onnx" "$t" "$n" "$PEERS_DIR/out/$m.t$t.ort.npy" "${INPUTS[@]}" \
        > "$L.t$t.ort.$r.json" 2> "$L.t$t.ort.$r.err"
      if [ "$t" -gt 1 ]; then  # one thread has no pool to spin
        echo "[$m round $r/$ROUNDS, $t threads, N=$n] onnxruntime, intra-op spinning off"
        ORT_ALLOW_SPINNING=0 timeout "$TIMEOUT" node "$HERE/ort_bench.js" "$onnx" "$t" "$n" \
          "$PEERS_DIR/out/$m.t$t.ortns.npy" "${INPUTS[@]}" > "$L.t$t.ortns.$r.json" 2> "$L.t$t.ortns.$r.err"
      fi
      echo "[$m round $r/$ROUNDS, $t threads, N=$n] pytorch"
      timeout "$TIMEOUT" "$PY" "$HERE/export.py" bench "$PEERS_DIR" "$m" "$n" "$t" \
        > "$L.t$t.torch.$r.json" 2> "$L.t$t.torch.$r.err"
    done
  done
done
uptime >> "$PEERS_DIR/logs/machine.txt"

"$PY" "$HERE/compare.py" "$PEERS_DIR" "${MODELS[@]}"
