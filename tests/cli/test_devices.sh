#!/usr/bin/env bash
# tgc devices: a table and JSON listing cpu and every gpuN with memory.
. "$(dirname "$0")/lib.bash"

expect_exit 0 "devices" -- "$TGC" devices
expect_grep "^device .*name .*platform .*type .*isa .*units .*total .*used .*free" "$WORK/out" "table header"
expect_grep "^cpu .* cpu  *\(sse2\|avx2\|avx512\) " "$WORK/out" "the cpu row names its vector ISA"
expect_grep "^cpu .* host .* cpu " "$WORK/out" "cpu row"
if command -v clinfo >/dev/null && clinfo -l 2>/dev/null | grep -q Device; then
    expect_grep "^gpu0 " "$WORK/out" "gpu0 row where OpenCL has a device"
fi
expect_exit 0 "devices json" -- "$TGC" devices --format json
expect_grep '"name": "cpu"' "$WORK/out" "json cpu"
expect_grep '"total_bytes": [1-9]' "$WORK/out" "json total memory"
if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[0]["name"]=="cpu" and all("free_bytes" in x for x in d)' \
        "$WORK/out" && pass || fail "json does not parse"
fi
# TGC_CPU_ISA caps the vector ISA of the cpu's elementwise loops
TGC_CPU_ISA=sse2 expect_exit 0 "devices json, baseline ISA" -- "$TGC" devices --format json
expect_grep '"name": "cpu", .*"isa": "sse2"' "$WORK/out" "TGC_CPU_ISA=sse2 caps the cpu's ISA"
expect_exit 2 "bad format" -- "$TGC" devices --format xml
finish
