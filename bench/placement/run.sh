#!/bin/bash
# Automatic placement's benchmark (docs/placement.md): per model, steps/s of
#   rules-1t   cpu0 alone, one thread, --inflight 2
#   rules-2t   cpu0 alone, two threads, --inflight 2
#   auto-2x1t  cpu0,cpu1 one thread each, --placement auto, --inflight 2
# and one step's latency (--inflight 1) of cpu0,gpu0 under auto beside each
# device alone (when gpu0 exists) -- CNNs at batch 1 and 16, a transformer,
# an LSTM and an MLP by default; then what fits a memory limit: each of
# N cpus (SPLIT_N, default 2 3 4) limited to 1.25/N of what the model needs
# on one cpu, the rules (everything on cpu0) beside auto: the exit status
# (2: refused before loading), whether auto's outputs are bitwise cpu0's,
# and auto's peak per device; in both tables, whether each device's
# predicted peak is the measured one (`peaks`). Rounds alternate the
# configurations; each figure is the median over ROUNDS. Models: the tgc/1 YAML exports of
# bench/peers (PEERS_DIR, as bench/peers/run.sh makes them), each with
# MODEL.input.npy fed to its input named `input`. Each run takes STEPS steps
# or, for a model whose steps are short, as many as cpu0 alone with one
# thread runs in MIN_SECONDS (default 0.5 s): 100 steps of the MLP's 0.35 ms
# were 35 ms, and its steps/s over two replicas swung from 3400 to 5200.
#   PEERS_DIR=/tmp/peers ROUNDS=5 STEPS=100 bench/placement/run.sh [MODEL...]
set -euo pipefail
TGC=${TGC:-build/tgc}
DIR=${PEERS_DIR:-/tmp/peers}
ROUNDS=${ROUNDS:-5}
STEPS=${STEPS:-100}
MIN_SECONDS=${MIN_SECONDS:-0.5}
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(resnet18 mobilenet_v2 mobilenet_v2_b16 transformer lstm mlp_b64)

median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

steps_per_s() { # devices threads placement inflight model [steps]
    "$TGC" run "$DIR/$5.yaml" --devices "$1" --threads "$2" --placement "$3" --inflight "$4" \
        --input input="$DIR/$5.input.npy" --repeat "${6:-$STEPS}" 2>&1 |
        sed -n 's/.*after the first: \([0-9.]*\) steps\/s.*/\1/p'
}

# One step's latency in ms (--inflight 1): the median of LATENCY_STEPS steps (default 25, the first among
# them; 5 swung ResNet-18's from 9.0 to 11.8 ms on the same placement).
latency_ms() { # devices placement model
    "$TGC" run "$DIR/$3.yaml" --devices "$1" --placement "$2" --inflight 1 --input input="$DIR/$3.input.npy" \
        --repeat "${LATENCY_STEPS:-25}" 2>&1 | sed -n 's/.*latency median \([0-9.]*\) ms.*/\1/p'
}

# Per device of a --memory-report in file $1: "equal (N)" when every predicted peak is the measured one,
# else the predicted/measured pairs that differ.
peaks_equal() {
    awk '/^  predicted peak/ {p = $3} /^  measured peak/ {n++; if ($3 != p) bad = bad " " p "/" $3}
         END {print n == 0 ? "-" : (bad == "" ? "equal(" n ")" : "differ:" bad)}' "$1"
}

