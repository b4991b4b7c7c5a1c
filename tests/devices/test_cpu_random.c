/* The cpu random kernels (devices/cpu/kernels_random.c, mt19937.c) and
 * BatchNormalization's training mode (kernels_batch_norm_train.c), called
 * directly. A seeded node must give what ONNX's reference gives, which is
 * numpy's RandomState(seed) (the expressions beside the constants); the
 * same on every run; and an unseeded node different values run to run. */
#include "devices/cpu/mt19937.h"
#include "tests/devices/kernel_fixture_shape.h"

#include <math.h>
#include <stdint.h>

static void expect_close(shape_fx *f, int i, const float *want, int64_t n, double rtol) {
    const float *got = tgc_buffer_host_ptr(f->out[i].buf);
    int bad = 0;
    for (int64_t k = 0; k < n; k++)
        if (!(fabs((double)got[k] - want[k]) <= 1e-7 + rtol * fabs((double)want[k]))) {
            if (bad++ < 3) fprintf(stderr, "\n  %s: element %lld is %.9g, want %.9g\n", f->op, (long long)k, got[k], want[k]);
        }
    CU_ASSERT_EQUAL(bad, 0);
}

static tgc_attr float_attr(const char *name, double v) {
    return (tgc_attr){.name = (char *)name, .type = TGC_ATTR_FLOAT, .f = v};
}

/* MT19937 as numpy: RandomState(0).rand() == 0.5488135039273248 and
 * RandomState(5489).randint(0, 2**32) draws the reference generator's
 * first output 3499211612 (mt19937ar.c's default seed). */
static void test_mt19937_matches_numpy(void) {
    tgc_mt19937 g;
    tgc_mt19937_seed(&g, 0);
    CU_ASSERT_DOUBLE_EQUAL(tgc_mt19937_double(&g), 0.5488135039273248, 0);
    tgc_mt19937_seed(&g, 5489);
    CU_ASSERT_EQUAL(tgc_mt19937_next32(&g), 3499211612u);
}

/* RandomUniform seed 3, shape [2, 3], low -1, high 5:
 * r = RandomState(3).rand(2, 3).astype(np.float32); r *= 6.0; r += -1.0. */
static void test_random_uniform_seeded(void) {
    static const float want[6] = {2.3047871589660645f, 3.248887062072754f, 0.7454283237457275f,
                                  2.0649657249450684f, 4.357681751251221f, 4.377758502960205f};
    for (int run = 0; run < 2; run++) { /* the same values each run */
        shape_fx f;
        fx_begin(&f, "RandomUniform");
        fx_attr(&f, float_attr("seed", 3));
        fx_attr(&f, float_attr("low", -1));
        fx_attr(&f, float_attr("high", 5));
        fx_attr_ints(&f, "shape", 2, (int64_t[]){2, 3});
        fx_out(&f, TGC_FLOAT32, 2, (int64_t[]){2, 3});
        fx_run_ok(&f);
        expect_close(&f, 0, want, 6, 1e-7);
        fx_end(&f);
    }
}

/* RandomNormalLike seed 5 over a [5] int64 input, mean 10, scale 2:
 * r = RandomState(5).randn(5).astype(np.float32); r *= 2.0; r += 10.0. */
static void test_random_normal_like_seeded(void) {
    static const float want[5] = {10.882454872131348f, 9.33825969696045f, 14.861541748046875f, 9.49581527709961f,
                                  10.219219207763672f};
    shape_fx f;
    fx_begin(&f, "RandomNormalLike");
    fx_in(&f, TGC_INT64, 1, (int64_t[]){5}, (int64_t[]){0, 0, 0, 0, 0});
    fx_attr(&f, float_attr("seed", 5));
    fx_attr(&f, float_attr("mean", 10));
    fx_attr(&f, float_attr("scale", 2));
    fx_out(&f, TGC_FLOAT32, 1, (int64_t[]){5});
    fx_run_ok(&f);
    expect_close(&f, 0, want, 5, 1e-6);
    fx_end(&f);
}

