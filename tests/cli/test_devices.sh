#!/usr/bin/env bash
# tgc devices: a table and JSON listing cpu and every gpuN with memory.
. "$(dirname "$0")/lib.bash"

expect_exit 0 "devices" -- "$TGC" devices
expect_grep "^device .*name .*platform .*type .*units .*total .*used .*free" "$WORK/out" "table header"
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
expect_exit 2 "bad format" -- "$TGC" devices --format xml
finish
