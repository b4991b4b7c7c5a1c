/* tgc run: compile a graph for a device list and run it on .npy inputs. */
#include "tools/cli.h"
#include "support/dtype_elem.h"
#include "tools/run_inputs.h"
#include "tools/run_stream.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char run_usage[] =
    "usage: tgc run MODEL.yaml [--devices LIST] [--input NAME=FILE.npy]... [--output-dir DIR] [--weights-dir DIR]\n"
    "               [--load-limits LIST]\n"
    "               [--repeat N] [--threads DEV=N,...] [--soft-placement] [--trace FILE.json]\n"
    "               [--compare NAME=REF.npy] [--tolerance T] [--labels LABELS.npy]\n"
    "               [--memory-limit DEV=SIZE,...] [--memory-report] [--optimize 0|1|2]\n"
    "               [--max-iterations N] [--inflight K] [--input-dir DIR] [--peer-timeout SECONDS]\n"
    "               [--placement rules|auto] [--tune] [--float16]\n"
    "\n"
    "Runs the graph and prints, per output, its shape, dtype and min/max/mean, and the\n"
    "wall time per run.\n"
    "MODEL may also be an ONNX model (.onnx), read straight into memory (no files are\n"
    "written: the graph tgc import would write, with its names).\n"
    "\n"
    "  --devices LIST        comma-separated devices: cpu, cpuN, gpu, gpuN (default: cpu);\n"
    "                        the graph is placed and split across them (docs/placement.md);\n"
    "                        /task:N/cpu0 is a device of MPI rank N: under mpirun every rank\n"
    "                        runs its own partitions, rank 0 reads the inputs and writes\n"
    "                        the outputs (docs/distributed.md)\n"
    "  --peer-timeout S      with devices of other ranks: fail (exit 1) when a rank sends\n"
    "                        nothing for S seconds, as when it died or stopped (default 60)\n"
    "  --threads DEV=N,...   worker threads per device (default: a cpu one per core, a gpu 1)\n"
    "  --soft-placement      relax device specs that name unlisted devices, with a warning\n"
    "  --optimize 0|1|2      the optimization passes run before placement (docs/passes.md):\n"
    "                        0 none, 1 basic, 2 all (the default)\n"
    "  --float16             compute in float16 what a listed gpu has float16 kernels for\n"
    "                        (weights held in float16; inputs and outputs keep their dtypes;\n"
    "                        results within float16 rounding: compare with --tolerance 1e-2)\n"
    "  --trace FILE          write a Chrome trace (Perfetto, chrome://tracing) of the runs\n"
    "  --memory-limit DEV=SIZE,...  cap a device's memory, e.g. gpu0=64MiB,cpu=512KiB (SIZE:\n"
    "                        bytes, or B/KB/MB/GB powers of 1000, KiB/MiB/GiB powers of 1024);\n"
    "                        going past it fails the run (exit 1) naming the node and tensor;\n"
    "                        a kernel run takes at most a sixteenth of it as workspace\n"
    "  --memory-report       print each device's memory after the runs: peak, in use at the\n"
    "                        end, reserved, allocations, fragmentation, the tensors live at\n"
    "                        the peak, and the static plan's prediction beside one step's\n"
    "                        measured peak (equal on a device of one thread)\n"
    "  --input NAME=FILE     feed graph input NAME from a .npy file (dtype and shape are\n"
    "                        checked against the declaration; symbols are bound); NAME is the\n"
    "                        model's own (an ONNX input's, as written: onnx::Flatten_0) or tgc's\n"
    "  --output-dir DIR      write each graph output as DIR/NAME.npy (atomically: a new\n"
    "                        temporary file renamed into place, never written through a link);\n"
    "                        NAME is the output's name with each byte outside [A-Za-z0-9_.-]\n"
    "                        (and a leading '.') written %XX: onnx::Flatten_0 -> onnx%3A%3AFlatten_0;\n"
    "                        past 200 bytes, the first 191, '~' and an 8-digit hash\n"
    "                        a sequence element by element (NAME_0.npy, ...), an optional as\n"
    "                        what it holds\n"
    "  --placement MODE      rules (the default): nodes without a device spec go to the first\n"
    "                        listed device of the best kind; auto: split over the listed devices\n"
    "                        where the graph runs fastest under each one's memory (--memory-limit,\n"
    "                        else what it has, less 5%), for one step's latency, or with\n"
    "                        --inflight K for throughput (docs/placement.md)\n"
    "  --tune                a gpu's Conv, MatMul and Gemm layers whose shapes have no tuned tile\n"
    "                        yet run at each tile in this run, timed on the device, and the\n"
    "                        faster is kept for the device and driver in the cache folder and\n"
    "                        taken by every later run (TGC_GPU_TUNE=1; docs/devices.md)\n"
    "  --inflight K          run up to K steps at once on the session (default 1): with --repeat\n"
    "                        or --input-dir the steps stream through it, so a graph split over\n"
    "                        devices overlaps its stages; prints steps/s and latencies\n"
    "                        (docs/pipelines.md)\n"
    "  --input-dir DIR       one step per entry of DIR, in the byte order of the names: a folder\n"
    "                        of NAME.npy per graph input not given by --input, or a file\n"
    "                        STEM.npy for the one such input; with --output-dir, step STEM's\n"
    "                        outputs go to OUTPUT_DIR/STEM/NAME.npy, written in order\n"
    "  --max-iterations N    stop with an error (exit 1) a Loop, Scan or SequenceMap that would\n"
    "                        run more than N iterations (default: no limit)\n"
    "  --weights-dir DIR     the folder the graph's `file:` weights resolve beneath (for\n"
    "                        weights shared by several graphs); default: the graph's folder.\n"
    "                        Either way a path may not leave it (absolute, '..', a symlink out)\n"
