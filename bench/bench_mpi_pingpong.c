/* Ping-pong between two ranks: tgc's cross-process send/recv (the
 * transport pushing a value into the peer's step rendezvous, the path of a
 * _Send/_Recv pair between tasks) beside raw MPI_Send/MPI_Recv, in the same
 * run, for messages of 4 KiB to 64 MiB, and of 8 bytes (the latency).
 *
 *     mpirun --bind-to none -np 2 build/bench/bench_mpi_pingpong [ROUNDS]
 *     (as root add --allow-run-as-root; TCP on loopback:
 *      --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo)
 *
 * Each size runs ROUNDS rounds (default 5) of round trips; a round's count
 * is chosen so that it moves about 64 MiB each way (at least 10 trips, at
 * most 2000). Raw MPI runs first on MPI_COMM_WORLD (MPI started here at
 * MPI_THREAD_SERIALIZED), then tgc_distributed_init starts the transport's
 * progress thread and tgc's rounds run: while it runs, only that thread
 * may call MPI. Printed per size: the median round trip in microseconds
 * and the bandwidth (2 x bytes per round trip time, MB/s = 10^6 bytes/s)
 * for each, and their ratio (tgc / raw bandwidth). A tgc round trip is one
 * step each side: a rendezvous, the value pushed (header, then the data),
 * received into a new host buffer and handed to the rendezvous, a
 * receiver callback, and the same back. */
#include "tgc.h"

#include "devices/device.h"
#include "distributed/transport.h"
#include "partition/rendezvous.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ROUNDS 31

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static int trips_for(size_t bytes) {
    size_t t = ((size_t)64 << 20) / bytes;
    return t < 10 ? 10 : t > 2000 ? 2000 : (int)t;
}

/* ---- Raw MPI ---------------------------------------------------------------------- */

static double raw_round(int rank, char *buf, size_t bytes, int trips) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    for (int i = 0; i < trips; i++) {
        if (rank == 0) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        }
    }
    return (now_s() - t0) / trips;
}

/* ---- tgc ---------------------------------------------------------------------------- */

typedef struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    tgc_status status;
    tgc_value v;
} waiter;

