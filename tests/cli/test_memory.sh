#!/usr/bin/env bash
# Memory from the command line: the static plan (tgc compile --dump memory),
# the report after runs (tgc run --memory-report) and limits
# (tgc run --memory-limit), on the digits CNN with its 400 test images.
. "$(dirname "$0")/lib.bash"
D="$ROOT/examples/digits"
X="x=$D/test_x.npy"

# The plan, N bound: numbers derived by hand in tests/executor/test_memory_plan.c.
expect_exit 0 "plan on cpu" -- "$TGC" compile "$D/cnn.yaml" --optimize 0 --devices cpu --dump memory --bind N=400
expect_grep "memory plan of digits_cnn on cpu (N=400)" "$WORK/out" "plan header"
expect_grep "^cpu0  *14648  *1024000  *1024000  *3001632  *14$" "$WORK/out" "cpu0 row: weights, planned, lower, naive"
expect_grep "^host  *8  *32  *32  *32  *1$" "$WORK/out" "host row"
expect_grep "cpu0: busiest step [0-9]* (pool1), 1024000 bytes live" "$WORK/out" "busiest step"
expect_grep "relu1  *float32  *\[400, 8, 8, 8\]  *819200  *0 " "$WORK/out" "largest live tensor"
expect_grep "cpu0 reads 102400 bytes of feeds in place" "$WORK/out" "feeds note"

# Unbound symbols are taken as 1, and the plan says so.
expect_exit 0 "plan, N unbound" -- "$TGC" compile "$D/cnn.yaml" --optimize 0 --devices cpu --dump memory
expect_grep "(taken as 1: N)" "$WORK/out" "defaulted symbol named"
expect_grep "^cpu0  *14648  *2560  *2560 " "$WORK/out" "N = 1 figures"

# JSON: totals, and every buffer with its lifetime and offset.
expect_exit 0 "plan as json" -- "$TGC" compile "$D/cnn.yaml" --optimize 0 --devices cpu,gpu0 --dump memory --bind N=400 \
    --format json -o "$WORK/plan.json"
expect_grep '"device": "gpu0", "weights_bytes": 14632, "planned_peak": 1024000, "lower_bound": 1024000, "naive_sum": 3104000' \
    "$WORK/plan.json" "gpu0 totals"
expect_grep '"symbols": {"N": {"value": 400, "bound": true}}' "$WORK/plan.json" "symbols"
expect_grep '{"tensors": \["conv1", "relu1"\], "bytes": 819200' "$WORK/plan.json" "a forwarded buffer"
if command -v python3 >/dev/null; then
    python3 -m json.tool "$WORK/plan.json" >/dev/null && pass || fail "plan.json is not JSON"
fi

# A larger model (examples/resnet_mini: residual adds, a Concat of two branches).
R="$ROOT/examples/resnet_mini/resnet_mini.yaml"
if [ -f "$R" ]; then
    expect_exit 0 "plan of resnet_mini" -- "$TGC" compile "$R" --devices cpu --dump memory --bind N=64 --optimize 0
    expect_grep "^cpu0  *232488  *12582912  *12582912  *52204544  *23$" "$WORK/out" "resnet_mini cpu0 row"
    # with the passes (the default): its two Add+Relu pairs are fusion groups, so
    # two intermediates are never allocated: the naive sum drops by 2 x 3.5 MiB
    expect_exit 0 "plan of optimized resnet_mini" -- "$TGC" compile "$R" --devices cpu --dump memory --bind N=64
    # (each Relu after a Conv is absorbed by the run's plan, not the graph: still a tensor of the
    # naive sum; 52204544 - 2 x 3670016 = 44864512 over 23 - 2 = 21 tensors)
    expect_grep "^cpu0  *232488  *12582912  *12582912  *44864512  *21$" "$WORK/out" "optimized resnet_mini cpu0 row"
    # workspaces for a pool of --threads threads (each its own im2col tile): the 1-thread plan asks less
    ws() { sed -n 's/.* + workspaces \([0-9]*\);.*/\1/p' "$WORK/err"; }
    expect_exit 0 "plan at 1 thread" -- "$TGC" compile "$R" --devices cpu --dump memory --bind N=64 --threads cpu0=1
    ws1=$(ws)
    expect_exit 0 "plan at 2 threads" -- "$TGC" compile "$R" --devices cpu --dump memory --bind N=64 --threads cpu0=2
    ws2=$(ws)
    [ -n "$ws1" ] && [ -n "$ws2" ] && [ "$ws1" -lt "$ws2" ] && pass ||
        fail "--threads not taken by --dump memory: workspaces $ws1 at 1 thread, $ws2 at 2"
fi