"  --load-limits LIST    what the model may ask for (untrusted input): file=SIZE (the model file,\n"
    "                        default 2GiB), nodes=N (1000000), rank=R (8), tensor=SIZE (one tensor's\n"
    "                        bytes, 64GiB), e.g. file=100MB,tensor=1GiB; past one is an error\n"
    "  --repeat N            run N times (default 1) and report the median time\n"
    "  --compare NAME=FILE   print the largest |output - reference| of output NAME (as printed\n"
    "                        above: an ONNX output's own name); exit 1 above --tolerance\n"
    "                        (string outputs: exit 1 unless every string is equal)\n"
    "  --tolerance T         for --compare (default 1e-4)\n"
    "  --labels FILE         int64 class labels: print the accuracy of the argmax of the\n"
    "                        first output along its last axis\n";

#define MAX_ITEMS 64

typedef struct run_args {
    const char *model, *devices, *output_dir, *labels, *threads, *trace, *memory_limits, *weights_dir, *load_limits;
    bool soft_placement, memory_report, float16;
    tgc_optimize_level optimize;
    const char *input_names[MAX_ITEMS], *input_files[MAX_ITEMS];
    int n_inputs;
    const char *compare_names[MAX_ITEMS], *compare_files[MAX_ITEMS];
    int n_compare;
    int repeat;
    int64_t max_iterations;
    int inflight; /* 0: not given */
    tgc_placement_mode placement;
    const char *input_dir;
    double tolerance;
    double peer_timeout;
} run_args;

static int split_pair(const char *arg, const char *opt, const char **name, const char **file, char **store) {
    *store = NULL;
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg || eq[1] == '\0') return tgc_usage_error("run", "%s takes NAME=FILE, got '%s'", opt, arg);
    *store = strdup(arg);
    if (*store == NULL) return TGC_EXIT_FAILED;
    (*store)[eq - arg] = '\0';
    *name = *store;
    *file = *store + (eq - arg) + 1;
    return TGC_EXIT_OK;
}

