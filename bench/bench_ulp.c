/* The cpu vector math (devices/cpu/vmath.h) against libm in double: the
 * maximum error in ulp over every one of the 2^32 float inputs, the
 * special values, and the time per element beside SLEEF's u10 and u35
 * functions at the same ISA (build/bench/bench_ulp, built for AVX-512;
 * build/bench/bench_ulp_avx2 for AVX2 machines).
 *
 *     bench_ulp [--fn NAME] [--step K] [--threads N] [--impl ours|u10|u35]
 *               [--no-speed] [--speed-only]
 *
 * --fn runs one function (default all), --step K checks every K-th bit
 * pattern (default 1: all 2^32), --threads N splits the sweep over N
 * pthreads (default 1), --impl measures SLEEF's u10 or u35 function
 * instead of tgc's (where SLEEF has one), to choose between them.
 *
 * The error of a result got against the double reference ref is
 *     |got - ref| / ulp(rf),  rf = ref rounded to float (nearest),
 * ulp(rf) the spacing of floats at rf: 2^(e-23) for rf in [2^e, 2^(e+1)),
 * 2^-149 among the subnormals and at 0, 2^104 (the spacing at FLT_MAX)
 * when rf overflows to inf although ref is finite. So a correctly rounded
 * result is within 0.5, and a faithfully rounded one within 1.
 * A special-value mismatch is: NaN where ref is not NaN or the reverse, an
 * infinity where ref is finite and does not round to it (or a finite
 * result where ref is itself infinite, a pole), and a zero of the wrong
 * sign. pow is checked on a grid of 2^26 (x, y) pairs (2^13 x 2^13: bit
 * patterns spread over all floats, integers, halves and C99's special
 * operands) instead of all 2^64.
 *
 * Speed: ns per element of a loop of load, call, store over 2^14 floats
 * (64 KiB in, 64 KiB out: they stay in L2, so this times the arithmetic,
 * not memory) drawn from a range typical for the function, run 64 times
 * over (2^20 elements a run), the fastest of 15 runs after a warm-up (the
 * least disturbed by other work on a shared machine). The program exits 1 when a function is
 * over 3.5 ulp or has a special-value mismatch. */
#include "devices/cpu/vmath.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ULP_BOUND 3.5

typedef void (*loop_fn)(const float *x, const float *y, float *out, size_t n);

/* A loop over n floats (n a multiple of TGC_VLANES) calling f inline. */
#define LOOP1(name, f)                                                                   \
    static void name(const float *x, const float *y, float *o, size_t n) {               \
        (void)y;                                                                         \
        for (size_t i = 0; i < n; i += TGC_VLANES) tgc_vf_store(o + i, f(tgc_vf_load(x + i))); \
    }
#define SLEEF_LOOP(fn, acc)                                                               \
    static void sleef_##fn##_##acc(const float *x, const float *y, float *o, size_t n) {  \
        (void)y;                                                                          \
        for (size_t i = 0; i < n; i += TGC_VLANES)                                        \
            tgc_vf_store(o + i, TGC_VM_SLEEF(fn, acc, tgc_vf_load(x + i)));               \
    }

LOOP1(ours_exp, tgc_vexp)
LOOP1(ours_expm1, tgc_vexpm1)
LOOP1(ours_log, tgc_vlog)
LOOP1(ours_log1p, tgc_vlog1p)
LOOP1(ours_tanh, tgc_vtanh)
LOOP1(ours_sigmoid, tgc_vsigmoid)
LOOP1(ours_erf, tgc_verf)
LOOP1(ours_softplus, tgc_vsoftplus)
LOOP1(ours_sin, tgc_vsin)
LOOP1(ours_cos, tgc_vcos)
LOOP1(ours_tan, tgc_vtan)
LOOP1(ours_asin, tgc_vasin)
LOOP1(ours_acos, tgc_vacos)
LOOP1(ours_atan, tgc_vatan)
LOOP1(ours_sinh, tgc_vsinh)
LOOP1(ours_cosh, tgc_vcosh)
LOOP1(ours_asinh, tgc_vasinh)
LOOP1(ours_acosh, tgc_vacosh)
LOOP1(ours_atanh, tgc_vatanh)

