/* The overhead of one eager op from C: an Add of two 1-element float32
 * tensors on cpu, its result released, timed in batches; prints the
 * median ns per op (target: 1000 ns at most) beside a plain loop that only
 * creates and releases a tensor, for scale, and every batch's ns per op
 * on a last line ("batches_ns ..."). bench/eager_overhead.py runs this and
 * the same op from Python and torch's eager mode beside it.
 * build/bench/bench_eager [OPS_PER_BATCH [BATCHES]] */
#include "tgc.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_BATCHES 101

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    long ops = argc > 1 ? atol(argv[1]) : 100000;
    int batches = argc > 2 ? atoi(argv[2]) : 21;
    if (ops < 1 || batches < 1 || batches > MAX_BATCHES) {
        fprintf(stderr, "usage: bench_eager [OPS_PER_BATCH [BATCHES <= %d]]\n", MAX_BATCHES);
        return 2;
    }
    tgc_diags *diags = tgc_diags_create();
    tgc_eager *e = NULL;
    if (tgc_eager_create("cpu", NULL, diags, &e) != TGC_OK) {
        tgc_diags_print(diags, stderr);
        return 1;
    }
    tgc_tensor *a = NULL, *b = NULL, *y = NULL;
    tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){1}, (float[]){1}, &a);
    tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){1}, (float[]){2}, &b);
    tgc_tensor *in[] = {a, b};
    double add[MAX_BATCHES], create[MAX_BATCHES], order[MAX_BATCHES];
    for (int r = 0; r < batches; r++) {
        double t0 = now_ns();
        for (long i = 0; i < ops; i++) {
            if (tgc_eager_run(e, "Add", NULL, 0, in, 2, NULL, &y, 1, diags) != TGC_OK) {
                tgc_diags_print(diags, stderr);
                return 1;
            }
            tgc_tensor_release(y);
        }
        add[r] = order[r] = (now_ns() - t0) / (double)ops;
        t0 = now_ns();
        for (long i = 0; i < ops; i++) {
            tgc_tensor_create(TGC_FLOAT32, 1, (int64_t[]){1}, NULL, &y);
            tgc_tensor_release(y);
        }
        create[r] = (now_ns() - t0) / (double)ops;
    }
    qsort(add, (size_t)batches, sizeof add[0], cmp);
    qsort(create, (size_t)batches, sizeof create[0], cmp);
    tgc_eager_stats st = tgc_eager_get_stats(e);
    printf("eager Add of two 1-element float32 tensors on cpu, from C: median %.0f ns/op (target <= 1000)\n",
           add[batches / 2]);
    printf("  for scale: tgc_tensor_create + release of a 1-element tensor: %.0f ns\n", create[batches / 2]);
    printf("  kernel cache: %lld hits, %lld misses\n", (long long)st.cache_hits, (long long)st.cache_misses);
    printf("batches_ns");
    for (int r = 0; r < batches; r++) printf(" %.1f", order[r]);
    printf("\n");
    tgc_tensor_release(a);
    tgc_tensor_release(b);
    tgc_eager_free(e);
    tgc_diags_free(diags);
    return 0;
}
