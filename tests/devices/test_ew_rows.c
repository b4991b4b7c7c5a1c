/* Every row of graph/elementwise.def against an independent reference:
 * the same op written here in double precision with C's libm (the way
 * ONNX's reference implementation writes it with numpy), for every dtype of
 * the row's class, through the loops of every vector ISA this cpu runs
 * (tgc_cpu_ew_all_loops: sse2 always), on a dense sample of finite values
 * and on the special ones (NaN, +-inf, +-0, subnormals, the largest and
 * smallest normals). Then the cpu kernel against the gpu kernel (gpu0; PoCL
 * where there is no GPU) for every row and dtype the gpu has, through the
 * registry as the executor calls them, and the ISA choice itself.
 *
 * A row without a reference here fails the suite: adding a row means
 * adding its reference. */
#include "devices/cpu/ew.h"
#include "tests/devices/gpu_fixture.h"

#include <float.h>
#include <stdlib.h>

/* ---- References, in double -------------------------------------------------------- */

/* clip as numpy.clip: below lo becomes lo, then above hi becomes hi; NaN passes. */
static double ref_clip(double x, double lo, double hi) {
    if (x != x) return x;
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
}

static double ref_softplus(double x) { return x > 40 ? x : log1p(exp(x)); }

/* numpy.round: the nearest integer, halves to even (C's nearbyint in the
 * default rounding mode, written out). */
static double ref_round(double x) {
    if (!isfinite(x)) return x;
    double f = floor(x), d = x - f;
    double r = d > 0.5 ? f + 1 : d < 0.5 ? f : fmod(f, 2) == 0 ? f : f + 1;
    return copysign(r, x); /* -0.3 rounds to -0 */
}

/* numpy.sign: -1, 0 or 1; NaN stays NaN, and a zero keeps its sign here
 * (compared with ==, so either zero passes). */
static double ref_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : x; }

/* Row `id` at x (and y, for binary rows) with parameters p (float rows)
 * as ONNX defines it; false when the row has no reference yet. */
static bool ref_float(tgc_ew_op id, double x, double y, const float *p, double *out) {
    double r;
    switch (id) {
    case TGC_EW_Relu: r = x < 0 ? 0 : x; break;
    case TGC_EW_LeakyRelu: r = x < 0 ? p[0] * x : x; break;
    case TGC_EW_Sigmoid: r = 1 / (1 + exp(-x)); break;
    case TGC_EW__Swish: r = x / (1 + exp(-x)); break; /* SiLU: x * Sigmoid(x) */
    case TGC_EW_Tanh: r = tanh(x); break;
    case TGC_EW_Elu: r = x < 0 ? p[0] * expm1(x) : x; break;
    case TGC_EW_Selu: r = x <= 0 ? (double)p[1] * ((double)p[0] * expm1(x)) : (double)p[1] * x; break;
    case TGC_EW_Celu: r = x != x ? x : fmax(0, x) + fmin(0, p[0] * expm1(x / p[0])); break;
    case TGC_EW_HardSigmoid: r = ref_clip((double)p[0] * x + p[1], 0, 1); break;
    case TGC_EW_HardSwish: r = x * ref_clip(x / 6 + 0.5, 0, 1); break;
    case TGC_EW_Softplus: r = ref_softplus(x); break;
    case TGC_EW_Softsign: r = x / (1 + fabs(x)); break;
    case TGC_EW_Mish: r = x * tanh(ref_softplus(x)); break;
    case TGC_EW_Gelu: /* approximate: none (p 0, erfc: no cancellation) or tanh (p 1) */
        r = p[0] < 0.5f ? 0.5 * x * erfc(-x / sqrt(2.0))
                        : 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        break;
    case TGC_EW_ThresholdedRelu: r = x > p[0] ? x : 0; break;
    case TGC_EW_Shrink: r = x < -p[1] ? x + p[0] : x > p[1] ? x - p[0] : 0; break;
    case TGC_EW_Neg: r = -x; break;
    case TGC_EW_Abs: r = fabs(x); break;
    case TGC_EW_Reciprocal: r = 1 / x; break;
    case TGC_EW_Sqrt: r = sqrt(x); break;
    case TGC_EW_Exp: r = exp(x); break;
    case TGC_EW_Log: r = log(x); break;
    case TGC_EW_Erf: r = erf(x); break;
    case TGC_EW_Clip: r = ref_clip(x, p[0], p[1]); break;
    case TGC_EW_Sin: r = sin(x); break;
    case TGC_EW_Cos: r = cos(x); break;
    case TGC_EW_Tan: r = tan(x); break;
    case TGC_EW_Asin: r = asin(x); break;
    case TGC_EW_Acos: r = acos(x); break;
    case TGC_EW_Atan: r = atan(x); break;
    case TGC_EW_Sinh: r = sinh(x); break;
    case TGC_EW_Cosh: r = cosh(x); break;
    case TGC_EW_Asinh: r = asinh(x); break;
    case TGC_EW_Acosh: r = acosh(x); break;
    case TGC_EW_Atanh: r = atanh(x); break;
    case TGC_EW_Add: r = x + y; break;
    case TGC_EW_Sub: r = x - y; break;
    case TGC_EW_Mul: r = x * y; break;
    case TGC_EW_Div: r = x / y; break;
    case TGC_EW_Min: r = x != x || y != y ? NAN : fmin(x, y); break;
    case TGC_EW_Max: r = x != x || y != y ? NAN : fmax(x, y); break;
    case TGC_EW_Pow: r = pow(x, y); break;
    case TGC_EW_Equal: r = x == y; break;
    case TGC_EW_Less: r = x < y; break;
    case TGC_EW_LessOrEqual: r = x <= y; break;
    case TGC_EW_Greater: r = x > y; break;
    case TGC_EW_GreaterOrEqual: r = x >= y; break;
    /* integer-only rows: a probe value (never compared) */
    case TGC_EW_And:
    case TGC_EW_Or:
    case TGC_EW_Xor:
    case TGC_EW_Not:
    case TGC_EW_BitShift: r = 0; break;
    case TGC_EW_Mod: r = fmod(x, y); break; /* floats need fmod = 1 */
    case TGC_EW_IsNaN: r = x != x; break;
    case TGC_EW_IsInf: r = (x == -INFINITY && p[0] != 0) || (x == INFINITY && p[1] != 0); break;
    case TGC_EW_Sign: r = ref_sign(x); break;
    case TGC_EW_Floor: r = floor(x); break;
    case TGC_EW_Ceil: r = ceil(x); break;
    case TGC_EW_Round: r = ref_round(x); break;
    case TGC_EW_PRelu: r = x < 0 ? y * x : x; break;
    /* numpy adds in the dtype (an overflow is inf), then divides */
    case TGC_EW_Mean: r = (double)(float)(x + y) / p[0]; break; /* float64: check_float_row */
    default: return false;
    }
    *out = r;
    return true;
}