static void ours_pow(const float *x, const float *y, float *o, size_t n) {
    for (size_t i = 0; i < n; i += TGC_VLANES) tgc_vf_store(o + i, tgc_vpow(tgc_vf_load(x + i), tgc_vf_load(y + i)));
}
static void sleef_pow_u10(const float *x, const float *y, float *o, size_t n) {
    for (size_t i = 0; i < n; i += TGC_VLANES)
        tgc_vf_store(o + i, TGC_VM_SLEEF2(pow, u10, tgc_vf_load(x + i), tgc_vf_load(y + i)));
}

SLEEF_LOOP(exp, u10)
SLEEF_LOOP(expm1, u10)
SLEEF_LOOP(log, u10)
SLEEF_LOOP(log, u35)
SLEEF_LOOP(log1p, u10)
SLEEF_LOOP(tanh, u10)
SLEEF_LOOP(tanh, u35)
SLEEF_LOOP(erf, u10)
SLEEF_LOOP(sin, u10)
SLEEF_LOOP(sin, u35)
SLEEF_LOOP(cos, u10)
SLEEF_LOOP(cos, u35)
SLEEF_LOOP(tan, u10)
SLEEF_LOOP(tan, u35)
SLEEF_LOOP(asin, u10)
SLEEF_LOOP(asin, u35)
SLEEF_LOOP(acos, u10)
SLEEF_LOOP(acos, u35)
SLEEF_LOOP(atan, u10)
SLEEF_LOOP(atan, u35)
SLEEF_LOOP(sinh, u10)
SLEEF_LOOP(sinh, u35)
SLEEF_LOOP(cosh, u10)
SLEEF_LOOP(cosh, u35)
SLEEF_LOOP(asinh, u10)
SLEEF_LOOP(acosh, u10)
SLEEF_LOOP(atanh, u10)

/* The references in double: libm's, and two composed where C has none. */
static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

typedef struct fn_desc {
    const char *name;
    loop_fn ours, u10, u35; /* u10, u35: SLEEF's, NULL where it has none */
    double (*ref)(double);  /* NULL for pow */
    float lo, hi;           /* the speed test's input range */
} fn_desc;

static const fn_desc FNS[] = {
    {"exp", ours_exp, sleef_exp_u10, NULL, exp, -80, 80},
    {"expm1", ours_expm1, sleef_expm1_u10, NULL, expm1, -20, 20},
    {"log", ours_log, sleef_log_u10, sleef_log_u35, log, 1e-6f, 1e6f},
    {"log1p", ours_log1p, sleef_log1p_u10, NULL, log1p, -0.99f, 100},
    {"tanh", ours_tanh, sleef_tanh_u10, sleef_tanh_u35, tanh, -10, 10},
    {"sigmoid", ours_sigmoid, NULL, NULL, ref_sigmoid, -20, 20},
    {"erf", ours_erf, sleef_erf_u10, NULL, erf, -5, 5},
    {"softplus", ours_softplus, NULL, NULL, ref_softplus, -20, 20},
    {"sin", ours_sin, sleef_sin_u10, sleef_sin_u35, sin, -10, 10},
    {"cos", ours_cos, sleef_cos_u10, sleef_cos_u35, cos, -10, 10},
    {"tan", ours_tan, sleef_tan_u10, sleef_tan_u35, tan, -10, 10},
    {"asin", ours_asin, sleef_asin_u10, sleef_asin_u35, asin, -1, 1},
    {"acos", ours_acos, sleef_acos_u10, sleef_acos_u35, acos, -1, 1},
    {"atan", ours_atan, sleef_atan_u10, sleef_atan_u35, atan, -10, 10},
    {"sinh", ours_sinh, sleef_sinh_u10, sleef_sinh_u35, sinh, -10, 10},
    {"cosh", ours_cosh, sleef_cosh_u10, sleef_cosh_u35, cosh, -10, 10},
    {"asinh", ours_asinh, sleef_asinh_u10, NULL, asinh, -100, 100},
    {"acosh", ours_acosh, sleef_acosh_u10, NULL, acosh, 1, 100},
    {"atanh", ours_atanh, sleef_atanh_u10, NULL, atanh, -0.99f, 0.99f},
    {"pow", ours_pow, sleef_pow_u10, NULL, NULL, 0.01f, 10},
};
enum { NFNS = sizeof FNS / sizeof FNS[0] };