expect_exit 2 "--dump memory without devices" -- "$TGC" compile "$D/cnn.yaml" --dump memory
expect_grep "needs --devices" "$WORK/err" "devices needed"
expect_exit 2 "unknown symbol" -- "$TGC" compile "$D/cnn.yaml" --devices cpu --dump memory --bind M=3
expect_grep "the graph has no symbol 'M' (its symbols: N) \[bad-bind\]" "$WORK/err" "bind message"
expect_exit 2 "bad bind value" -- "$TGC" compile "$D/cnn.yaml" --devices cpu --dump memory --bind N=-4
expect_exit 2 "bad format" -- "$TGC" compile "$D/cnn.yaml" --devices cpu --dump memory --format dot
expect_exit 2 "--bind without --dump memory" -- "$TGC" compile "$D/cnn.yaml" --bind N=4

# The report after runs: measured beside predicted, and what was live at the peak.
expect_exit 0 "memory report" -- "$TGC" run "$D/cnn.yaml" --input "$X" --repeat 2 --memory-report
expect_grep "memory report of digits_cnn after 2 runs (bytes; static plan for N=400)" "$WORK/out" "report header"
expect_grep "peak bytes in use  *1038648  (weights 14648 + tensors 1024000)" "$WORK/out" "peak"
# (naive sum: every tensor once, the Relus the kernels absorb included, as the plan above)
expect_grep "predicted peak  *1038648  (weights 14648 + a step's tensors at their most 1024000; \
packed in an arena 1024000, naive sum 3001632)" \
    "$WORK/out" "prediction beside it"
expect_grep "measured peak  *1038648  (weights 14648 + a step's tensors at their most 1024000)$" "$WORK/out" \
    "a step's peak measured beside it"
expect_grep "in use at the end  *14648  (the weights only)" "$WORK/out" "only the weights remain"
expect_grep "reserved bytes  *[0-9]" "$WORK/out" "reserved"
expect_grep "allocations  *[0-9]" "$WORK/out" "allocations"
expect_grep "largest allocation  *819200" "$WORK/out" "largest allocation"
expect_grep "fragmentation  *[0-9.]" "$WORK/out" "fragmentation"
expect_grep "live at the peak  *1024000" "$WORK/out" "live at the peak"
expect_grep "relu1  *float32  *\[400, 8, 8, 8\]  *819200" "$WORK/out" "largest live tensor"
expect_grep "pool1  *float32  *\[400, 8, 4, 4\]  *204800" "$WORK/out" "second live tensor"

# Limits: just below the need fails cleanly (exit 1) naming node, tensor,
# device and figures; enough passes; below the weights, the session fails.
expect_exit 1 "a limit just below" -- "$TGC" run "$D/cnn.yaml" --input "$X" --memory-limit cpu=1038647
expect_grep "node 'pool1' (MaxPool) on cpu0: out of memory allocating output 0 (float32 \[400, 8, 4, 4\], 204800 bytes); cpu0 has 833848 bytes in use" \
    "$WORK/err" "limit message"
expect_grep "limit 1038647 \[out-of-memory\]" "$WORK/err" "the limit named"
expect_exit 0 "enough memory" -- "$TGC" run "$D/cnn.yaml" --input "$X" --memory-limit cpu0=1MiB
# Below the weights (14648 bytes: conv1 8x1x3x3 + 8, fc1 32x64 + 32, fc2
# 10x32 + 10 floats), the session refuses before it loads anything: the
# limit 10000 less 5% is 9500 usable (9.3 KiB).
expect_exit 2 "below the weights" -- "$TGC" run "$D/cnn.yaml" --input "$X" --memory-limit cpu=10000
expect_grep "cpu0 \[does not fit\] needs 14648 bytes (14.3 KiB): weights 14648 + kernel caches 0 + activations 0 .*shape symbols unbound); it has 9.8 KiB by --memory-limit (less the 5% margin: 9.3 KiB usable)" \
    "$WORK/err" "refusal message"
expect_grep "nothing was loaded" "$WORK/err" "refused before loading"
expect_exit 1 "report with a failing run" -- "$TGC" run "$D/cnn.yaml" --input "$X" --memory-limit 'cpu=1000KB' \
    --memory-report
expect_grep "limit  *1000000" "$WORK/out" "the report shows the limit"
expect_grep "in use at the end  *14648  (the weights only)" "$WORK/out" "a failed run releases everything"
expect_exit 2 "bad limit" -- "$TGC" run "$D/cnn.yaml" --input "$X" --memory-limit cpu=lots
expect_grep "needs a size of at least 1 byte" "$WORK/err" "bad size message"
expect_exit 2 "limit on a device not in the session" -- "$TGC" run "$D/cnn.yaml" --input "$X" --memory-limit gpu0=1MiB
expect_grep "'gpu0' is not a device of this session (cpu0)" "$WORK/err" "unknown device message"