/* Python's integer modulo (the sign of y); 0 for y = 0, as numpy. */
static int64_t ref_py_mod(int64_t x, int64_t y) {
    if (y == 0 || y == -1) return 0;
    int64_t r = x % y;
    return r != 0 && (r < 0) != (y < 0) ? r + y : r;
}

/* Integer rows over `bits`-bit lanes (8, 16, 32, 64), signed (two's
 * complement, wrapping) or unsigned: x and y are the lanes' values (an
 * unsigned 64-bit one as its bits), and so is *out; lo and hi are Clip's
 * bounds, of the dtype too, or Mod's fmod and BitShift's direction (lo: 0
 * LEFT, 1 RIGHT). */
static bool ref_int(tgc_ew_op id, int64_t x, int64_t y, int64_t lo, int64_t hi, int bits, bool uns, int64_t *out) {
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y, r;
    /* x < y in the dtype's order */
#define LT(a, b) (uns ? (uint64_t)(a) < (uint64_t)(b) : (a) < (b))
    switch (id) {
    case TGC_EW_Relu: r = x < 0 ? 0 : ux; break;
    case TGC_EW_Neg: r = 0 - ux; break;
    case TGC_EW_Abs: r = !uns && x < 0 ? 0 - ux : ux; break;
    case TGC_EW_Clip: r = (uint64_t)(LT(x, lo) ? (LT(hi, lo) ? hi : lo) : LT(hi, x) ? hi : x); break;
    case TGC_EW_Add: r = ux + uy; break;
    case TGC_EW_Sub: r = ux - uy; break;
    case TGC_EW_Mul: r = ux * uy; break;
    case TGC_EW_Div: r = uns ? ux / uy : y == -1 ? 0 - ux : (uint64_t)(x / y); break;
    case TGC_EW_Min: r = (uint64_t)(LT(x, y) ? x : y); break;
    case TGC_EW_Max: r = (uint64_t)(LT(y, x) ? x : y); break;
    case TGC_EW_Equal: r = x == y; break;
    case TGC_EW_Less: r = LT(x, y); break;
    case TGC_EW_LessOrEqual: r = !LT(y, x); break;
    case TGC_EW_Greater: r = LT(y, x); break;
    case TGC_EW_GreaterOrEqual: r = !LT(x, y); break;
    case TGC_EW_And: r = x & y; break;
    case TGC_EW_Or: r = x | y; break;
    case TGC_EW_Xor: r = x ^ y; break;
    case TGC_EW_Not: r = !x; break;
    case TGC_EW_BitShift: r = uy >= (uint64_t)bits ? 0 : lo == 0 ? ux << uy : ux >> uy; break;
    case TGC_EW_Mod:
        if (uns) r = uy == 0 ? 0 : ux % uy;
        else r = (uint64_t)(lo ? (y == 0 || y == -1 ? 0 : x % y) : ref_py_mod(x, y));
        break;
    case TGC_EW_Sign: r = (uint64_t)(!uns && x < 0 ? -1 : x != 0 ? 1 : 0); break;
    case TGC_EW_PRelu: r = !uns && x < 0 ? uy * ux : ux; break;
    default: return false;
    }
#undef LT
    if (bits < 64) {
        uint64_t m = (1ull << bits) - 1;
        r &= m;
        if (!uns && (r >> (bits - 1) & 1)) r |= ~m; /* sign-extend */
    }
    *out = (int64_t)r;
    return true;
}