static int parse_args(int argc, char **argv, run_args *a, char **owned, int *n_owned) {
    a->devices = "cpu";
    a->repeat = 1;
    a->tolerance = 1e-4;
    for (int i = 0; i < argc; i++) {
        const char *opt = argv[i];
        bool takes_value = strcmp(opt, "--devices") == 0 || strcmp(opt, "--input") == 0 ||
                           strcmp(opt, "--output-dir") == 0 || strcmp(opt, "--repeat") == 0 ||
                           strcmp(opt, "--compare") == 0 || strcmp(opt, "--tolerance") == 0 ||
                           strcmp(opt, "--labels") == 0 || strcmp(opt, "--threads") == 0 ||
                           strcmp(opt, "--trace") == 0 || strcmp(opt, "--memory-limit") == 0 ||
                           strcmp(opt, "--weights-dir") == 0 || strcmp(opt, "--load-limits") == 0 ||
                           strcmp(opt, "--optimize") == 0 || strcmp(opt, "--max-iterations") == 0 ||
                           strcmp(opt, "--inflight") == 0 || strcmp(opt, "--input-dir") == 0 ||
                           strcmp(opt, "--peer-timeout") == 0 || strcmp(opt, "--placement") == 0;
        if (strcmp(opt, "--soft-placement") == 0) {
            a->soft_placement = true;
            continue;
        }
        if (strcmp(opt, "--memory-report") == 0) {
            a->memory_report = true;
            continue;
        }
        if (strcmp(opt, "--float16") == 0) {
            a->float16 = true;
            continue;
        }
        if (strcmp(opt, "--tune") == 0) { /* read by the session made next (support/settings.h) */
            if (setenv("TGC_GPU_TUNE", "1", 1) != 0) return tgc_usage_error("run", "--tune: cannot set TGC_GPU_TUNE");
            continue;
        }
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            fputs(run_usage, stdout);
            return -1;
        }
        if (takes_value && i + 1 >= argc) return tgc_usage_error("run", "%s needs a value", opt);
        if (!takes_value && opt[0] == '-' && opt[1] != '\0') return tgc_usage_error("run", "unknown option '%s'", opt);
        if (!takes_value) {
            if (a->model != NULL) return tgc_usage_error("run", "more than one model given ('%s' and '%s')", a->model, opt);
            a->model = opt;
            continue;
        }
        const char *v = argv[++i];
        int rc = TGC_EXIT_OK;
        if (strcmp(opt, "--devices") == 0) a->devices = v;
        else if (strcmp(opt, "--output-dir") == 0) a->output_dir = v;
        else if (strcmp(opt, "--weights-dir") == 0) a->weights_dir = v;
        else if (strcmp(opt, "--load-limits") == 0) a->load_limits = v;
        else if (strcmp(opt, "--labels") == 0) a->labels = v;
        else if (strcmp(opt, "--threads") == 0) a->threads = v;
        else if (strcmp(opt, "--trace") == 0) a->trace = v;
        else if (strcmp(opt, "--memory-limit") == 0) a->memory_limits = v;
        else if (strcmp(opt, "--input-dir") == 0) a->input_dir = v;
        else if (strcmp(opt, "--placement") == 0) {
            if (!tgc_parse_placement(v, &a->placement))
                return tgc_usage_error("run", "--placement takes rules or auto, not '%s'", v);
        }
        else if (strcmp(opt, "--inflight") == 0) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end != '\0' || n < 1 || n > TGC_STREAM_MAX_INFLIGHT)
                return tgc_usage_error("run", "--inflight takes a count from 1 to %d, got '%s'",
                                       TGC_STREAM_MAX_INFLIGHT, v);
            a->inflight = (int)n;
        }
        else if (strcmp(opt, "--optimize") == 0) {
            if (!tgc_parse_optimize_level(v, &a->optimize))
                return tgc_usage_error("run", "--optimize takes 0, 1 or 2, not '%s'", v);
        }
        else if (strcmp(opt, "--max-iterations") == 0) {
            char *end;
            long long n = strtoll(v, &end, 10);
            if (*end != '\0' || n < 1)
                return tgc_usage_error("run", "--max-iterations takes a count >= 1, got '%s'", v);
            a->max_iterations = n;
        } else if (strcmp(opt, "--peer-timeout") == 0) {
            char *end;
            a->peer_timeout = strtod(v, &end);
            if (*end != '\0' || !(a->peer_timeout > 0) || a->peer_timeout > 1e6)
                return tgc_usage_error("run", "--peer-timeout takes seconds > 0, got '%s'", v);
        } else if (strcmp(opt, "--repeat") == 0) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end != '\0' || n < 1 || n > 1000000) return tgc_usage_error("run", "--repeat takes a count >= 1, got '%s'", v);
            a->repeat = (int)n;
        } else if (strcmp(opt, "--tolerance") == 0) {
            char *end;
            a->tolerance = strtod(v, &end);
            if (*end != '\0' || !(a->tolerance >= 0)) return tgc_usage_error("run", "--tolerance takes a number >= 0, got '%s'", v);
        } else if (*n_owned >= 2 * MAX_ITEMS) {
            return tgc_usage_error("run", "too many --input/--compare options");
        } else if (strcmp(opt, "--input") == 0) {
            rc = split_pair(v, opt, &a->input_names[a->n_inputs], &a->input_files[a->n_inputs], &owned[(*n_owned)++]);
            a->n_inputs += rc == TGC_EXIT_OK;
        } else {
            rc = split_pair(v, opt, &a->compare_names[a->n_compare], &a->compare_files[a->n_compare], &owned[(*n_owned)++]);
            a->n_compare += rc == TGC_EXIT_OK;
        }
        if (rc != TGC_EXIT_OK) return rc;
        if (a->n_inputs >= MAX_ITEMS || a->n_compare >= MAX_ITEMS) return tgc_usage_error("run", "too many NAME=FILE options");
    }
    if (a->model == NULL) return tgc_usage_error("run", "no model file given");
    if (a->input_dir != NULL && (a->repeat > 1 || a->n_compare > 0 || a->labels != NULL))
        return tgc_usage_error("run", "--input-dir runs each input once: it takes no --repeat, --compare or --labels");
    return TGC_EXIT_OK;
}

static double as_double(const tgc_tensor *t, int64_t i) {
    tgc_dtype dt = tgc_tensor_dtype(t);
    return dt >= 0 && dt < TGC_DTYPE_COUNT && dt != TGC_STRING ? tgc_elem_as_double(dt, tgc_tensor_data(t), i) : NAN;
}