static void arrived(void *ctx, tgc_status status, tgc_value *v) {
    waiter *w = ctx;
    pthread_mutex_lock(&w->lock);
    w->status = status;
    if (status == TGC_OK) w->v = *v;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static void on_abort(void *ctx, tgc_status status, const char *message) {
    (void)ctx, (void)status;
    fprintf(stderr, "bench_mpi_pingpong: step aborted: %s\n", message);
    exit(1);
}

/* Waits for `key` in r; returns its buffer reference. */
static tgc_value wait_for(tgc_rendezvous *r, const char *key) {
    waiter w = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
    if (tgc_rendezvous_recv_async(r, key, NULL, arrived, &w) != TGC_OK) exit(1);
    pthread_mutex_lock(&w.lock);
    while (!w.done) pthread_cond_wait(&w.cond, &w.lock);
    pthread_mutex_unlock(&w.lock);
    if (w.status != TGC_OK) exit(1);
    return w.v;
}

static void send_or_die(int dest, uint64_t step, const char *key, const tgc_value *v) {
    char err[256];
    if (tgc_dist_send(dest, step, key, v, err, sizeof err) != TGC_OK) {
        fprintf(stderr, "bench_mpi_pingpong: %s\n", err);
        exit(1);
    }
}

static uint64_t next_step = 1;

static double tgc_round(int rank, tgc_value *value, int trips) {
    char err[256];
    int dummy = 0, all[2];
    tgc_dist_allgather(&dummy, sizeof dummy, all, 60, err, sizeof err); /* a barrier */
    double t0 = now_s();
    for (int i = 0; i < trips; i++) {
        uint64_t step = next_step++;
        tgc_rendezvous *r;
        if (tgc_rendezvous_create(&r) != TGC_OK || tgc_dist_step_begin(step, r, on_abort, NULL) != TGC_OK) exit(1);
        if (rank == 0) {
            send_or_die(1, step, "ping", value);
            tgc_value back = wait_for(r, "pong");
            tgc_buffer_release(value->buf);
            *value = back; /* the next ping sends what came back */
        } else {
            tgc_value got = wait_for(r, "ping");
            send_or_die(0, step, "pong", &got);
            tgc_buffer_release(got.buf);
        }
        tgc_dist_step_end(step);
        tgc_rendezvous_free(r);
    }
    return (now_s() - t0) / trips;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (rounds < 1 || rounds > MAX_ROUNDS) rounds = 5;
    int provided = 0, rank = 0, size = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "bench_mpi_pingpong: run it with mpirun -np 2\n");
        MPI_Finalize();
        return 2;
    }
    enum { N_SIZES = 9 };
    size_t sizes[N_SIZES] = {8}; /* 8 bytes: the latency */
    for (int k = 1; k < N_SIZES; k++) sizes[k] = (size_t)4096 << (2 * (k - 1)); /* 4 KiB .. 64 MiB */
    char *buf = calloc(1, sizes[N_SIZES - 1]);
    double raw[N_SIZES], tgc[N_SIZES], times[MAX_ROUNDS];
    for (int k = 0; k < N_SIZES; k++) {
        raw_round(rank, buf, sizes[k], 3); /* warm up */
        for (int r = 0; r < rounds; r++) times[r] = raw_round(rank, buf, sizes[k], trips_for(sizes[k]));
        raw[k] = median(times, rounds);
    }
    tgc_diags *d = tgc_diags_create();
    if (tgc_distributed_init(d) != TGC_OK) {
        tgc_diags_print(d, stderr);
        return 1;
    }
    tgc_diags_free(d);
    tgc_dist_set_peer_timeout(20);
    for (int k = 0; k < N_SIZES; k++) {
        if (getenv("TGC_BENCH_VERBOSE")) fprintf(stderr, "rank %d: tgc %zu bytes\n", rank, sizes[k]);
        tgc_value v = {.dtype = TGC_UINT8, .rank = 1, .dims = {(int64_t)sizes[k]}};
        if (tgc_buffer_alloc(tgc_host_device(), sizes[k], &v.buf) != TGC_OK) return 1;
        memset(tgc_buffer_host_ptr(v.buf), 1, sizes[k]);
        if (rank == 0) tgc_round(rank, &v, 3);
        else tgc_round(rank, &v, 3);
        for (int r = 0; r < rounds; r++) times[r] = tgc_round(rank, &v, trips_for(sizes[k]));
        tgc[k] = median(times, rounds);
        tgc_buffer_release(v.buf);
    }
    if (rank == 0) {
        printf("ping-pong between 2 ranks, median of %d rounds (round trip time; bandwidth = 2 x size / round trip)\n",
               rounds);
        printf("%10s %12s %12s %12s %12s %8s\n", "size", "raw us", "tgc us", "raw MB/s", "tgc MB/s", "tgc/raw");
        for (int k = 0; k < N_SIZES; k++) {
            char label[32];
            if (sizes[k] >= (1u << 20)) snprintf(label, sizeof label, "%zu MiB", sizes[k] >> 20);
            else if (sizes[k] >= 1024) snprintf(label, sizeof label, "%zu KiB", sizes[k] >> 10);
            else snprintf(label, sizeof label, "%zu B", sizes[k]);
            double rb = 2.0 * (double)sizes[k] / raw[k] / 1e6, tb = 2.0 * (double)sizes[k] / tgc[k] / 1e6;
            printf("%10s %12.1f %12.1f %12.0f %12.0f %8.2f\n", label, raw[k] * 1e6, tgc[k] * 1e6, rb, tb, tb / rb);
        }
        fflush(stdout);
    }
    free(buf);
    tgc_distributed_finalize(0);
    return 0;
}