/* ---- Inputs ------------------------------------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The special floats every row meets. */
static const float specials[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f,
                                 FLT_MIN, -FLT_MIN, 1e-40f, -1e-40f, 1.4e-45f, FLT_MAX, -FLT_MAX, 88.7f,
                                 -87.5f, 89.0f, -104.0f, 20.0f, -20.0f, 9.0f, -9.0f, 3.0f, -3.0f, 1e-8f};

/* n floats: the specials, then random bit patterns (any value) and
 * uniform values in [-12, 12] (where the activations bend), alternating. */
static void float_inputs(float *x, int n) {
    int ns = (int)(sizeof specials / sizeof specials[0]);
    for (int i = 0; i < n; i++) {
        if (i < ns) x[i] = specials[i];
        else if (i % 2) {
            uint32_t b = (uint32_t)next_u64();
            memcpy(&x[i], &b, 4);
        } else {
            x[i] = (float)((double)(next_u64() >> 11) / 9007199254740992.0 * 24.0 - 12.0);
        }
    }
}

/* ---- Comparing ------------------------------------------------------------------------- */

/* Distance in units of the last place of `want` rounded to float. */
static double ulps(double got, double want) {
    float w = (float)want;
    if (!isfinite(w)) w = copysignf(FLT_MAX, w);
    double u = nextafterf(fabsf(w), INFINITY) - fabsf(w);
    if (u < 1.4e-45) u = 1.4e-45;
    return fabs(got - want) / u;
}

/* got (float32 or a float16's value) against the reference: NaN where it
 * is NaN, the same infinity, else within `tol_ulps` ulps of float32 (of
 * float16 when half), or an absolute 1e-6 * max(1, |x|): rows computed
 * as a few float operations lose more than a function's ulps where they
 * cancel (HardSwish near -3, Selu's two products) and differences that
 * small mean nothing to the row's meaning, which is what this checks;
 * each function's own ulp error is bench/bench_ulp's. */
static bool close_enough(double got, double want, double x, bool half, double tol_ulps) {
    if (want != want) return got != got;
    if (isinf(want)) return got == want || (half && fabs(want) > 65504 && isinf(got));
    if (got != got) return false;
    double err = fabs(got - want);
    if (err <= 1e-6 * fmax(1.0, fabs(x))) return true;
    if (half) {
        if (fabs(want) > 65520) return isinf(got) && (got > 0) == (want > 0);
        return err <= fmax(fabs(want) * 0x1p-10, 0x1p-24); /* 1 ulp of float16 (and the subnormal step) */
    }
    return ulps(got, want) <= tol_ulps;
}

/* The most ulps a row may be from the double reference in float32: 4 for
 * one function (SLEEF's u35 is 3.5), more for rows that chain two. */
static double row_tolerance(tgc_ew_op id) {
    switch (id) {
    case TGC_EW_Mish:
    case TGC_EW_Gelu:
    case TGC_EW_Celu:
    case TGC_EW_Selu:
    case TGC_EW_Elu: return 8;
    default: return 4;
    }
}

/* ---- Every row, dtype and ISA against the reference --------------------------------------- */

#define N_VALUES 4096

/* The row's parameters: its defaults, or (alt) other values in range. */
static void row_params(const tgc_ew_row *r, bool alt, tgc_ew_params *p) {
    memset(p, 0, sizeof *p);
    for (int k = 0; k < r->n_attrs; k++) p->f[k] = alt ? r->attr_defaults[k] * 1.5f + 0.25f : r->attr_defaults[k];
    if (tgc_ew_id(r) == TGC_EW_Clip) {
        p->f[0] = alt ? 2.0f : -1.5f;
        p->f[1] = alt ? 1.0f : 0.75f; /* alt: lo > hi, everything becomes hi */
    }
    if (tgc_ew_id(r) == TGC_EW_IsInf && alt) p->f[0] = 0.0f; /* detect_negative 0 */
    if (tgc_ew_id(r) == TGC_EW_Mean) p->f[0] = alt ? 3.0f : 2.0f; /* the divisor, as the kernels set it */
    for (int k = 0; k < TGC_EW_MAX_PARAMS; k++) p->d[k] = p->f[k];
}

/* float64 against the double reference: the absolute slack of
 * close_enough, or 2^-40 relative (libm's functions are within an ulp or
 * two of each other; a row's float literals, HardSwish's 0.16666667f, are
 * float32's and land in the absolute slack). */
static bool close_enough_f64(double got, double want, double x) {
    if (want != want) return got != got;
    if (isinf(want)) return got == want;
    double err = fabs(got - want);
    return err <= 1e-6 * fmax(1.0, fabs(x)) || err <= fabs(want) * 0x1p-40;
}

/* float32, float16, bfloat16 and float64 through loops l (float64 on the
 * same float inputs, in double); returns mismatches (reported). */