/* A string tensor's summary: its first few elements, quoted. */
static void print_strings(const char *name, const char *shape, const tgc_tensor *t) {
    int64_t n = tgc_tensor_numel(t);
    printf("%-16s %-16s %-8s", name, shape, "string");
    for (int64_t i = 0; i < n && i < 4; i++) printf("%s\"%.40s\"", i ? ", " : " ", tgc_tensor_string(t, i));
    printf("%s\n", n > 4 ? ", ..." : n == 0 ? " (empty)" : "");
}

static void print_summary(const char *name, const tgc_tensor *t);

/* A sequence's or an optional's summary: its length, then its first few
 * elements, one a line. */
static void print_list(const char *name, const tgc_tensor *t) {
    int64_t n = tgc_tensor_list_length(t);
    bool seq = tgc_tensor_kind_of(t) == TGC_TENSOR_SEQUENCE;
    char what[64];
    snprintf(what, sizeof what, seq ? "%lld element%s" : n ? "holding one" : "holding none", (long long)n,
             n == 1 ? "" : "s");
    printf("%-16s %-16s %s(%s)\n", name, what, seq ? "seq" : "optional", tgc_dtype_name(tgc_tensor_dtype(t)));
    for (int64_t i = 0; i < n && i < 4; i++) {
        tgc_tensor *e = tgc_tensor_list_at(t, i);
        char label[64];
        snprintf(label, sizeof label, "  [%lld]", (long long)i);
        if (e != NULL) print_summary(label, e);
        tgc_tensor_release(e);
    }
    if (n > 4) printf("  ...\n");
}

static void print_summary(const char *name, const tgc_tensor *t) {
    if (tgc_tensor_kind_of(t) != TGC_TENSOR_PLAIN) {
        print_list(name, t);
        return;
    }
    char shape[256] = "[";
    for (int i = 0; i < tgc_tensor_rank(t); i++) {
        char d[32];
        snprintf(d, sizeof d, "%s%lld", i ? ", " : "", (long long)tgc_tensor_dims(t)[i]);
        strncat(shape, d, sizeof shape - strlen(shape) - 2);
    }
    strcat(shape, "]");
    if (tgc_tensor_dtype(t) == TGC_STRING) {
        print_strings(name, shape, t);
        return;
    }
    int64_t n = tgc_tensor_numel(t);
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = as_double(t, i);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        sum += v;
    }
    if (n == 0) printf("%-16s %-16s %-8s (empty)\n", name, shape, tgc_dtype_name(tgc_tensor_dtype(t)));
    else
        printf("%-16s %-16s %-8s min %.6g  max %.6g  mean %.6g\n", name, shape, tgc_dtype_name(tgc_tensor_dtype(t)), lo,
               hi, sum / (double)n);
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int find_output(const tgc_session *s, const char *name) {
    for (int i = 0; i < tgc_session_output_count(s); i++)
        if (strcmp(tgc_session_output_name(s, i), name) == 0) return i;
    return -1;
}

/* --compare: largest absolute difference; returns 1 above tolerance, 2 on a usage problem. */
static int compare_output(const tgc_session *s, tgc_tensor **outs, const char *name, const char *file, double tol) {
    int i = find_output(s, name);
    if (i < 0) {
        fprintf(stderr, "tgc: error: --compare: '%s' is not a graph output; the outputs are", name);
        for (int k = 0; k < tgc_session_output_count(s); k++)
            fprintf(stderr, "%s '%s'", k ? "," : "", tgc_session_output_name(s, k));
        fputc('\n', stderr);
        return TGC_EXIT_USAGE;
    }
    tgc_tensor *ref = NULL;
    tgc_diags *d = tgc_diags_create();
    tgc_status st = tgc_tensor_load_npy(file, d, &ref);
    tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    if (st != TGC_OK) return TGC_EXIT_USAGE;
    int rc = TGC_EXIT_OK;
    if (tgc_tensor_numel(ref) != tgc_tensor_numel(outs[i]) || tgc_tensor_rank(ref) != tgc_tensor_rank(outs[i])) {
        fprintf(stderr, "tgc: error: --compare: '%s' and %s differ in shape\n", name, file);
        rc = TGC_EXIT_FAILED;
    } else if (tgc_tensor_dtype(ref) == TGC_STRING || tgc_tensor_dtype(outs[i]) == TGC_STRING) {
        int64_t n = tgc_tensor_numel(ref), differ = 0; /* strings: equal or not, whatever --tolerance says */
        bool both = tgc_tensor_dtype(ref) == tgc_tensor_dtype(outs[i]);
        for (int64_t k = 0; k < n; k++)
            differ += !both || strcmp(tgc_tensor_string(outs[i], k), tgc_tensor_string(ref, k)) != 0;
        printf("compare %s with %s: %lld of %lld strings differ %s\n", name, file, (long long)differ, (long long)n,
               differ == 0 ? "ok" : "FAILED");
        if (differ > 0) rc = TGC_EXIT_FAILED;
    } else {
        double worst = 0;
        for (int64_t k = 0; k < tgc_tensor_numel(ref); k++) {
            double diff = fabs(as_double(outs[i], k) - as_double(ref, k));
            if (!(diff <= worst)) worst = diff; /* NaN counts as the worst */
        }
        bool ok = worst <= tol;
        printf("compare %s with %s: max abs diff %.3g (tolerance %.3g) %s\n", name, file, worst, tol, ok ? "ok" : "FAILED");
        if (!ok) rc = TGC_EXIT_FAILED;
    }
    tgc_tensor_release(ref);
    return rc;
}

