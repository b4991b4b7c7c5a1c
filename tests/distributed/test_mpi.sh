# Devices in other processes (docs/distributed.md), end to end under mpirun:
#   bash test_mpi.sh TGC ROOT NP TRANSPORT [failures]
# NP ranks (2 or 3) over TRANSPORT: shm (OpenMPI's default: shared memory
# between ranks of one machine) or tcp (TCP over loopback, as between two
# machines). Models split across the ranks must give outputs bitwise equal
# to one process. With "failures": a kernel failing on rank 1, a rank that
# stops, ranks that place differently, a list naming more ranks than run.
source "$(dirname "$0")/../cli/lib.bash"
NP=$3
TRANSPORT=$4
MODE=${5:-}
# Root needs the flag; --bind-to none: mpirun would pin each rank to one
# core and starve the device pools; 3 ranks on 2 cores need --oversubscribe.
MPIRUN=(mpirun --oversubscribe --bind-to none --timeout 120 -np "$NP")
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
[ "$TRANSPORT" = tcp ] && MPIRUN+=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Under AddressSanitizer (make test-asan): OpenMPI's components stay loaded
# and stacks are unwound slowly, so that LeakSanitizer can name OpenMPI's
# own blocks (tests/lsan.supp) and tgc's are still reported.
export OMPI_MCA_mca_base_component_disable_dlclose=1
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
[ -n "${LSAN_OPTIONS:-}" ] && export LSAN_OPTIONS="$LSAN_OPTIONS:fast_unwind_on_malloc=0"
[ -n "${TSAN_OPTIONS:-}" ] && export TSAN_OPTIONS="$TSAN_OPTIONS:suppressions=$(dirname "$0")/tsan_openmpi.supp"
if ! command -v mpirun >/dev/null; then echo "mpirun not found: install openmpi-bin"; exit 1; fi
DEVICES="/task:0/cpu"
for ((t = 1; t < NP; t++)); do DEVICES="$DEVICES,/task:$t/cpu"; done