static float from_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* ulp(rf) as defined above, from rf's exponent bits. */
static double ulp_of(double ref) {
    float rf = (float)ref;
    if (isinf(rf)) return 0x1p104;
    uint32_t b;
    memcpy(&b, &rf, sizeof b);
    uint32_t e = (b >> 23) & 0xffu;
    if (e == 0) return 0x1p-149;
    uint64_t db = (uint64_t)(e - 150u + 1023u) << 52;
    double u;
    memcpy(&u, &db, sizeof u);
    return u;
}

/* The error of got in ulp; *special = 1 on a special-value mismatch. */
static double compare(float got, double ref, int *special) {
    *special = 0;
    if (isnan(ref) || isnan(got)) {
        *special = !(isnan(ref) && isnan(got));
        return 0;
    }
    if (isinf(ref)) {
        *special = (double)got != ref;
        return 0;
    }
    if (isinf(got)) {
        if ((float)ref == got) return 0;
        *special = 1;
        return INFINITY;
    }
    if (got == 0.0f && !signbit(got) != !signbit(ref)) *special = 1;
    return fabs((double)got - ref) / ulp_of(ref);
}

/* ---- The sweep ------------------------------------------------------------------ */

/* Pow's grid: 2^13 values each of x and y. */
#define POW_SIDE 8192u
static float pow_x[POW_SIDE], pow_y[POW_SIDE];

static void pow_grid_init(void) {
    static const float xs[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 2.0f, -2.0f, 0.5f, -0.5f, 0x1p-149f, -0x1p-149f, FLT_MAX, 10.0f, -3.0f};
    static const float ys[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 2.0f, -2.0f, 0.5f, -0.5f, 3.0f, -3.0f, 0x1p-149f, 1e10f, -1e10f, 0x1p24f, 0x1p24f + 2};
    uint32_t h = 12345u;
    for (uint32_t k = 0; k < POW_SIDE; k++) {
        h = h * 1664525u + 1013904223u;
        pow_x[k] = from_bits(k * (1u << 19) + (h >> 13)); /* every sign and binade */
        if (k < POW_SIDE / 2) {
            pow_y[k] = from_bits((k * 2u) * (1u << 19) + (h >> 13));
        } else if (k < POW_SIDE / 2 + 1024) {
            pow_y[k] = (float)((int)(k - POW_SIDE / 2) - 512) * 0.5f; /* integers and halves in [-256, 256) */
        } else {
            pow_y[k] = -40.0f + 80.0f * (float)(h >> 8) * 0x1p-24f; /* [-40, 40) */
        }
    }
    memcpy(pow_x, xs, sizeof xs);
    memcpy(pow_y, ys, sizeof ys);
    for (uint32_t k = 0; k < 64; k++) pow_x[POW_SIDE - 1 - k] = -(float)(k + 1) * 0.75f; /* negative x with integer y */
}

typedef struct job {
    const fn_desc *f;
    loop_fn impl;
    uint64_t begin, end, step; /* pattern indices: the pattern is index * step */
    double worst;
    float worst_x, worst_y, worst_got;
    double worst_ref;
    uint64_t specials, checked;
    float special_x, special_y, special_got;
    double special_ref;
} job;

#define BATCH 4096u