# Sizes that do not fit in int64 (issue 21): a clean error, never a wrapped
# figure. N = 2^62 makes the input itself too big; N = 2^51 makes every
# tensor fit but their sum not.
expect_exit 2 "a bound input too big" -- "$TGC" compile "$D/cnn.yaml" --devices cpu --dump memory --bind N=4611686018427387904
expect_grep "graph input 'x': output 0 has shape \[4611686018427387904, 1, 8, 8\] (float32) with the symbols bound as given (N=4611686018427387904); its size in bytes does not fit in 2^63 - 1 \[size-overflow\]" \
    "$WORK/err" "input overflow message"
expect_exit 2 "a plan too big" -- "$TGC" compile "$D/cnn.yaml" --devices cpu --dump memory --bind N=2251799813685248
expect_grep "the memory plan of cpu0: its tensors' bytes add up past 2^63 - 1 (symbols bound: N=2251799813685248) \[size-overflow\]" \
    "$WORK/err" "plan overflow message"

# A planned peak above the memory a device has, or above a limit, is a
# warning naming the largest tensor at its node; the dump still comes.
cat > "$WORK/huge.yaml" <<'YAML'
format: tgc/1
name: huge
inputs:
  - {name: x, dtype: float32, shape: [N, N, N]}
outputs: [y]
nodes:
  - {name: h, op: Relu, inputs: [x]}
  - {name: y, op: Sigmoid, inputs: [h]}
YAML
expect_exit 2 "a 4 PB plan" -- "$TGC" compile "$WORK/huge.yaml" --devices cpu --dump memory --bind N=100000
expect_grep "cpu0 \[does not fit\] needs 4000000000.* activations 4000000000000000 .*; the largest tensor live at its busiest step is 'y' (float32 \[100000, 100000, 100000\], 4000000000000000 bytes, 3.6 PiB)" \
    "$WORK/err" "over-memory figures"
expect_grep "\[over-memory\]" "$WORK/err" "over-memory rule"
# 400 images: relu1's [400, 8, 8, 8] and pool1's [400, 8, 4, 4] floats
# (819200 + 204800 bytes) are live together: 1024000 bytes of activations.
expect_exit 2 "a plan above its limit" -- "$TGC" compile "$D/cnn.yaml" --optimize 0 --devices cpu --dump memory \
    --bind N=400 --memory-limit cpu=1MB
expect_grep "cpu0 \[does not fit\] needs [0-9]* bytes (.*): weights 14648 + kernel caches [0-9]* + activations 1024000 .*it has 976.6 KiB by --memory-limit (less the 5% margin: 927.7 KiB usable); the largest tensor live at its busiest step is 'relu1' (float32 \[400, 8, 8, 8\], 819200 bytes, 800.0 KiB)" \
    "$WORK/err" "over-limit figures"
expect_exit 0 "a plan within its limit" -- "$TGC" compile "$D/cnn.yaml" --optimize 0 --devices cpu --dump memory \
    --bind N=400 --memory-limit cpu=2MB
expect_grep "note: the plan fits. Per device" "$WORK/err" "the verdict when it fits"
expect_grep "cpu0 needs [0-9]* bytes .*weights 14648 .*activations 1024000 .*it has 1.9 MiB by --memory-limit" "$WORK/err" "the figures when it fits"
expect_exit 2 "a limit for a device not planned" -- "$TGC" compile "$D/cnn.yaml" --devices cpu --dump memory \
    --memory-limit gpu0=1MB
expect_grep "'gpu0' is not a device of this plan (cpu) \[bad-memory-limit\]" "$WORK/err" "unplanned device"

if "$TGC" devices | grep -q '^gpu0'; then
    expect_exit 0 "report on cpu,gpu0" -- "$TGC" run "$D/cnn.yaml" --devices cpu,gpu0 --input "$X" --memory-report
    expect_grep "predicted peak  *1038632  (weights 14632 + a step's tensors at their most 1024000" "$WORK/out" \
        "gpu0 prediction"
    expect_grep "measured peak  *1038632  (weights 14632 + a step's tensors at their most 1024000)" "$WORK/out" \
        "gpu0 measured"
    # the gpu's workspaces (CLBlast's temporary buffers) come from its allocator: in its peak
    expect_grep "peak bytes in use  *[0-9]*  (weights 14632 + tensors and workspaces [0-9]*)" "$WORK/out" \
        "gpu0 workspaces in its figures"
    expect_exit 1 "gpu0 limit" -- "$TGC" run "$D/cnn.yaml" --devices cpu,gpu0 --input "$X" --memory-limit gpu=1000000
    # (a node and the device named; which node runs out first follows the allocator's state)
    expect_grep "node '[a-z0-9]*' ([A-Za-z]*) on gpu0: out of .*memory.*\[out-of-memory\]" "$WORK/err" \
        "gpu0 limit message"
fi
finish