# split IN OUT [RANKS]: a copy of the graph whose i-th of n nodes asks for
# task floor(i * RANKS / n) (RANKS: NP): consecutive stages on consecutive ranks.
split() {
    awk -v np="${3:-$NP}" '
        /^nodes:/ { in_nodes = 1 }
        { lines[NR] = $0; if (in_nodes && $0 ~ /^  - \{name: /) node[++n] = NR }
        END {
            for (i = 1; i <= n; i++) task[node[i]] = int((i - 1) * np / n)
            for (l = 1; l <= NR; l++) {
                s = lines[l]
                if (l in task) sub(/^  - \{/, "  - {device: /task:" task[l] "/cpu, ", s)
                print s
            }
        }' "$1" >"$2"
}

# same_outputs A B WHAT: every .npy in A equal, byte for byte, to B's.
same_outputs() {
    local n=0
    for f in "$1"/*.npy; do
        n=$((n + 1))
        if cmp -s "$f" "$2/$(basename "$f")"; then pass; else fail "$3: $(basename "$f") differs from one process"; fi
    done
    [ "$n" -gt 0 ] || fail "$3: no outputs written"
}

DIGITS=$ROOT/examples/digits
RESNET=$ROOT/examples/resnet_mini
X_DIGITS=$DIGITS/test_x.npy
X_RESNET=$ROOT/tests/data/distributed/resnet_x.npy

if [ "$MODE" != failures ]; then
    # One process: the reference.
    expect_exit 0 "digits cnn, one process" -- "$TGC" run "$DIGITS/cnn.yaml" --input x="$X_DIGITS" --output-dir "$WORK/cnn1"
    expect_exit 0 "digits mlp, one process" -- "$TGC" run "$DIGITS/mlp.yaml" --input x="$DIGITS/test_x_flat.npy" --output-dir "$WORK/mlp1"
    expect_exit 0 "resnet_mini, one process" -- "$TGC" run "$RESNET/resnet_mini.yaml" --input x="$X_RESNET" --output-dir "$WORK/res1"

    # The stages of each model on consecutive ranks.
    split "$DIGITS/cnn.yaml" "$WORK/cnn_split.yaml"
    split "$DIGITS/mlp.yaml" "$WORK/mlp_split.yaml"
    split "$RESNET/resnet_mini.yaml" "$WORK/res_split.yaml"
    expect_exit 0 "split cnn places across $NP ranks" -- "$TGC" compile "$WORK/cnn_split.yaml" --weights-dir "$DIGITS" --devices "$DEVICES" --dump partitioned
    expect_grep "/task:$((NP - 1))/cpu0" "$WORK/out" "the last rank has a partition"
    expect_exit 0 "placement dump, all on the last rank" -- "$TGC" compile "$RESNET/resnet_mini.yaml" \
        --devices "/task:$((NP - 1))/cpu,/task:0/cpu" --dump placed --format json
    expect_grep '"x": {"device": "cpu0", "reason": "feed"}' "$WORK/out" "the input is on task 0 to be fed"
    expect_grep '"probs": {"device": "/task:'$((NP - 1))'/cpu0"' "$WORK/out" "the ops on the last rank"
    expect_exit 0 "digits cnn on $NP ranks ($TRANSPORT)" -- "${MPIRUN[@]}" "$TGC" run "$WORK/cnn_split.yaml" \
        --weights-dir "$DIGITS" --devices "$DEVICES" --input x="$X_DIGITS" --output-dir "$WORK/cnnN" --repeat 3
    expect_grep "on $DEVICES" "$WORK/out" "rank 0 reports the run"
    same_outputs "$WORK/cnn1" "$WORK/cnnN" "digits cnn on $NP ranks"
    expect_exit 0 "digits mlp on $NP ranks ($TRANSPORT)" -- "${MPIRUN[@]}" "$TGC" run "$WORK/mlp_split.yaml" \
        --weights-dir "$DIGITS" --devices "$DEVICES" --input x="$DIGITS/test_x_flat.npy" --output-dir "$WORK/mlpN"
    same_outputs "$WORK/mlp1" "$WORK/mlpN" "digits mlp on $NP ranks"
    expect_exit 0 "resnet_mini on $NP ranks ($TRANSPORT)" -- "${MPIRUN[@]}" "$TGC" run "$WORK/res_split.yaml" \
        --weights-dir "$RESNET" --devices "$DEVICES" --input x="$X_RESNET" --output-dir "$WORK/resN" --repeat 2
    same_outputs "$WORK/res1" "$WORK/resN" "resnet_mini on $NP ranks"
    # No device specs: everything on the last rank, fed by rank 0, outputs back to it.
    LAST="/task:$((NP - 1))/cpu,/task:0/cpu"
    expect_exit 0 "resnet_mini all on rank $((NP - 1))" -- "${MPIRUN[@]}" "$TGC" run "$RESNET/resnet_mini.yaml" \
        --devices "$LAST" --input x="$X_RESNET" --output-dir "$WORK/resL"
    same_outputs "$WORK/res1" "$WORK/resL" "resnet_mini on rank $((NP - 1)) alone"

    # Split by memory (--placement auto, docs/placement.md): resnet_mini at
    # batch 4 needs NEED bytes on one cpu; each rank's cpu gets 9/10 of it,
    # so no one rank can hold it (the largest step alone, its live tensors
    # and the caches it reads, takes most of NEED: the rest is what a split
    # can move). Every rank's measured need (peak bytes in
    # use + kernel caches) stays within its limit, more than one rank holds
    # weights, and the outputs are one process's.
    sed 's/shape: \[N, 3, 32, 32\]/shape: [4, 3, 32, 32]/' "$RESNET/resnet_mini.yaml" >"$WORK/res4.yaml"
    NEED=$("$TGC" compile "$WORK/res4.yaml" --weights-dir "$RESNET" --devices cpu --threads cpu0=1 --dump memory 2>&1 |
        sed -n 's/.*cpu0 needs \([0-9]*\) bytes.*/\1/p')
    [ -n "$NEED" ] && pass || fail "the memory dump gives the need on one cpu"
    LIMIT=$((NEED * 90 / 100))
    LIMITS="" THREADS=""
    for ((t = 0; t < NP; t++)); do
        LIMITS="$LIMITS${LIMITS:+,}/task:$t/cpu0=$LIMIT"
        THREADS="$THREADS${THREADS:+,}/task:$t/cpu0=1"
    done
    expect_exit 0 "resnet_mini split by memory over $NP ranks ($TRANSPORT)" -- "${MPIRUN[@]}" "$TGC" run \
        "$WORK/res4.yaml" --weights-dir "$RESNET" --devices "$DEVICES" --threads "$THREADS" --placement auto \
        --memory-limit "$LIMITS" --input x="$X_RESNET" --output-dir "$WORK/resM" --memory-report
    same_outputs "$WORK/res1" "$WORK/resM" "resnet_mini split by memory over $NP ranks"
    # Each rank reports every device, its own with figures (ranks' lines may
    # interleave): every measured need within the limit; weights on 2+ ranks.
    awk -v limit="$LIMIT" '
        /^  peak bytes in use/ { gsub(/[()]/, ""); if ($7 > 0) held++ }
        /^  measured need/ { needs++; if ($3 > limit) over = over " " $3 }
        END {
            if (over != "") { print "over the limit " limit ":" over; exit 1 }
            if (held < 2 || needs < 2) { print "weights on " held + 0 " rank(s)"; exit 1 }
        }' "$WORK/out" && pass || fail "split by memory: every rank within its limit, weights on 2+ ranks"

    # tgc devices lists every rank's.
    expect_exit 0 "tgc devices under mpirun" -- "${MPIRUN[@]}" "$TGC" devices
    expect_grep "^/task:$((NP - 1))/cpu " "$WORK/out" "the last rank's cpu listed"
    expect_grep "^cpu " "$WORK/out" "rank 0's cpu listed"
else
    split "$RESNET/resnet_mini.yaml" "$WORK/res_split.yaml"
    # A kernel failing on rank 1 fails the step on every rank: each exits 1
    # naming the node, its device and rank 1.
    TGC_FAIL_NODE=b2c1 expect_exit 1 "a kernel failing on rank 1" -- "${MPIRUN[@]}" -x TGC_FAIL_NODE "$TGC" run \
        "$WORK/res_split.yaml" --weights-dir "$RESNET" --devices "$DEVICES" --input x="$X_RESNET"
    node_task=$(grep -o "device: /task:[0-9]*/cpu, name: b2c1" "$WORK/res_split.yaml" | sed 's/device: \/task:\([0-9]*\).*/\1/')
    expect_grep "rank $node_task: node 'b2c1' (Conv) on /task:$node_task/cpu0" "$WORK/err" "the message names rank, node and device"
    # Every rank's report: OpenMPI forwards each rank's stderr as it comes
    # and ends the job at the first exit, and has once in many runs dropped
    # a rank's last line; a short count runs the job once more.
    reports=$(grep -c "rank $node_task: node 'b2c1'" "$WORK/err")
    if [ "$reports" -lt "$NP" ]; then
        TGC_FAIL_NODE=b2c1 "${MPIRUN[@]}" -x TGC_FAIL_NODE "$TGC" run "$WORK/res_split.yaml" --weights-dir "$RESNET" \
            --devices "$DEVICES" --input x="$X_RESNET" >/dev/null 2>"$WORK/err2"
        reports=$(grep -c "rank $node_task: node 'b2c1'" "$WORK/err2")
    fi
    [ "$reports" -ge "$NP" ] && pass || fail "every rank reports the failure ($reports of $NP)"
    expect_grep "failure injected" "$WORK/err" "the kernel's own message"

    # A rank that stops (a frozen machine) fails the others within --peer-timeout.
    start=$(date +%s)
    TGC_STOP_NODE=b2c1 expect_exit 1 "a rank that stops" -- "${MPIRUN[@]}" -x TGC_STOP_NODE "$TGC" run \
        "$WORK/res_split.yaml" --weights-dir "$RESNET" --devices "$DEVICES" --input x="$X_RESNET" --peer-timeout 2
    took=$(($(date +%s) - start))
    [ "$took" -lt 60 ] && pass || fail "a stopped rank: the others took ${took}s to fail"
    expect_grep "no message from rank $node_task for 2 s" "$WORK/err" "the timeout names the silent rank"

    # Ranks that place differently (different files) are refused at start.
    split "$RESNET/resnet_mini.yaml" "$WORK/res_two.yaml" 2
    sed 's|device: /task:0/cpu|device: /task:1/cpu|' "$WORK/res_two.yaml" >"$WORK/res_other.yaml"
    MPMD=("${MPIRUN[@]}")
    MPMD[7]=1 # -np 1 for each program
    expect_exit 2 "ranks that load different graphs" -- "${MPMD[@]}" "$TGC" run "$WORK/res_two.yaml" \
        --weights-dir "$RESNET" --devices /task:0/cpu,/task:1/cpu --input x="$X_RESNET" : \
        -np 1 "$TGC" run "$WORK/res_other.yaml" --weights-dir "$RESNET" --devices /task:0/cpu,/task:1/cpu
    expect_grep "placed the graph differently" "$WORK/err" "a placement mismatch is named"
    expect_exit 2 "ranks with different device lists" -- "${MPMD[@]}" "$TGC" run "$RESNET/resnet_mini.yaml" \
        --devices /task:0/cpu,/task:1/cpu --input x="$X_RESNET" : \
        -np 1 "$TGC" run "$RESNET/resnet_mini.yaml" --devices /task:1/cpu,/task:0/cpu
    expect_grep "placed the graph differently" "$WORK/err" "a device list mismatch is named"

    # A list naming more ranks than run, and one process without mpirun.
    expect_exit 2 "a task beyond the ranks" -- "${MPIRUN[@]}" "$TGC" run "$RESNET/resnet_mini.yaml" \
        --devices "/task:0/cpu,/task:$NP/cpu" --input x="$X_RESNET"
    expect_grep "mpirun -np $((NP + 1))" "$WORK/err" "the message says how many ranks"
    expect_exit 2 "tasks without mpirun" -- "$TGC" run "$RESNET/resnet_mini.yaml" --devices /task:0/cpu,/task:1/cpu \
        --input x="$X_RESNET"
    expect_grep "mpirun -np 2" "$WORK/err" "the message says to use mpirun"
    expect_exit 2 "--inflight with tasks" -- "${MPIRUN[@]}" "$TGC" run "$RESNET/resnet_mini.yaml" \
        --devices "$DEVICES" --input x="$X_RESNET" --inflight 2
    expect_grep "do not take devices of other processes" "$WORK/err" "--inflight says why"
fi
finish