static int report_accuracy(tgc_tensor *logits, const char *file) {
    tgc_tensor *labels = NULL;
    tgc_diags *d = tgc_diags_create();
    tgc_status st = tgc_tensor_load_npy(file, d, &labels);
    tgc_diags_print(d, stderr);
    tgc_diags_free(d);
    if (st != TGC_OK) return TGC_EXIT_USAGE;
    int rank = tgc_tensor_rank(logits);
    int64_t classes = rank > 0 ? tgc_tensor_dims(logits)[rank - 1] : 0;
    int64_t rows = classes > 0 ? tgc_tensor_numel(logits) / classes : 0;
    int rc = TGC_EXIT_OK;
    if (tgc_tensor_numel(labels) != rows || classes == 0) {
        fprintf(stderr, "tgc: error: --labels: %lld labels for %lld rows of the first output\n",
                (long long)tgc_tensor_numel(labels), (long long)rows);
        rc = TGC_EXIT_USAGE;
    } else {
        int64_t right = 0;
        for (int64_t r = 0; r < rows; r++) {
            int64_t best = 0;
            for (int64_t c = 1; c < classes; c++)
                if (as_double(logits, r * classes + c) > as_double(logits, r * classes + best)) best = c;
            right += best == (int64_t)as_double(labels, r);
        }
        printf("accuracy: %lld / %lld = %.2f%%\n", (long long)right, (long long)rows, 100.0 * (double)right / (double)rows);
    }
    tgc_tensor_release(labels);
    return rc;
}

/* The file name (without ".npy") output `name` is written under: each
 * byte outside [A-Za-z0-9_.-], and a leading '.', as %XX (uppercase hex),
 * so "onnx::Flatten_0" is "onnx%3A%3AFlatten_0" and "/conv/Conv_output_0"
 * "%2Fconv%2FConv_output_0": names stay apart and the original reads back
 * with urllib.parse.unquote. An escaped name past 200 bytes keeps its first
 * 191 and ends with '~' and the 8 hex digits of the FNV-1a hash of the
 * whole name (file names stop at 255 bytes). */
void tgc_file_stem(const char *name, char *out, size_t size) {
    static const char hex[] = "0123456789ABCDEF";
    enum { MAX_STEM = 200, KEPT = 191 };
    char buf[3 * 4096 + 1];
    size_t len = 0;
    uint32_t hash = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        hash = (hash ^ *p) * 16777619u;
        bool plain = isalnum(*p) || *p == '_' || *p == '-' || (*p == '.' && p != (const unsigned char *)name);
        if (len + 4 > sizeof buf) continue; /* only the hash sees the rest */
        if (plain) {
            buf[len++] = (char)*p;
        } else {
            buf[len++] = '%';
            buf[len++] = hex[*p >> 4];
            buf[len++] = hex[*p & 15];
        }
    }
    buf[len] = '\0';
    if (len > MAX_STEM) snprintf(buf + KEPT, sizeof buf - KEPT, "~%08" PRIx32, hash);
    snprintf(out, size, "%s", buf);
}

static int write_outputs(const tgc_session *s, tgc_tensor **outs, const char *dir) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "tgc: error: cannot create '%s': %s\n", dir, strerror(errno));
        return TGC_EXIT_FAILED;
    }
    for (int i = 0; i < tgc_session_output_count(s); i++) {
        /* A sequence is written element by element (NAME_0.npy, NAME_1.npy, ...), an
         * optional as its element (nothing when it holds none). */
        bool list = tgc_tensor_kind_of(outs[i]) != TGC_TENSOR_PLAIN;
        bool seq = tgc_tensor_kind_of(outs[i]) == TGC_TENSOR_SEQUENCE;
        int64_t n = list ? tgc_tensor_list_length(outs[i]) : 1;
        char stem[256];
        tgc_file_stem(tgc_session_output_name(s, i), stem, sizeof stem);
        for (int64_t k = 0; k < n; k++) {
            char path[4096];
            if (seq) snprintf(path, sizeof path, "%s/%s_%lld.npy", dir, stem, (long long)k);
            else snprintf(path, sizeof path, "%s/%s.npy", dir, stem);
            tgc_tensor *e = list ? tgc_tensor_list_at(outs[i], k) : tgc_tensor_retain(outs[i]);
            tgc_diags *d = tgc_diags_create();
            tgc_status st = e != NULL ? tgc_tensor_save_npy(e, path, d) : TGC_ERR_NOMEM;
            tgc_diags_print(d, stderr);
            tgc_diags_free(d);
            tgc_tensor_release(e);
            if (st != TGC_OK) return TGC_EXIT_FAILED;
        }
    }
    return TGC_EXIT_OK;
}