static int check_float_row(const tgc_ew_loops *l, const tgc_ew_row *r, tgc_dtype dt, bool alt) {
    tgc_ew_op id = tgc_ew_id(r);
    static float xa[N_VALUES], xb[N_VALUES];
    static uint16_t ha[N_VALUES], hb[N_VALUES];
    static double da[N_VALUES], db[N_VALUES];
    static unsigned char y[N_VALUES * 8];
    float_inputs(xa, N_VALUES);
    float_inputs(xb, N_VALUES);
    /* the second operand: a few rotations of the first, so specials meet specials */
    for (int i = 0; i < N_VALUES; i++)
        if (i % 3 == 0) xb[i] = xa[(i * 7 + 5) % N_VALUES];
    bool half = dt == TGC_FLOAT16, bf16 = dt == TGC_BFLOAT16, f64 = dt == TGC_FLOAT64;
    for (int i = 0; i < N_VALUES && half; i++) {
        ha[i] = tgc_float_to_half(xa[i]);
        hb[i] = tgc_float_to_half(xb[i]);
        xa[i] = tgc_half_to_float(ha[i]);
        xb[i] = tgc_half_to_float(hb[i]);
    }
    for (int i = 0; i < N_VALUES && bf16; i++) {
        ha[i] = tgc_float_to_bf16(xa[i]);
        hb[i] = tgc_float_to_bf16(xb[i]);
        xa[i] = tgc_bf16_to_float(ha[i]);
        xb[i] = tgc_bf16_to_float(hb[i]);
    }
    for (int i = 0; i < N_VALUES; i++) da[i] = xa[i], db[i] = xb[i];
    tgc_ew_params p;
    row_params(r, alt, &p);
    /* odd lengths: every tail of a vector */
    int n = N_VALUES - 3;
    void *in_a = half || bf16 ? (void *)ha : f64 ? (void *)da : (void *)xa;
    void *in_b = half || bf16 ? (void *)hb : f64 ? (void *)db : (void *)xb;
    if (r->arity == 1) l->unary[id][dt](n, in_a, y, &p);
    else l->binary[id][dt](n, in_a, 1, in_b, 1, y, &p);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        double want = 0, got;
        CU_ASSERT_FATAL(ref_float(id, xa[i], xb[i], p.f, &want));
        if (f64 && id == TGC_EW_Mean) want = (xa[i] + (double)xb[i]) / p.f[0]; /* the sum in double */
        if (r->bool_out) {
            got = y[i];
            if (got != want && bad++ < 3)
                fprintf(stderr, "\n  %s %s %s: (%a, %a) gave %g, want %g", l->isa, r->op, tgc_dtype_name(dt),
                        xa[i], xb[i], got, want);
            continue;
        }
        if (f64) {
            memcpy(&got, y + 8 * i, 8);
            if (!close_enough_f64(got, want, xa[i]) && bad++ < 3)
                fprintf(stderr, "\n  %s %s float64%s: x %a, y %a gave %.17g, want %.17g", l->isa, r->op,
                        alt ? " (other parameters)" : "", xa[i], xb[i], got, want);
            continue;
        }
        want = (float)want; /* the float nearest the exact value (overflow: inf) */
        if (bf16) {
            uint16_t h;
            memcpy(&h, y + 2 * i, 2);
            got = tgc_bf16_to_float(h);
            /* one rounding to bfloat16 (8 significant bits): half an ulp,
             * 2^-9 relative, plus the float32 computation's few ulps */
            bool ok = want != want ? got != got
                      : isinf(want)  ? got == want
                                     : fabs(got - want) <= fabs(want) * 0x1p-8 ||
                                          fabs(got - want) <= 1e-6 * fmax(1.0, fabs(xa[i])) ||
                                          (isinf(got) && fabs(want) >= 0x1.fep127);
            if (!ok && bad++ < 3)
                fprintf(stderr, "\n  %s %s bfloat16%s: x %a, y %a gave %.9g, want %.9g", l->isa, r->op,
                        alt ? " (other parameters)" : "", xa[i], xb[i], got, want);
            continue;
        }
        if (half) {
            uint16_t h;
            memcpy(&h, y + 2 * i, 2);
            got = tgc_half_to_float(h);
        } else {
            float f;
            memcpy(&f, y + 4 * i, 4);
            got = f;
        }
        if (!close_enough(got, want, xa[i], half, row_tolerance(id)) && bad++ < 3)
            fprintf(stderr, "\n  %s %s %s%s: x %a (%.9g), y %a gave %.9g, want %.9g", l->isa, r->op,
                    tgc_dtype_name(dt), alt ? " (other parameters)" : "", xa[i], xa[i], xb[i], got, want);
    }
    return bad;
}

/* Every integer dtype and bool (0 or 1) through loops l; alt: the other
 * value of Mod's fmod and BitShift's direction (parameter 0). */