static void *sweep(void *arg) {
    job *j = arg;
    static _Thread_local float in[BATCH], iny[BATCH], out[BATCH];
    int is_pow = j->f->ref == NULL;
    for (uint64_t i = j->begin; i < j->end; i += BATCH) {
        uint64_t n = j->end - i < BATCH ? j->end - i : BATCH;
        for (uint64_t k = 0; k < BATCH; k++) {
            uint64_t idx = i + (k < n ? k : 0);
            if (is_pow) {
                in[k] = pow_x[(idx * j->step) / POW_SIDE % POW_SIDE];
                iny[k] = pow_y[(idx * j->step) % POW_SIDE];
            } else {
                in[k] = from_bits((uint32_t)(idx * j->step));
            }
        }
        j->impl(in, iny, out, BATCH);
        for (uint64_t k = 0; k < n; k++) {
            double ref = is_pow ? pow((double)in[k], (double)iny[k]) : j->f->ref((double)in[k]);
            int special;
            double err = compare(out[k], ref, &special);
            j->checked++;
            if (special) {
                if (j->specials++ == 0) {
                    j->special_x = in[k];
                    j->special_y = iny[k];
                    j->special_got = out[k];
                    j->special_ref = ref;
                }
            }
            if (err > j->worst) {
                j->worst = err;
                j->worst_x = in[k];
                j->worst_y = iny[k];
                j->worst_got = out[k];
                j->worst_ref = ref;
            }
        }
    }
    return NULL;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- Speed ---------------------------------------------------------------------- */

#define SPEED_N (1u << 14) /* the buffer */
#define SPEED_PASSES 64   /* passes over it per timed run */
#define SPEED_REPS 15

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The fastest run's ns per element of impl over x (and y), or NAN without impl. */
static double ns_per_element(loop_fn impl, const float *x, const float *y, float *out) {
    if (!impl) return NAN;
    double t[SPEED_REPS];
    for (int p = 0; p < SPEED_PASSES; p++) impl(x, y, out, SPEED_N);
    for (int r = 0; r < SPEED_REPS; r++) {
        double t0 = now_s();
        for (int p = 0; p < SPEED_PASSES; p++) impl(x, y, out, SPEED_N);
        t[r] = now_s() - t0;
    }
    qsort(t, SPEED_REPS, sizeof *t, cmp_double);
    return t[0] * 1e9 / ((double)SPEED_N * SPEED_PASSES);
}

static void print_ns(double ns) {
    if (isnan(ns)) printf(" %7s", "-");
    else printf(" %7.3f", ns);
}

static void usage(void) {
    fprintf(stderr, "usage: bench_ulp [--fn NAME] [--step K] [--threads N] [--impl ours|u10|u35] [--no-speed] [--speed-only]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *only = NULL, *impl_name = "ours";
    uint64_t step = 1;
    int threads = 1, do_sweep = 1, do_speed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fn") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--step") && i + 1 < argc) step = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--impl") && i + 1 < argc) impl_name = argv[++i];
        else if (!strcmp(argv[i], "--no-speed")) do_speed = 0;
        else if (!strcmp(argv[i], "--speed-only")) do_sweep = 0;
        else usage();
    }
    if (step < 1 || threads < 1 || threads > 256) usage();
    if (strcmp(impl_name, "ours") && strcmp(impl_name, "u10") && strcmp(impl_name, "u35")) usage();
#if TGC_VBYTES == 64
    if (!__builtin_cpu_supports("avx512f")) {
        fprintf(stderr, "bench_ulp: built for AVX-512 and this cpu has no avx512f (use bench_ulp_avx2)\n");
        return 2;
    }
#elif TGC_VBYTES == 32
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        fprintf(stderr, "bench_ulp: built for AVX2+FMA and this cpu lacks them\n");
        return 2;
    }