/* --compare, --labels and --output-dir on a run's outputs. */
static int check_outputs(const run_args *a, const tgc_session *s, tgc_tensor **outs) {
    int rc = TGC_EXIT_OK;
    for (int i = 0; i < a->n_compare && rc == TGC_EXIT_OK; i++)
        rc = compare_output(s, outs, a->compare_names[i], a->compare_files[i], a->tolerance);
    if (rc == TGC_EXIT_OK && a->labels != NULL && tgc_session_output_count(s) > 0)
        rc = report_accuracy(outs[0], a->labels);
    if (rc == TGC_EXIT_OK && a->output_dir != NULL) rc = write_outputs(s, outs, a->output_dir);
    return rc;
}

/* ---- --inflight and --input-dir: steps streamed through the session ------------- */

typedef struct stream_ctx {
    const run_args *a;
    tgc_session *s;
    const char **names; /* --input's names, then the inputs read from --input-dir */
    int n_fixed, n_streamed;
    tgc_tensor **fixed; /* --input's values, shared by every step */
    tgc_input_dir in;   /* count 0 without --input-dir */
    tgc_tensor **last;  /* without --input-dir: the last step's outputs */
    char what[64];      /* describe's answer (called in turn, one at a time) */
} stream_ctx;

static int load_step(void *ctx, int step, tgc_tensor **feeds, tgc_diags *diags) {
    stream_ctx *c = ctx;
    for (int k = 0; k < c->n_fixed; k++) feeds[k] = tgc_tensor_retain(c->fixed[k]);
    for (int k = 0; k < c->n_streamed; k++) {
        char path[4096];
        if (tgc_input_dir_path(&c->in, step, c->names[c->n_fixed + k], path, sizeof path) == NULL) {
            fprintf(stderr, "tgc: error: --input-dir: the path of input '%s' of '%s' is too long\n",
                    c->names[c->n_fixed + k], c->in.stems[step]);
            return TGC_EXIT_USAGE;
        }
        if (tgc_tensor_load_npy(path, diags, &feeds[c->n_fixed + k]) != TGC_OK) return TGC_EXIT_USAGE;
    }
    return TGC_EXIT_OK;
}

static int emit_step(void *ctx, int step, tgc_tensor **outs) {
    stream_ctx *c = ctx;
    int n_out = tgc_session_output_count(c->s);
    if (c->in.count == 0) { /* --repeat: the summary shows the last */
        for (int i = 0; i < n_out; i++) {
            tgc_tensor_release(c->last[i]);
            c->last[i] = tgc_tensor_retain(outs[i]);
        }
        return TGC_EXIT_OK;
    }
    for (int i = 0; i < n_out; i++) {
        char label[512];
        snprintf(label, sizeof label, "%s/%s", c->in.stems[step], tgc_session_output_name(c->s, i));
        print_summary(label, outs[i]);
    }
    if (c->a->output_dir == NULL) return TGC_EXIT_OK;
    char dir[4096];
    int n = snprintf(dir, sizeof dir, "%s/%s", c->a->output_dir, c->in.stems[step]);
    if (n < 0 || (size_t)n >= sizeof dir) {
        fprintf(stderr, "tgc: error: --output-dir: the folder for '%s' is too long a path\n", c->in.stems[step]);
        return TGC_EXIT_FAILED;
    }
    return write_outputs(c->s, outs, dir);
}

static const char *describe_step(void *ctx, int step) {
    stream_ctx *c = ctx;
    if (c->in.count == 0) snprintf(c->what, sizeof c->what, "run %d of --repeat", step + 1);
    else snprintf(c->what, sizeof c->what, "input '%.40s%s'", c->in.stems[step], c->in.is_folder[step] ? "/" : ".npy");
    return c->what;
}

/* The graph inputs that --input does not give (by the model's name or
 * tgc's), in c->names after them, by the model's names: the files an entry
 * of --input-dir holds are named so. */
static int name_streamed(stream_ctx *c, const tgc_graph *g) {
    for (int i = 0; i < tgc_session_input_count(c->s); i++) {
        const char *name = tgc_session_input_name(c->s, i), *tgc_name = tgc_graph_input_name(g, i);
        bool given = false;
        for (int k = 0; k < c->n_fixed; k++)
            given |= strcmp(c->names[k], name) == 0 || (tgc_name != NULL && strcmp(c->names[k], tgc_name) == 0);
        if (!given) c->names[c->n_fixed + c->n_streamed++] = name;
    }
    return TGC_EXIT_OK;
}