/* Without a seed two runs differ (64 uniforms agreeing would be chance). */
static void test_unseeded_runs_differ(void) {
    float first[64];
    for (int run = 0; run < 2; run++) {
        shape_fx f;
        fx_begin(&f, "RandomUniform");
        fx_attr_ints(&f, "shape", 1, (int64_t[]){64});
        fx_out(&f, TGC_FLOAT32, 1, (int64_t[]){64});
        fx_run_ok(&f);
        const float *got = tgc_buffer_host_ptr(f.out[0].buf);
        if (run == 0) memcpy(first, got, sizeof first);
        else CU_ASSERT(memcmp(first, got, sizeof first) != 0);
        for (int i = 0; i < 64; i++) CU_ASSERT(got[i] >= 0 && got[i] < 1);
        fx_end(&f);
    }
}

/* Bernoulli seed 7: RandomState(7).binomial(1, p) for p [0, .2, .5, .7,
 * 1, .9, .1, .35] (p == 0 draws too: numpy's legacy binomial), as float32. */
static void test_bernoulli_seeded(void) {
    shape_fx f;
    fx_begin(&f, "Bernoulli");
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){8}, (float[]){0.0f, 0.2f, 0.5f, 0.7f, 1.0f, 0.9f, 0.1f, 0.35f});
    fx_attr(&f, float_attr("seed", 7));
    fx_out_expect(&f, TGC_FLOAT32, 1, (int64_t[]){8}, (float[]){0, 0, 0, 0, 1, 1, 0, 0});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

static void test_bernoulli_bad_probability_fails(void) {
    shape_fx f;
    fx_begin(&f, "Bernoulli");
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){2}, (float[]){0.5f, 1.5f});
    fx_out(&f, TGC_FLOAT32, 1, (int64_t[]){2});
    fx_run_fails(&f, "outside [0, 1]");
    fx_end(&f);
}

/* Multinomial: a row whose other logits are -inf always samples its one
 * finite class; samples of a uniform row are all valid classes. */
static void test_multinomial(void) {
    shape_fx f;
    fx_begin(&f, "Multinomial");
    fx_in(&f, TGC_FLOAT32, 2, (int64_t[]){2, 3}, (float[]){-INFINITY, 0.0f, -INFINITY, 1.0f, 1.0f, 1.0f});
    fx_attr_int(&f, "sample_size", 50);
    fx_attr(&f, float_attr("seed", 1));
    fx_out(&f, TGC_INT32, 2, (int64_t[]){2, 50});
    fx_run_ok(&f);
    const int32_t *got = tgc_buffer_host_ptr(f.out[0].buf);
    bool seen[3] = {false, false, false};
    for (int s = 0; s < 50; s++) {
        CU_ASSERT_EQUAL(got[s], 1);
        CU_ASSERT(got[50 + s] >= 0 && got[50 + s] < 3);
        if (got[50 + s] >= 0 && got[50 + s] < 3) seen[got[50 + s]] = true;
    }
    CU_ASSERT(seen[0] && seen[1] && seen[2]);
    fx_end(&f);
}

/* Dropout in inference: the data passes, the mask is all true. */
static void test_dropout_inference_mask(void) {
    shape_fx f;
    fx_begin(&f, "Dropout");
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){1, -2, 3});
    fx_in(&f, TGC_FLOAT32, 0, NULL, (float[]){0.5f});
    fx_in(&f, TGC_BOOL, 0, NULL, (uint8_t[]){0});
    fx_out_expect(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){1, -2, 3});
    fx_out_expect(&f, TGC_BOOL, 1, (int64_t[]){3}, (uint8_t[]){1, 1, 1});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* Dropout training, ratio 0.5, seed 2: mask = RandomState(2).uniform(0, 1,
 * 6) >= 0.5 with u = RandomState(2).uniform(0, 1, 6) = [0.4360, 0.0259,
 * 0.5497, 0.4353, 0.4204, 0.3303]; y = mask * x * 2. */