#endif
    pow_grid_init();
    float *sx = malloc(SPEED_N * sizeof *sx), *sy = malloc(SPEED_N * sizeof *sy), *so = malloc(SPEED_N * sizeof *so);
    if (!sx || !sy || !so) return 2;

    printf("bench_ulp: %s (%d lanes), impl %s, every %llu-th input, %d thread%s\n", TGC_ISA_NAME, TGC_VLANES,
           impl_name, (unsigned long long)step, threads, threads == 1 ? "" : "s");
    printf("%-9s %9s  %-34s %8s %12s %7s | ns/elt: %7s %7s %7s\n", "function", "max ulp", "at x (got, ref)",
           "special", "checked", "sweep s", "ours", "u10", "u35");
    int failed = 0, ran = 0;
    for (int fi = 0; fi < NFNS; fi++) {
        const fn_desc *f = &FNS[fi];
        if (only && strcmp(only, f->name)) continue;
        ran++;
        loop_fn impl = !strcmp(impl_name, "u10") ? f->u10 : !strcmp(impl_name, "u35") ? f->u35 : f->ours;
        printf("%-9s", f->name);
        if (do_sweep && impl) {
            uint64_t total = f->ref ? ((1ull << 32) + step - 1) / step : ((uint64_t)POW_SIDE * POW_SIDE + step - 1) / step;
            job jobs[256];
            pthread_t tids[256];
            double t0 = now_s();
            for (int t = 0; t < threads; t++) {
                jobs[t] = (job){.f = f, .impl = impl, .step = step};
                jobs[t].begin = total * (uint64_t)t / (uint64_t)threads;
                jobs[t].end = total * (uint64_t)(t + 1) / (uint64_t)threads;
                if (pthread_create(&tids[t], NULL, sweep, &jobs[t])) return 2;
            }
            job all = {0};
            for (int t = 0; t < threads; t++) {
                pthread_join(tids[t], NULL);
                job *j = &jobs[t];
                if (j->worst > all.worst) {
                    all.worst = j->worst;
                    all.worst_x = j->worst_x;
                    all.worst_y = j->worst_y;
                    all.worst_got = j->worst_got;
                    all.worst_ref = j->worst_ref;
                }
                if (j->specials && !all.specials) {
                    all.special_x = j->special_x;
                    all.special_y = j->special_y;
                    all.special_got = j->special_got;
                    all.special_ref = j->special_ref;
                }
                all.specials += j->specials;
                all.checked += j->checked;
            }
            double secs = now_s() - t0;
            char where[96];
            if (f->ref) snprintf(where, sizeof where, "%.9g (%.9g, %.9g)", (double)all.worst_x, (double)all.worst_got, all.worst_ref);
            else snprintf(where, sizeof where, "%.7g^%.7g (%.9g, %.9g)", (double)all.worst_x, (double)all.worst_y, (double)all.worst_got, all.worst_ref);
            printf(" %9.3f  %-34s %8llu %12llu %7.1f", all.worst, where, (unsigned long long)all.specials,
                   (unsigned long long)all.checked, secs);
            if (all.worst > ULP_BOUND || all.specials) failed = 1;
            if (all.specials) {
                printf("\n          first special mismatch: x %a y %a got %a ref %a", (double)all.special_x,
                       (double)all.special_y, (double)all.special_got, all.special_ref);
            }
        } else {
            printf(" %9s  %-34s %8s %12s %7s", "-", do_sweep ? "(no such SLEEF function)" : "", "-", "-", "-");
        }
        if (do_speed) {
            uint32_t h = 987654321u;
            for (uint32_t i = 0; i < SPEED_N; i++) {
                h = h * 1664525u + 1013904223u;
                sx[i] = f->lo + (f->hi - f->lo) * (float)(h >> 8) * 0x1p-24f;
                sy[i] = -4.0f + 8.0f * (float)((h * 2654435761u) >> 8) * 0x1p-24f;
            }
            printf(" |        ");
            print_ns(ns_per_element(f->ours, sx, sy, so));
            print_ns(ns_per_element(f->u10, sx, sy, so));
            print_ns(ns_per_element(f->u35, sx, sy, so));
        }
        printf("\n");
        fflush(stdout);
    }
    if (do_speed && !only) {
        double t[SPEED_REPS];
        for (int r = 0; r < SPEED_REPS; r++) {
            double t0 = now_s();
            for (int p = 0; p < SPEED_PASSES; p++) {
                memcpy(so, sx, SPEED_N * sizeof *sx);
                __asm__ volatile("" : : "r"(so) : "memory"); /* keeps every pass */
            }
            t[r] = now_s() - t0;
        }
        qsort(t, SPEED_REPS, sizeof *t, cmp_double);
        printf("(a plain copy of the same arrays: %.3f ns/elt)\n", t[0] * 1e9 / ((double)SPEED_N * SPEED_PASSES));
    }
    free(sx);
    free(sy);
    free(so);
    if (!ran) usage();
    return failed;
}