static int check_int_row(const tgc_ew_loops *l, const tgc_ew_row *r, tgc_dtype dt, bool alt) {
    tgc_ew_op id = tgc_ew_id(r);
    size_t es = tgc_dtype_size(dt);
    int bits = (int)es * 8;
    bool uns = dt == TGC_UINT8 || dt == TGC_UINT16 || dt == TGC_UINT32 || dt == TGC_UINT64 || dt == TGC_BOOL;
    static int64_t a[N_VALUES], b[N_VALUES];
    static unsigned char pa[N_VALUES * 8], pb[N_VALUES * 8], y[N_VALUES * 8];
    const int64_t edges[] = {0, 1, -1, 2, -2, 7, 100, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, 255, 128};
    /* a value as the dtype's lanes hold it: the low bits, sign- or zero-extended */
    uint64_t m = bits == 64 ? ~0ull : (1ull << bits) - 1;
#define FIT(v) ((int64_t)(uns || bits == 64 || !(((uint64_t)(v) & m) >> (bits - 1) & 1) ? (uint64_t)(v) & m \
                                                                                   : ((uint64_t)(v) & m) | ~m))
    for (int i = 0; i < N_VALUES; i++) {
        a[i] = i < 13 ? edges[i] : (int64_t)next_u64() >> (next_u64() % 64);
        b[i] = i < 13 ? edges[(i * 5 + 3) % 13] : (int64_t)next_u64() >> (next_u64() % 64);
        if (i % 5 == 0) b[i] = a[i];
        if (dt == TGC_BOOL) a[i] &= 1, b[i] &= 1;
        a[i] = FIT(a[i]), b[i] = FIT(b[i]);
        if (id == TGC_EW_Div && b[i] == 0) b[i] = 3;
        if (id == TGC_EW_BitShift) b[i] = i % 11; /* counts 0..10: past uint8's width too */
        if (id == TGC_EW_Mod && i % 7 == 1) b[i] = 0; /* x mod 0 is 0 */
        memcpy(pa + (size_t)i * es, &a[i], es); /* little-endian: the low bytes */
        memcpy(pb + (size_t)i * es, &b[i], es);
    }
    /* Clip's bounds, of the dtype */
    tgc_ew_params p = {.i = {-1000, 1000000}};
    if (bits == 8) p.i[0] = uns ? 3 : -100, p.i[1] = uns ? 200 : 100;
    else if (bits == 16) p.i[0] = uns ? 3 : -1000, p.i[1] = uns ? 60000 : 30000;
    else if (uns) p.i[0] = 3, p.i[1] = 1000000;
    if (r->n_attrs > 0) p.i[0] = alt, p.i[1] = 0; /* Mod's fmod, BitShift's direction */
    int n = N_VALUES - 5;
    if (r->arity == 1) l->unary[id][dt](n, pa, y, &p);
    else l->binary[id][dt](n, pa, 1, pb, 1, y, &p);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int64_t want = 0, got = 0;
        CU_ASSERT_FATAL(ref_int(id, a[i], b[i], p.i[0], p.i[1], bits, uns, &want));
        if (r->bool_out) got = y[i];
        else {
            memcpy(&got, y + es * i, es);
            got = FIT(got);
        }
        if (got != want && bad++ < 3)
            fprintf(stderr, "\n  %s %s %s: (%lld, %lld) gave %lld, want %lld", l->isa, r->op, tgc_dtype_name(dt),
                    (long long)a[i], (long long)b[i], (long long)got, (long long)want);
    }
#undef FIT
    return bad;
}

static void test_rows_against_reference(void) {
    int n_isas;
    const tgc_ew_loops *const *isas = tgc_cpu_ew_all_loops(&n_isas);
    CU_ASSERT_FATAL(n_isas >= 1);
    int checked = 0;
    for (int k = 0; k < n_isas; k++) {
        for (int id = 0; id < TGC_EW_COUNT; id++) {
            const tgc_ew_row *r = &tgc_ew_rows[id];
            double probe;
            if (!ref_float((tgc_ew_op)id, 1, 1, (float[3]){1, 1, 1}, &probe)) {
                fprintf(stderr, "\n  row %s has no reference in this test\n", r->op);
                CU_FAIL("a row without a reference");
                continue;
            }
            for (int dt = 0; dt < TGC_DTYPE_COUNT; dt++) {
                bool has = r->dtypes >> dt & 1u;
                void *fn = r->arity == 1 ? (void *)isas[k]->unary[id][dt] : (void *)isas[k]->binary[id][dt];
                CU_ASSERT_EQUAL(fn != NULL, has); /* exactly the row's class */
                if (!has || fn == NULL) continue;
                int bad;
                if (dt == TGC_FLOAT32 || dt == TGC_FLOAT16 || dt == TGC_BFLOAT16 || dt == TGC_FLOAT64)
                    bad = check_float_row(isas[k], r, (tgc_dtype)dt, false) +
                          (r->n_attrs > 0 || id == TGC_EW_Clip || id == TGC_EW_Mean
                               ? check_float_row(isas[k], r, (tgc_dtype)dt, true)
                               : 0);
                else bad = check_int_row(isas[k], r, (tgc_dtype)dt, false) +
                           (r->n_attrs > 0 ? check_int_row(isas[k], r, (tgc_dtype)dt, true) : 0);
                CU_ASSERT_EQUAL(bad, 0);
                checked++;
            }
        }
    }
    printf("\n  %d (row, dtype, ISA) loops checked over %d ISAs (widest %s)\n", checked, n_isas,
           isas[n_isas - 1]->isa);
}