static void test_dropout_training_seeded(void) {
    shape_fx f;
    fx_begin(&f, "Dropout");
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){6}, (float[]){1, 2, 3, 4, 5, 6});
    fx_in(&f, TGC_FLOAT32, 0, NULL, (float[]){0.5f});
    fx_in(&f, TGC_BOOL, 0, NULL, (uint8_t[]){1});
    fx_attr_int(&f, "seed", 2);
    fx_out_expect(&f, TGC_FLOAT32, 1, (int64_t[]){6}, (float[]){0, 0, 6, 0, 0, 0});
    fx_out_expect(&f, TGC_BOOL, 1, (int64_t[]){6}, (uint8_t[]){0, 0, 1, 0, 0, 0});
    fx_run_ok(&f);
    fx_check(&f);
    fx_end(&f);
}

/* BatchNormalization training_mode 1, epsilon 1e-3, momentum 0.8, X [2, 3, 2]:
 * sm = x.mean((0, 2)); sv = x.var((0, 2)); y = s * (x - sm) / sqrt(sv + eps) + b;
 * running = mean * 0.8 + sm * 0.2, var * 0.8 + sv * 0.2 (numpy, float32). */
static void test_batch_norm_training(void) {
    static const float y[12] = {-0.43430814146995544f, -1.0469331741333008f, -0.26998114585876465f,
                                -1.5014225244522095f,  0.09091350436210632f, 1.0527732372283936f,
                                0.23982739448547363f,  1.6414140462875366f,  -2.0897462368011475f,
                                3.061150550842285f,    0.37509167194366455f, -0.31877827644348145f};
    static const float rm[3] = {0.396133691072464f, -0.22196263074874878f, 0.7931120991706848f};
    static const float rv[3] = {1.0251758098602295f, 1.6334283351898193f, 0.583267867565155f};
    shape_fx f;
    fx_begin(&f, "BatchNormalization");
    fx_in(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 2},
          (float[]){-0.5865239500999451f, -1.2368533611297607f, 0.8758389353752136f, 0.6233621835708618f,
                    -0.4349566698074341f, 1.407539963722229f, 0.12910157442092896f, 1.6169495582580566f,
                    0.5027408599853516f, 1.5588055849075317f, 0.10940269380807877f, -1.2197444438934326f});
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){1.0f, 2.0f, 0.5f});
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){0.1f, -0.2f, 0.3f});
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){0.5f, -0.5f, 1.0f});
    fx_in(&f, TGC_FLOAT32, 1, (int64_t[]){3}, (float[]){1.0f, 2.0f, 0.5f});
    fx_attr_int(&f, "training_mode", 1);
    fx_attr(&f, float_attr("epsilon", 1e-3));
    fx_attr(&f, float_attr("momentum", 0.8));
    fx_out(&f, TGC_FLOAT32, 3, (int64_t[]){2, 3, 2});
    fx_out(&f, TGC_FLOAT32, 1, (int64_t[]){3});
    fx_out(&f, TGC_FLOAT32, 1, (int64_t[]){3});
    fx_run_ok(&f);
    expect_close(&f, 0, y, 12, 1e-5);
    expect_close(&f, 1, rm, 3, 1e-6);
    expect_close(&f, 2, rv, 3, 1e-6);
    fx_end(&f);
}

TGC_TEST_MAIN("devices/cpu_random", {"MT19937 matches numpy", test_mt19937_matches_numpy},
              {"RandomUniform seeded", test_random_uniform_seeded},
              {"RandomNormalLike seeded", test_random_normal_like_seeded},
              {"unseeded runs differ", test_unseeded_runs_differ}, {"Bernoulli seeded", test_bernoulli_seeded},
              {"Bernoulli bad probability", test_bernoulli_bad_probability_fails}, {"Multinomial", test_multinomial},
              {"Dropout inference mask", test_dropout_inference_mask},
              {"Dropout training seeded", test_dropout_training_seeded},
              {"BatchNormalization training", test_batch_norm_training})
