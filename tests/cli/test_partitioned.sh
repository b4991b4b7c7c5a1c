#!/usr/bin/env bash
# tgc compile --dump partitioned: one tgc/1 graph per device (each loads
# again and is a fixed point of tgc compile), the JSON and DOT dumps, the
# summary of pairs and bytes per device pair, and usage errors. Expected
# pairs derived by hand: the digits CNN over cpu,gpu0 keeps every float
# tensor on gpu0; only Shape's output goes to the cpu (from host memory) and
# the flattened shape comes back into host memory for Reshape.
. "$(dirname "$0")/lib.bash"

CNN=$ROOT/examples/digits/cnn.yaml

# YAML into a directory that does not exist yet.
expect_exit 0 "partitioned yaml" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu,gpu0 --dump partitioned -o "$WORK/a/b"
for dev in cpu0 gpu0; do
    if [ -s "$WORK/a/b/$dev.yaml" ]; then pass; else fail "no $dev.yaml written"; fi
done
expect_grep "^2 partitions (cpu0: 8 nodes, gpu0: 23 nodes), 2 send/recv pairs" "$WORK/out" "summary counts"
expect_grep "cpu0->gpu0 1 pair 16 bytes" "$WORK/out" "summary cpu0->gpu0"
expect_grep "gpu0->cpu0 1 pair 32 bytes" "$WORK/out" "summary gpu0->cpu0"
expect_grep "(symbolic dims counted as 1)" "$WORK/out" "summary says how symbols count"
G=$WORK/a/b/gpu0.yaml
C=$WORK/a/b/cpu0.yaml
expect_grep "^name: digits_cnn@gpu0" "$G" "partition name"
expect_grep "key: cpu0;gpu0;flat_shape;host, host_memory: 1" "$G" "host-memory receive on gpu0"
expect_grep "key: gpu0;cpu0;feat_shape, host_memory: 1" "$G" "host-memory send of Shape's output"
expect_grep "inputs: \[pool2, flat_shape/_hostrecv_cpu0\]" "$G" "Reshape reads the _HostRecv"
expect_grep "key: gpu0;cpu0;feat_shape}" "$C" "receive on cpu0"
expect_grep "^- {name: x, dtype: float32, shape: \[N, 1, 8, 8\]}" "$G" "x is fed on gpu0"
expect_grep "^outputs: \[logits, probs\]" "$G" "outputs fetched on gpu0"
expect_grep "^outputs: \[\]" "$C" "no outputs on cpu0"
sends=$(grep -c "op: _Send" "$G" "$C" | awk -F: '{s += $2} END {print s}')
recvs=$(grep -c "op: _Recv" "$G" "$C" | awk -F: '{s += $2} END {print s}')
if [ "$sends" = 2 ] && [ "$recvs" = 2 ]; then pass; else fail "$sends _Send and $recvs _Recv nodes (want 2 and 2)"; fi
# No float tensor crosses; no shape value goes into gpu0's memory.
if grep -q "_recv_cpu0$" "$G"; then fail "a device-memory receive on gpu0"; else pass; fi
devs=$(grep -c "^  device: gpu0" "$G")
ops=$(grep -c "^- name:" "$G")
if [ "$devs" = "$ops" ]; then pass; else fail "gpu0.yaml: $ops nodes but $devs with device gpu0"; fi

# Each partition is a valid tgc/1 file: it loads, and its dump is a fixed point.
for dev in cpu0 gpu0; do
    expect_exit 0 "compile $dev.yaml" -- "$TGC" compile "$WORK/a/b/$dev.yaml" -o "$WORK/a/b/$dev.again.yaml"
    if cmp -s "$WORK/a/b/$dev.yaml" "$WORK/a/b/$dev.again.yaml"; then pass; else fail "$dev.yaml is not a fixed point"; fi
done

# Without -o: one document a device on standard output, the summary on stderr.
expect_exit 0 "partitioned yaml to stdout" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu,gpu0 --dump partitioned
expect_grep "^--- # partition cpu0" "$WORK/out" "document for cpu0"
expect_grep "^--- # partition gpu0" "$WORK/out" "document for gpu0"
expect_grep "2 send/recv pairs" "$WORK/err" "summary on stderr"
if command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
    if python3 -c 'import yaml,sys; d=list(yaml.safe_load_all(open(sys.argv[1]))); assert [x["format"] for x in d] == ["tgc/1"] * 2' "$WORK/out"; then
        pass
    else
        fail "stdout is not two tgc/1 YAML documents"
    fi
fi

# Three devices from the graph's own specs: a pair for every edge between them.
expect_exit 0 "devices.yaml on three devices" -- "$TGC" compile "$ROOT/tests/data/good/devices.yaml" \
    --devices cpu0,gpu0,gpu1 --dump partitioned -o "$WORK/three"
expect_grep "^3 partitions" "$WORK/out" "three partitions"
for dev in cpu0 gpu0 gpu1; do
    expect_exit 0 "compile three/$dev.yaml" -- "$TGC" compile "$WORK/three/$dev.yaml"
done

# JSON: one document with every partition and pair.
expect_exit 0 "partitioned json" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu,gpu0 --dump partitioned --format json -o "$WORK/p.json"
expect_grep '"key": "cpu0;gpu0;flat_shape;host"' "$WORK/p.json" "json pair key"
expect_grep '"recv_host_memory": true' "$WORK/p.json" "json host memory"
if command -v python3 >/dev/null 2>&1; then
    if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [p["device"] for p in d["partitions"]] == ["cpu0", "gpu0"]
assert sorted(p["key"] for p in d["pairs"]) == ["cpu0;gpu0;flat_shape;host", "gpu0;cpu0;feat_shape"]
assert all(p["dtype"] == "int64" for p in d["pairs"])
assert sum(t["bytes"] for t in d["traffic"]) == 48
' "$WORK/p.json"; then pass; else fail "json dump does not parse or is wrong"; fi
fi

# DOT: a cluster per device, a dashed edge per pair.
expect_exit 0 "partitioned dot" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu,gpu0 --dump partitioned --format dot
expect_grep "subgraph cluster_0 {" "$WORK/out" "dot cluster cpu0"
expect_grep 'label="gpu0";' "$WORK/out" "dot cluster gpu0"
dashed=$(grep -c "style=dashed" "$WORK/out")
if [ "$dashed" = 2 ]; then pass; else fail "dot: $dashed dashed edges (want 2)"; fi
if command -v dot >/dev/null 2>&1; then
    if dot -Tsvg "$WORK/out" >/dev/null 2>&1; then pass; else fail "dot rejects the dump"; fi
fi

# One device: one partition, no pairs.
expect_exit 0 "one device" -- "$TGC" compile "$ROOT/examples/digits/mlp.yaml" --optimize 0 --devices cpu --dump partitioned -o "$WORK/one"
expect_grep "^1 partition (cpu0: 9 nodes), 0 send/recv pairs" "$WORK/out" "one partition"

# Usage errors.
expect_exit 2 "partitioned without devices" -- "$TGC" compile "$CNN" --dump partitioned
expect_grep "needs --devices" "$WORK/err" "partitioned needs devices"
touch "$WORK/afile"
expect_exit 1 "-o names a file" -- "$TGC" compile "$CNN" --optimize 0 --devices cpu,gpu0 --dump partitioned -o "$WORK/afile"
expect_grep "cannot create directory" "$WORK/err" "directory error"
finish