/* ---- float16 conversions (Cast) -------------------------------------------------------- */

/* Every float16 to float32 and back, and a float32 sample to float16,
 * through each ISA's conversions against support/half.h's (round to
 * nearest even): the same values, NaN for NaN. */
static void test_half_conversions(void) {
    int n_isas;
    const tgc_ew_loops *const *isas = tgc_cpu_ew_all_loops(&n_isas);
    static uint16_t h[65536], h2[N_VALUES];
    static float f[65536], g[N_VALUES];
    for (int i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    float_inputs(g, N_VALUES);
    for (int i = 0; i < N_VALUES / 2; i++) /* halfway cases and values near float16's range */
        g[i] = tgc_half_to_float((uint16_t)next_u64()) * (1.0f + (float)(i % 3) * 0x1p-11f);
    for (int k = 0; k < n_isas; k++) {
        int bad = 0;
        isas[k]->half_to_float(65536 - 1, h, f);
        for (int i = 0; i < 65536 - 1; i++) {
            float want = tgc_half_to_float(h[i]);
            if (!(want == f[i] ? signbit(want) == signbit(f[i]) : want != want && f[i] != f[i]) && bad++ < 3)
                fprintf(stderr, "\n  %s half_to_float(0x%04x) = %a, want %a", isas[k]->isa, h[i], f[i], want);
        }
        isas[k]->float_to_half(N_VALUES - 1, g, h2);
        for (int i = 0; i < N_VALUES - 1; i++) {
            uint16_t want = tgc_float_to_half(g[i]);
            bool nan = (want & 0x7c00) == 0x7c00 && (want & 0x3ff);
            bool got_nan = (h2[i] & 0x7c00) == 0x7c00 && (h2[i] & 0x3ff);
            if (!(nan ? got_nan : h2[i] == want) && bad++ < 3)
                fprintf(stderr, "\n  %s float_to_half(%a) = 0x%04x, want 0x%04x", isas[k]->isa, g[i], h2[i], want);
        }
        CU_ASSERT_EQUAL(bad, 0);
    }
}

/* Each ISA's matrix-vector product on half-precision weights (float16 and
 * bfloat16) against a scalar loop written here: per column a running sum
 * over k in order, a product then a sum (float32, no FMA), of x and the
 * weight widened by support/half.h; bit for bit, for widths around the
 * vector blocks (1 to 8 vectors of 4 to 16 lanes and a ragged tail), a
 * row stride past the width, values of every magnitude. */
static void test_gemv_half_weight(void) {
    int n_isas;
    const tgc_ew_loops *const *isas = tgc_cpu_ew_all_loops(&n_isas);
    enum { K = 37, LD = 301 };
    static uint16_t w[K * LD];
    static float x[K], got[LD], want[LD];
    const int widths[] = {1, 3, 16, 17, 64, 127, 128, 129, 200, 300};
    for (int i = 0; i < K; i++) x[i] = tgc_half_to_float((uint16_t)(next_u64() & 0x7bff)) * (i % 2 ? -1.0f : 1.0f);
    for (int bf = 0; bf < 2; bf++) {
        for (int i = 0; i < K * LD; i++) {
            uint16_t r = (uint16_t)next_u64();
            w[i] = bf ? (uint16_t)(r & 0xbf7f) : (uint16_t)(r & 0xfbff); /* finite values */
        }
        for (size_t c = 0; c < sizeof widths / sizeof widths[0]; c++) {
            int n = widths[c];
            for (int j = 0; j < n; j++) {
                float d = 0.0f;
                for (int k = 0; k < K; k++) {
                    float wv = bf ? tgc_bf16_to_float(w[k * LD + j]) : tgc_half_to_float(w[k * LD + j]);
                    float p = x[k] * wv;
                    d = d + p;
                }
                want[j] = d;
            }
            for (int k = 0; k < n_isas; k++) {
                memset(got, 0, sizeof got);
                (bf ? isas[k]->gemv_bf16 : isas[k]->gemv_half)(n, K, w, LD, x, got);
                int bad = 0;
                for (int j = 0; j < n; j++)
                    if (memcmp(&got[j], &want[j], sizeof(float)) != 0 && bad++ < 3)
                        fprintf(stderr, "\n  %s %s n %d column %d: %a, want %a", isas[k]->isa, bf ? "bf16" : "f16", n,
                                j, got[j], want[j]);
                CU_ASSERT_EQUAL(bad, 0);
                CU_ASSERT_EQUAL(got[n], 0.0f); /* nothing past the width */
            }
        }
    }
}

/* Each ISA's dot form on half-precision rows against the arithmetic
 * written out here: per row, 16 running sums (lane l takes k = l mod 16
 * within the whole blocks of 16), added ((l0 + l8) + (l4 + l12)) + ...,
 * then the tail of k in order, plus beta y; bit for bit, for row counts
 * around the blocks of 4 and lengths around the blocks of 16, rows read one
 * a pass (short) and four a pass (8193: past 16 KiB, TGC_GEMV_ROWS_A_PASS). */
static void test_gemv_dot_half_weight(void) {
    int n_isas;
    const tgc_ew_loops *const *isas = tgc_cpu_ew_all_loops(&n_isas);
    enum { N = 11, LD = 8200 };
    static uint16_t w[N * LD];
    static float x[LD], y0[N], got[N], want[N];
    const int lengths[] = {1, 15, 16, 17, 48, 70, 8193};
    CU_ASSERT_EQUAL(TGC_GEMV_ROWS_A_PASS(70 * 2), 1); /* both ways of reading the rows are run */
    CU_ASSERT_EQUAL(TGC_GEMV_ROWS_A_PASS(8193 * 2), 4);
    for (int i = 0; i < LD; i++) x[i] = tgc_half_to_float((uint16_t)(next_u64() & 0x7bff)) * (i % 3 ? 1.0f : -0.5f);
    for (int i = 0; i < N; i++) y0[i] = (float)i - 4.5f;
    for (int bf = 0; bf < 2; bf++) {
        for (int i = 0; i < N * LD; i++) {
            uint16_t r = (uint16_t)next_u64();
            w[i] = bf ? (uint16_t)(r & 0xbf7f) : (uint16_t)(r & 0xfbff);
        }
        for (size_t c = 0; c < sizeof lengths / sizeof lengths[0]; c++)
            for (int rows = 1; rows <= N; rows += 3)
                for (int with_beta = 0; with_beta < 2; with_beta++) {
                    int k = lengths[c];
                    float beta = with_beta ? 0.5f : 0.0f;
                    for (int j = 0; j < rows; j++) {
                        float lane[16] = {0}, s8[8], s4[4];
                        int kk = 0;
                        for (; kk + 16 <= k; kk += 16)
                            for (int l = 0; l < 16; l++) {
                                uint16_t h = w[j * LD + kk + l];
                                float wv = bf ? tgc_bf16_to_float(h) : tgc_half_to_float(h);
                                float p = wv * x[kk + l];
                                lane[l] = lane[l] + p;
                            }
                        for (int l = 0; l < 8; l++) s8[l] = lane[l] + lane[l + 8];
                        for (int l = 0; l < 4; l++) s4[l] = s8[l] + s8[l + 4];
                        float d = (s4[0] + s4[2]) + (s4[1] + s4[3]);
                        for (; kk < k; kk++) {
                            float wv = bf ? tgc_bf16_to_float(w[j * LD + kk]) : tgc_half_to_float(w[j * LD + kk]);
                            float p = wv * x[kk];
                            d = d + p;
                        }
                        float bp = beta * y0[j];
                        want[j] = with_beta ? d + bp : d;
                    }
                    for (int i = 0; i < n_isas; i++) {
                        memcpy(got, y0, sizeof got);
                        (bf ? isas[i]->gemv_dot_bf16 : isas[i]->gemv_dot_half)(rows, k, w, LD, x, beta, got);
                        int bad = 0;
                        for (int j = 0; j < rows; j++)
                            if (memcmp(&got[j], &want[j], sizeof(float)) != 0 && bad++ < 3)
                                fprintf(stderr, "\n  %s dot %s rows %d k %d: row %d %a, want %a", isas[i]->isa,
                                        bf ? "bf16" : "f16", rows, k, j, got[j], want[j]);
                        CU_ASSERT_EQUAL(bad, 0);
                        if (rows < N) CU_ASSERT_EQUAL(got[rows], y0[rows]); /* rows past n untouched */
                    }
                }
    }
}

/* ---- The ISA choice ------------------------------------------------------------------- */

static void test_isa_choice(void) {
    int n;
    const tgc_ew_loops *const *isas = tgc_cpu_ew_all_loops(&n);
    const tgc_ew_loops *l = tgc_cpu_ew_loops();
    const char *cap = getenv("TGC_CPU_ISA");
    bool capped = false;
    for (int i = 0; cap != NULL && i < n; i++) capped = capped || strcmp(cap, isas[i]->isa) == 0;
    /* the widest this cpu runs, unless TGC_CPU_ISA names a narrower one */
    CU_ASSERT_STRING_EQUAL(l->isa, capped ? cap : isas[n - 1]->isa);
    CU_ASSERT_STRING_EQUAL(isas[0]->isa, "sse2");
    CU_ASSERT_EQUAL(isas[0]->lanes, 4);
    for (int i = 1; i < n; i++) CU_ASSERT_EQUAL(isas[i]->lanes, isas[i - 1]->lanes * 2);
    printf("\n  loops in use: %s (%d float lanes)%s\n", l->isa, l->lanes, capped ? ", capped by TGC_CPU_ISA" : "");
}

/* ---- cpu against gpu0, every row and dtype the gpu has ---------------------------------------- */

/* Where a row's random inputs are drawn from (floats): the domain where
 * both devices are defined and well conditioned. */
static void row_domain(tgc_ew_op id, int input, double *lo, double *hi) {
    *lo = -4;
    *hi = 4;
    switch (id) {
    case TGC_EW_Log:
    case TGC_EW_Sqrt: *lo = 0.01, *hi = 8; break;
    case TGC_EW_Acosh: *lo = 1, *hi = 8; break;
    case TGC_EW_Asin:
    case TGC_EW_Acos:
    case TGC_EW_Atanh: *lo = -0.99, *hi = 0.99; break;
    case TGC_EW_Tan: *lo = -1.4, *hi = 1.4; break;
    case TGC_EW_Pow:
        if (input == 0) *lo = 0.1, *hi = 3;
        else *lo = -3, *hi = 3;
        break;
    case TGC_EW_Div:
    case TGC_EW_Reciprocal:
        if (input == 1 || id == TGC_EW_Reciprocal) *lo = 0.25, *hi = 4;
        break;
    default: break;
    }
}

static void test_rows_cpu_vs_gpu(void) {
    gk_dev d;
    if (!gk_open(&d)) return;
    int cases = 0;
    const int64_t dims[2] = {3, 67}, bdims[1] = {67};
    for (int id = 0; id < TGC_EW_COUNT; id++) {
        const tgc_ew_row *r = &tgc_ew_rows[id];
        for (int dt = 0; dt < TGC_DTYPE_COUNT; dt++) {
            if (!(r->dtypes >> dt & 1u) || gk_gpu_find(r->op, (tgc_dtype)dt) == NULL) continue;
            for (int bcast = 0; bcast < (r->arity == 2 ? 2 : 1); bcast++) {
                gk_case k;
                gk_begin(&k, &d, r->op);
                k.tol = dt == TGC_FLOAT16 ? 2e-3 : 1e-5;
                for (int i = 0; i < r->arity; i++) {
                    double lo, hi;
                    row_domain((tgc_ew_op)id, i, &lo, &hi);
                    bool ints = dt != TGC_FLOAT32 && dt != TGC_FLOAT16;
                    if (ints && id == TGC_EW_Div && i == 1) lo = 1, hi = 50;
                    else if (ints) lo = -100, hi = 100;
                    if (dt == TGC_BOOL) lo = 0, hi = 1;
                    bool second_bcast = bcast && i == 1;
                    gk_in_range(&k, (tgc_dtype)dt, second_bcast ? 1 : 2, second_bcast ? bdims : dims, lo, hi);
                }
                if (id == TGC_EW_Clip) {
                    const int64_t one = 1;
                    double lo = -0.5, hi = 1.5;
                    gk_in_range(&k, (tgc_dtype)dt, 0, &one, lo, lo);
                    gk_in_range(&k, (tgc_dtype)dt, 0, &one, hi, hi);
                }
                for (int a = 0; a < r->n_attrs; a++) {
                    if (r->attr_kinds[a] == TGC_EW_ATTR_FLOAT)
                        gk_attr(&k, GK_FLOAT(r->attr_names[a], r->attr_defaults[a] * 1.25f));
                    else if (id == TGC_EW_Mod) /* fmod: 1 for floats (required), 0 for integers */
                        gk_attr(&k, GK_INT(r->attr_names[a], dt == TGC_FLOAT32 || dt == TGC_FLOAT16));
                    else if (r->attr_kinds[a] == TGC_EW_ATTR_INT) /* IsInf: detect one sign only */
                        gk_attr(&k, GK_INT(r->attr_names[a], a == 0));
                    else if (id == TGC_EW_Gelu) /* the default is checked on the cpu's side */
                        gk_attr(&k, GK_STRING(r->attr_names[a], "tanh"));
                    else
                        CU_FAIL("a gpu row with a word attribute: give it a value here");
                }
                gk_out(&k, r->bool_out ? TGC_BOOL : (tgc_dtype)dt, 2, dims);
                gk_run(&k);
                gk_end(&k);
                cases++;
            }
        }
    }
    /* Pow's float base with an integer exponent (not a row): float32 and
     * float16 bases, int32 and int64 exponents, equal and broadcast shapes. */
    const tgc_dtype bases[2] = {TGC_FLOAT32, TGC_FLOAT16}, exps[2] = {TGC_INT32, TGC_INT64};
    for (int bi = 0; bi < 2; bi++)
        for (int ei = 0; ei < 2; ei++)
            for (int bcast = 0; bcast < 2; bcast++) {
                gk_case k;
                gk_begin(&k, &d, "Pow");
                k.tol = bases[bi] == TGC_FLOAT16 ? 2e-3 : 1e-5;
                gk_in_range(&k, bases[bi], 2, dims, -2, 2);
                gk_in_range(&k, exps[ei], bcast ? 1 : 2, bcast ? bdims : dims, -3, 3);
                gk_out(&k, bases[bi], 2, dims);
                gk_run(&k);
                gk_end(&k);
                cases++;
            }
    printf("\n  %d (row, dtype, broadcast) cases: cpu and gpu0 agree\n", cases);
    gk_close(&d);
}

TGC_TEST_MAIN("ew_rows",
              {"rows against reference", test_rows_against_reference},
              {"half conversions", test_half_conversions},
              {"matrix-vector products on half-precision weights", test_gemv_half_weight},
              {"the dot form on half-precision rows", test_gemv_dot_half_weight},
              {"isa choice", test_isa_choice},
              {"rows cpu vs gpu", test_rows_cpu_vs_gpu})
