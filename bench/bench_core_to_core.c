/* What it costs a core to read data another core has just written, beside
 * data it wrote itself: the figure behind tgc_parallel_for's ranges
 * (support/parallel_for.c), and a probe of the machine's state when
 * scaling figures are taken (a virtual machine's two vCPUs may share a
 * core's caches one hour and sit on different dies the next).
 *
 *   build/bench/bench_core_to_core [CPU_A CPU_B]     (default: the first two CPUs the process may use)
 *
 * Two threads pinned to CPU_A and CPU_B. Each round, the thread on CPU_A
 * writes a buffer, then one of the two reads it all (a vectorizable sum),
 * then CPU_A writes it all again; rounds alternate the reader. Prints, per
 * buffer size, the median read time by the writer's own core and by the
 * other core, and their ratio; then the median time of that second write
 * after its own read and after the other core's (a write to a line
 * another core holds must first take it from that core: a kernel writing
 * where the last kernel's other thread read pays it).
 * Then what the two CPUs compute together: a loop of independent vector
 * multiply-adds in registers timed on CPU_A alone, then on both at once,
 * and the work both did per unit of time against one alone (2.0: two
 * cores; near 1.0: two hardware threads of one core, or vCPUs the host
 * runs on one: a kernel's second thread then adds nothing, tgc's or
 * ONNX Runtime's). Last, the same for reads: each thread sums a buffer of
 * its own (512 KiB: a core's L2; 8 MiB: the shared L3; 64 MiB: memory)
 * until it has read 512 MiB, alone and both at once, and the bytes both
 * read per unit of time against one alone, with one's GB/s. On the
 * 2-vCPU EPYC of issue 34 the caches gave 1.93-2.00x, and memory
 * 1.05-1.13x in three probes of seven within an hour (42-45 GB/s alone;
 * 1.76-2.02x in the others): then one core takes all the memory
 * bandwidth the host gives, and a kernel streaming from memory (a large
 * matrix-vector product's weights) gains little from a second thread. */
#define _GNU_SOURCE
#include "bench/bench_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 100

typedef struct probe {
    float *buf;
    size_t n;
    int cpu[2];
    pthread_barrier_t turn;
    double read_s[2][ROUNDS];  /* by reader: 0 the writer's core, 1 the other */
    double write_s[2][ROUNDS]; /* CPU_A's write after that read, by the same reader */
    volatile float sink;
} probe;

typedef struct role {
    probe *p;
    int me; /* 0 writes; both read */
} role;

static float sum(const float *x, size_t n) {
    float acc[16] = {0};
    for (size_t i = 0; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++) acc[k] += x[i + k];
    float s = 0;
    for (int k = 0; k < 16; k++) s += acc[k];
    return s;
}

static void *run(void *arg) {
    role *r = arg;
    probe *p = r->p;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(p->cpu[r->me], &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    for (int round = 0; round < 2 * ROUNDS; round++) {
        if (r->me == 0)
            for (size_t i = 0; i < p->n; i++) p->buf[i] = (float)(i + (size_t)round);
        pthread_barrier_wait(&p->turn);
        int reader = round % 2;
        if (r->me == reader) {
            double t0 = bench_now_s();
            p->sink = sum(p->buf, p->n);
            p->read_s[reader][round / 2] = bench_now_s() - t0;
        }
        pthread_barrier_wait(&p->turn);
        if (r->me == 0) {
            double t0 = bench_now_s();
            for (size_t i = 0; i < p->n; i++) p->buf[i] = (float)(i + (size_t)round + 1);
            p->write_s[reader][round / 2] = bench_now_s() - t0;
        }
        pthread_barrier_wait(&p->turn);
    }
    return NULL;
}

/* Vector multiply-adds (a multiply, then an add) each probe thread runs,
 * over 16 independent chains of 16 lanes. */
#define FMA_STEPS 20000000

/* Bytes each probe thread reads in one timed pass of the streaming probe
 * (its buffer read over and over). */
#define STREAM_BYTES ((size_t)512 << 20)

typedef float v16 __attribute__((vector_size(64)));

/* One thread of a two-CPU probe: `work` pinned to `cpu`, timed after the
 * start barrier (NULL: alone). */
typedef struct pair_probe {
    int cpu;
    pthread_barrier_t *start;
    void (*work)(struct pair_probe *f); /* sets seconds */
    float *buf;                         /* the streaming probe's own buffer */
    size_t n;                           /* its floats */
    double seconds;
    volatile float sink;
} pair_probe;

static void fma_work(pair_probe *f) {
    v16 acc[16], mul, add;
    for (int i = 0; i < 16; i++) {
        mul[i] = 0.999999f, add[i] = 1e-7f;
    }
    for (int i = 0; i < 16; i++) acc[i] = add * (float)i;
    if (f->start != NULL) pthread_barrier_wait(f->start);
    double t0 = bench_now_s();
    for (long s = 0; s < FMA_STEPS / 16; s++)
        for (int i = 0; i < 16; i++) acc[i] = acc[i] * mul + add;
    f->seconds = bench_now_s() - t0;
    float total = 0;
    for (int i = 0; i < 16; i++) total += acc[i][0];
    f->sink = total;
}

/* Reads the thread's own buffer (written first by this thread, so its
 * pages and lines are this core's) until STREAM_BYTES are read. */
static void stream_work(pair_probe *f) {
    for (size_t i = 0; i < f->n; i++) f->buf[i] = (float)i;
    size_t passes = STREAM_BYTES / (f->n * sizeof(float));
    float total = sum(f->buf, f->n); /* warm */
    if (f->start != NULL) pthread_barrier_wait(f->start);
    double t0 = bench_now_s();
    for (size_t k = 0; k < passes; k++) {
        __asm__ volatile("" ::: "memory"); /* every pass reads the buffer again */
        total += sum(f->buf, f->n);
    }
    f->seconds = bench_now_s() - t0;
    f->sink = total;
}

static void *run_pair(void *arg) {
    pair_probe *f = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(f->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    f->work(f);
    return NULL;
}

/* The work two threads on cpu[0] and cpu[1] do at once per unit of time,
 * against one on cpu[0] alone (the median of 5 of each); each thread
 * streams a buffer of `floats` of its own (0: the multiply-adds). 0 when a
 * thread or a buffer cannot be had; *alone_s: the median time alone. */
static double pair_scaling(const int cpu[2], size_t floats, double *alone_s) {
    double alone[5], both[5];
    *alone_s = 0.0;
    void (*work)(pair_probe *) = floats > 0 ? stream_work : fma_work;
    float *bufs[2] = {NULL, NULL};
    for (int i = 0; floats > 0 && i < 2; i++)
        if ((bufs[i] = aligned_alloc(64, floats * sizeof(float))) == NULL) {
            free(bufs[0]);
            return 0.0;
        }
    bool ok = true;
    for (int r = 0; ok && r < 5; r++) {
        pair_probe one = {.cpu = cpu[0], .work = work, .buf = bufs[0], .n = floats};
        pthread_t t[2];
        if (pthread_create(&t[0], NULL, run_pair, &one) != 0) {
            ok = false;
            break;
        }
        pthread_join(t[0], NULL);
        alone[r] = one.seconds;
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, 2);
        pair_probe two[2] = {{.cpu = cpu[0], .start = &start, .work = work, .buf = bufs[0], .n = floats},
                             {.cpu = cpu[1], .start = &start, .work = work, .buf = bufs[1], .n = floats}};
        bool started = pthread_create(&t[0], NULL, run_pair, &two[0]) == 0;
        if (started && pthread_create(&t[1], NULL, run_pair, &two[1]) != 0) {
            pthread_barrier_wait(&start); /* in the second thread's place: the first is waiting */
            pthread_join(t[0], NULL);
            started = false;
        } else if (started) {
            for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
        }
        pthread_barrier_destroy(&start);
        ok = started;
        if (ok) both[r] = two[0].seconds > two[1].seconds ? two[0].seconds : two[1].seconds;
    }
    free(bufs[0]);
    free(bufs[1]);
    if (!ok) return 0.0;
    *alone_s = bench_median(alone, 5);
    return 2.0 * *alone_s / bench_median(both, 5);
}

/* The first two CPUs in the process's affinity mask, or -1. */
static int first_cpus(int cpu[2]) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    int found = 0;
    for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
        if (CPU_ISSET(c, &set)) cpu[found++] = c;
    return found == 2 ? 0 : -1;
}