static int stream_model(const run_args *a, tgc_graph *g, tgc_diags *diags) {
    int inflight = a->inflight > 0 ? a->inflight : 1;
    tgc_session *s = NULL;
    tgc_session_options opts = {.soft_placement = a->soft_placement, .threads = a->threads,
                                .memory_limits = a->memory_limits, .memory_report = a->memory_report,
                                .optimize = a->optimize, .max_iterations = a->max_iterations,
                                .max_inflight = inflight, .placement = a->placement, .release_weights = 1,
                                .float16 = a->float16};
    tgc_status created = tgc_session_create(g, a->devices, &opts, diags, &s);
    if (created != TGC_OK) return created == TGC_ERR_INVALID ? TGC_EXIT_USAGE : TGC_EXIT_FAILED;
    int n_out = tgc_session_output_count(s);
    stream_ctx c = {.a = a, .s = s, .n_fixed = a->n_inputs};
    c.names = calloc((size_t)a->n_inputs + (size_t)tgc_session_input_count(s) + 1, sizeof *c.names);
    c.fixed = calloc((size_t)a->n_inputs + 1, sizeof *c.fixed);
    c.last = calloc((size_t)n_out + 1, sizeof *c.last);
    int rc = c.names && c.fixed && c.last ? TGC_EXIT_OK : TGC_EXIT_FAILED;
    if (rc == TGC_EXIT_OK && a->trace != NULL && tgc_session_trace_start(s) != TGC_OK) rc = TGC_EXIT_FAILED;
    for (int i = 0; i < a->n_inputs && rc == TGC_EXIT_OK; i++) {
        c.names[i] = a->input_names[i];
        if (tgc_tensor_load_npy(a->input_files[i], diags, &c.fixed[i]) != TGC_OK) rc = TGC_EXIT_USAGE;
    }
    if (rc == TGC_EXIT_OK && a->input_dir != NULL) rc = name_streamed(&c, g);
    if (rc == TGC_EXIT_OK && a->input_dir != NULL) rc = tgc_input_dir_list(a->input_dir, c.n_streamed, &c.in);
    if (rc == TGC_EXIT_OK && a->input_dir != NULL && a->output_dir != NULL && mkdir(a->output_dir, 0777) != 0 &&
        errno != EEXIST) {
        fprintf(stderr, "tgc: error: cannot create '%s': %s\n", a->output_dir, strerror(errno));
        rc = TGC_EXIT_FAILED;
    }
    tgc_stream_figures fig = {0};
    if (rc == TGC_EXIT_OK) {
        tgc_stream st = {.session = s, .n_steps = a->input_dir != NULL ? c.in.count : a->repeat,
                         .inflight = inflight, .n_feeds = c.n_fixed + c.n_streamed, .names = c.names,
                         .load = load_step, .emit = emit_step, .describe = describe_step, .ctx = &c};
        rc = tgc_stream_run(&st, &fig);
    }
    if (rc == TGC_EXIT_OK && a->input_dir == NULL)
        for (int i = 0; i < n_out; i++) print_summary(tgc_session_output_name(s, i), c.last[i]);
    if (fig.steps_done > 0) {
        double rate = fig.elapsed_s > 0 ? fig.steps_done / fig.elapsed_s : 0.0;
        printf("%d step%s in %.3f s: %.2f steps/s", fig.steps_done, fig.steps_done == 1 ? "" : "s", fig.elapsed_s, rate);
        if (fig.warm_elapsed_s > 0)
            printf(" (after the first: %.2f steps/s)", (fig.steps_done - 1) / fig.warm_elapsed_s);
        printf("; latency median %.3f ms (min %.3f, max %.3f); %d in flight on %s\n", fig.latency_median_s * 1e3,
               fig.latency_min_s * 1e3, fig.latency_max_s * 1e3, inflight, a->devices);
    }
    if (rc == TGC_EXIT_OK && a->input_dir == NULL) rc = check_outputs(a, s, c.last);
    if (a->trace != NULL && tgc_session_trace_write(s, a->trace, diags) != TGC_OK) rc = TGC_EXIT_FAILED;
    if (a->memory_report && tgc_session_memory_report(s, stdout) != TGC_OK) rc = TGC_EXIT_FAILED;
    for (int i = 0; c.last != NULL && i < n_out; i++) tgc_tensor_release(c.last[i]);
    for (int i = 0; c.fixed != NULL && i < a->n_inputs; i++) tgc_tensor_release(c.fixed[i]);
    tgc_input_dir_free(&c.in);
    free(c.names);
    free(c.fixed);
    free(c.last);
    tgc_session_free(s);
    return rc;
}