has_gpu=$("$TGC" devices 2>/dev/null | grep -c '^ *gpu0' || true)
printf "%-14s %10s %10s %10s %8s %8s %-10s" model rules-1t rules-2t auto-2x1t "x1t" "x2t" "peaks"
[ "$has_gpu" -gt 0 ] && printf " %9s %9s %9s" "cpu ms" "gpu0 ms" "auto ms"
echo
for m in "${MODELS[@]}"; do
    # first a run that fills the cost cache, not timed
    "$TGC" compile "$DIR/$m.yaml" --devices cpu0,cpu1 --threads cpu0=1,cpu1=1 --placement auto --inflight 2 \
        --dump placed >/dev/null 2>&1 || true
    rate=$(steps_per_s cpu0 cpu0=1 rules 2 "$m")
    steps=$(echo "$rate * $MIN_SECONDS" | bc -l | awk -v s="$STEPS" '{n = int($1); print (n > s ? n : s)}')
    : > /tmp/bp.$m.r1; : > /tmp/bp.$m.r2; : > /tmp/bp.$m.a; : > /tmp/bp.$m.lc; : > /tmp/bp.$m.lg; : > /tmp/bp.$m.la
    for _ in $(seq 1 "$ROUNDS"); do
        steps_per_s cpu0 cpu0=1 rules 2 "$m" "$steps" >> /tmp/bp.$m.r1
        steps_per_s cpu0 cpu0=2 rules 2 "$m" "$steps" >> /tmp/bp.$m.r2
        steps_per_s cpu0,cpu1 cpu0=1,cpu1=1 auto 2 "$m" "$steps" >> /tmp/bp.$m.a
        if [ "$has_gpu" -gt 0 ]; then
            # auto right after the cpu alone, the gpu last: on PoCL the gpu's runs take both cores,
            # and the cpu's next runs here were up to 30% slower for a while (MNASNet: 2.29 ms before
            # one, 2.92 after)
            latency_ms cpu0 rules "$m" >> /tmp/bp.$m.lc
            latency_ms cpu0,gpu0 auto "$m" >> /tmp/bp.$m.la
            latency_ms gpu0 rules "$m" >> /tmp/bp.$m.lg
        fi
    done
    r1=$(median < /tmp/bp.$m.r1); r2=$(median < /tmp/bp.$m.r2); a=$(median < /tmp/bp.$m.a)
    "$TGC" run "$DIR/$m.yaml" --devices cpu0,cpu1 --threads cpu0=1,cpu1=1 --placement auto --inflight 2 \
        --input input="$DIR/$m.input.npy" --repeat 20 --memory-report > /tmp/bp.$m.report 2>&1 || true
    printf "%-14s %10s %10s %10s %8.2f %8.2f %-10s" "$m" "$r1" "$r2" "$a" "$(echo "$a / $r1" | bc -l)" \
        "$(echo "$a / $r2" | bc -l)" "$(peaks_equal /tmp/bp.$m.report)"
    if [ "$has_gpu" -gt 0 ]; then
        printf " %9s %9s %9s" "$(median < /tmp/bp.$m.lc)" "$(median < /tmp/bp.$m.lg)" "$(median < /tmp/bp.$m.la)"
    fi
    echo
done
echo "steps/s, medians of $ROUNDS rounds of $STEPS steps or ${MIN_SECONDS} s; x1t = auto-2x1t / rules-1t (target >= 1.7),"
echo "x2t = auto-2x1t / rules-2t (target >= 0.95); steps/s after the first step of each run; latencies: medians;"
echo "peaks: auto-2x1t's predicted peak against the measured one per device (--memory-report, 20 steps)"
echo
printf "%-18s %2s %12s %12s %8s %8s %8s %-10s %s\n" model N "need on one" "limit each" rules auto bitwise peaks \
    "auto's measured need per device"
for m in "${MODELS[@]}"; do
    need=$("$TGC" compile "$DIR/$m.yaml" --devices cpu0 --threads cpu0=1 --dump memory 2>&1 |
        sed -n 's/.*cpu0 needs \([0-9]*\) bytes.*/\1/p')
    rm -rf /tmp/bp.one && "$TGC" run "$DIR/$m.yaml" --devices cpu0 --threads cpu0=1 \
        --input input="$DIR/$m.input.npy" --output-dir /tmp/bp.one >/dev/null 2>&1 || true
    for n in ${SPLIT_N:-2 3 4}; do
        limit=$((need * 125 / (100 * n)))
        devices=cpu0 threads=cpu0=1 limits=cpu0=$limit
        for k in $(seq 1 $((n - 1))); do
            devices=$devices,cpu$k threads=$threads,cpu$k=1 limits=$limits,cpu$k=$limit
        done
        run_limited() {
            rm -rf /tmp/bp.split
            "$TGC" run "$DIR/$m.yaml" --devices "$devices" --threads "$threads" --placement "$1" \
                --memory-limit "$limits" --input input="$DIR/$m.input.npy" --memory-report \
                --output-dir /tmp/bp.split >/tmp/bp.fit 2>&1
        }
        run_limited rules && r=0 || r=$?
        run_limited auto && a=0 || a=$?
        same=-
        [ "$a" = 0 ] && { diff -rq /tmp/bp.one /tmp/bp.split >/dev/null && same=yes || same=no; }
        peaks=$(sed -n 's/^  measured need *\([0-9]*\).*/\1/p' /tmp/bp.fit | tr '\n' ' ')
        printf "%-18s %2s %12s %12s %8s %8s %8s %-10s %s\n" "$m" "$n" "$need" "$limit" "exit $r" "exit $a" "$same" \
            "$(peaks_equal /tmp/bp.fit)" "$peaks"
    done
done
echo "each of N cpus limited to 1.25/N of the need on one (exit 2: refused before loading); bitwise: auto's"
echo "outputs against cpu0 alone's"