int main(int argc, char **argv) {
    static probe p;
    if (argc == 3) {
        p.cpu[0] = atoi(argv[1]);
        p.cpu[1] = atoi(argv[2]);
    } else if (first_cpus(p.cpu) != 0) {
        fprintf(stderr, "bench_core_to_core: needs two CPUs\n");
        return 1;
    }
    printf("read after a write on cpu%d: by cpu%d itself and by cpu%d, median of %d rounds\n", p.cpu[0], p.cpu[0],
           p.cpu[1], ROUNDS);
    printf("%10s %12s %12s %8s\n", "KiB", "own us", "other us", "ratio");
    const size_t kib[] = {256, 1024, 4096, 16384};
    double writes[4][2];
    for (int k = 0; k < 4; k++) {
        p.n = kib[k] * 1024 / sizeof(float);
        if ((p.buf = aligned_alloc(64, p.n * sizeof(float))) == NULL) return 1;
        pthread_barrier_init(&p.turn, NULL, 2);
        pthread_t t[2];
        role roles[2] = {{&p, 0}, {&p, 1}};
        for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run, &roles[i]);
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&p.turn);
        double own = bench_median(p.read_s[0], ROUNDS) * 1e6, other = bench_median(p.read_s[1], ROUNDS) * 1e6;
        printf("%10zu %12.1f %12.1f %8.2f\n", kib[k], own, other, other / own);
        writes[k][0] = bench_median(p.write_s[0], ROUNDS) * 1e6;
        writes[k][1] = bench_median(p.write_s[1], ROUNDS) * 1e6;
        free(p.buf);
    }
    printf("write on cpu%d after that read: by cpu%d itself and by cpu%d\n", p.cpu[0], p.cpu[0], p.cpu[1]);
    printf("%10s %12s %12s %8s\n", "KiB", "own us", "other us", "ratio");
    for (int k = 0; k < 4; k++)
        printf("%10zu %12.1f %12.1f %8.2f\n", kib[k], writes[k][0], writes[k][1], writes[k][1] / writes[k][0]);
    double alone_s = 0.0;
    printf("multiply-adds on cpu%d and cpu%d at once, against cpu%d alone: %.2fx\n", p.cpu[0], p.cpu[1], p.cpu[0],
           pair_scaling(p.cpu, 0, &alone_s));
    const size_t stream_kib[] = {512, 8192, 65536};
    for (int k = 0; k < 3; k++) {
        double x = pair_scaling(p.cpu, stream_kib[k] * 1024 / sizeof(float), &alone_s);
        printf("reads of a buffer of %zu KiB each on cpu%d and cpu%d at once, against cpu%d alone: %.2fx (%.1f GB/s "
               "alone)\n",
               stream_kib[k], p.cpu[0], p.cpu[1], p.cpu[0], x, alone_s > 0 ? STREAM_BYTES / alone_s / 1e9 : 0.0);
    }
    return 0;
}