static int run_model(const run_args *a, tgc_graph *g, tgc_diags *diags) {
    if ((a->inflight > 0 || a->input_dir != NULL) && strstr(a->devices, "/task:") != NULL)
        return tgc_usage_error("run", "--inflight and --input-dir do not take devices of other processes yet: "
                                      "their ranks would have to start the same steps in the same order");
    if (a->inflight > 0 || a->input_dir != NULL) return stream_model(a, g, diags);
    tgc_session *s = NULL;
    tgc_session_options opts = {.soft_placement = a->soft_placement, .threads = a->threads,
                                .memory_limits = a->memory_limits, .memory_report = a->memory_report,
                                .optimize = a->optimize, .max_iterations = a->max_iterations,
                                .peer_timeout_s = a->peer_timeout, .placement = a->placement,
                                .release_weights = 1, .float16 = a->float16};
    tgc_status created = tgc_session_create(g, a->devices, &opts, diags, &s);
    /* Under mpirun, rank 0 reads the feeds and reports; the others run their partitions. */
    bool reporter = tgc_distributed_rank() == 0;
    if (created != TGC_OK) return created == TGC_ERR_INVALID ? TGC_EXIT_USAGE : TGC_EXIT_FAILED;
    if (a->trace != NULL && tgc_session_trace_start(s) != TGC_OK) {
        tgc_session_free(s);
        return TGC_EXIT_FAILED;
    }
    tgc_tensor *feeds[MAX_ITEMS] = {0};
    int rc = TGC_EXIT_OK;
    for (int i = 0; reporter && i < a->n_inputs && rc == TGC_EXIT_OK; i++)
        if (tgc_tensor_load_npy(a->input_files[i], diags, &feeds[i]) != TGC_OK) rc = TGC_EXIT_USAGE;
    int n_out = tgc_session_output_count(s);
    tgc_tensor **outs = calloc((size_t)n_out + 1, sizeof *outs);
    double *times = calloc((size_t)a->repeat, sizeof *times);
    if (outs == NULL || times == NULL) rc = TGC_EXIT_FAILED;
    for (int r = 0; r < a->repeat && rc == TGC_EXIT_OK; r++) {
        if (r > 0)
            for (int i = 0; i < n_out; i++) tgc_tensor_release(outs[i]);
        double t0 = now_seconds();
        tgc_status st = reporter ? tgc_session_run(s, a->n_inputs, a->input_names, feeds, outs, diags)
                                 : tgc_session_run(s, 0, NULL, NULL, outs, diags);
        times[r] = now_seconds() - t0;
        if (st != TGC_OK) rc = st == TGC_ERR_INVALID ? TGC_EXIT_USAGE : TGC_EXIT_FAILED;
    }
    if (rc == TGC_EXIT_OK && reporter) {
        for (int i = 0; i < n_out; i++) print_summary(tgc_session_output_name(s, i), outs[i]);
        qsort(times, (size_t)a->repeat, sizeof *times, compare_doubles);
        printf("wall time per run: %.3f ms (median of %d; min %.3f ms) on %s\n", times[a->repeat / 2] * 1e3, a->repeat,
               times[0] * 1e3, a->devices);
        rc = check_outputs(a, s, outs);
    }
    if (a->trace != NULL && tgc_session_trace_write(s, a->trace, diags) != TGC_OK) rc = TGC_EXIT_FAILED;
    if (a->memory_report && tgc_session_memory_report(s, stdout) != TGC_OK) rc = TGC_EXIT_FAILED;
    for (int i = 0; outs != NULL && i < n_out; i++) tgc_tensor_release(outs[i]);
    for (int i = 0; i < a->n_inputs; i++) tgc_tensor_release(feeds[i]);
    free(outs);
    free(times);
    tgc_session_free(s);
    return rc;
}

/* Loads the graph at `path` (a .onnx model straight into memory). */
static tgc_status load_model(const char *path, const run_args *a, tgc_diags *diags, tgc_graph **g) {
    tgc_graph_load_options lopts = {.weights_dir = a->weights_dir};
    tgc_status ls = a->load_limits != NULL ? tgc_load_limits_parse(a->load_limits, &lopts, diags) : TGC_OK;
    return ls != TGC_OK ? ls : tgc_graph_load_with(path, &lopts, diags, g);
}

int tgc_cmd_run(int argc, char **argv) {
    run_args a = {0};
    char *owned[2 * MAX_ITEMS];
    int n_owned = 0;
    int rc = parse_args(argc, argv, &a, owned, &n_owned);
    if (rc == TGC_EXIT_OK) {
        tgc_diags *diags = tgc_diags_create();
        tgc_graph *g = NULL;
        tgc_status st = diags ? load_model(a.model, &a, diags, &g) : TGC_ERR_NOMEM;
        if (st != TGC_OK) rc = st == TGC_ERR_NOMEM || st == TGC_ERR_IO ? TGC_EXIT_FAILED : TGC_EXIT_USAGE;
        else rc = run_model(&a, g, diags);
        tgc_diags_print(diags, stderr);
        tgc_graph_free(g);
        tgc_diags_free(diags);
    }
    for (int i = 0; i < n_owned; i++) free(owned[i]);
    return rc < 0 ? TGC_EXIT_OK : rc;
}
