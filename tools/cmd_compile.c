/* tgc compile: load, validate and infer a graph, place it on a list of
 * devices when one is given, then dump what the next stage gets. */
#include "tools/cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char compile_usage[] =
    "usage: tgc compile MODEL.yaml [--devices LIST [--soft-placement]] [--weights-dir DIR] [--load-limits LIST]\n"
    "                   [--dump shapes|optimized|placed|partitioned] [--format yaml|json|dot] [-o FILE|DIR]\n"
    "                   [--optimize 0|1|2] [--float16] [--placement rules|auto [--memory-limit DEV=SIZE,...]\n"
    "                   [--threads DEV=N,...] [--inflight K]]\n"
    "       tgc compile MODEL.yaml --devices LIST --dump memory [--bind SYM=N,...] [--memory-limit DEV=SIZE,...]\n"
    "                   [--format table|json]\n"
    "\n"
    "Loads MODEL.yaml (format tgc/1) or MODEL.onnx (an ONNX model, read straight\n"
    "into memory), checks every rule of the format and infers each tensor's dtype\n"
    "and shape. With --devices it also gives every node a device (see\n"
    "docs/placement.md) and prints a summary: nodes per device, and the tensors\n"
    "that will cross devices. Errors are printed as FILE:LINE:COL: error: ...\n"
    "(FILE: error: ... naming the node for an ONNX model) and nothing is written.\n"
    "\n"
    "  --devices LIST    place on these devices: cpu (= cpu0), cpuN, gpu (= gpu0), gpuN,\n"
    "                    comma-separated, e.g. cpu,gpu0 or cpu0,cpu1\n"
    "  --soft-placement  relax device specs that cannot hold (to their kind, then to\n"
    "                    any device) with a warning, instead of failing\n"
    "  --weights-dir DIR the folder the graph's `file:` weights resolve beneath (for\n"
    "                    weights shared by several graphs); default: the graph's folder.\n"
    "                    Either way a path may not leave it (absolute, '..', a symlink out)\n"
    "  --load-limits LIST what the model may ask for (untrusted input): file=SIZE (the\n"
    "                    model file, default 2GiB), nodes=N (1000000), rank=R (8),\n"
    "                    tensor=SIZE (one tensor's bytes, 64GiB), e.g. file=100MB,tensor=1GiB\n"
    "  --dump shapes     write the graph with every node's inferred `out` (the default)\n"
    "  --dump optimized  write the graph after the optimization passes (a tgc/1 graph) and\n"
    "                    print a line per pass: nodes before and after, rewrites, time\n"
    "  --optimize 0|1|2  the passes the placed, partitioned, memory and optimized dumps see,\n"
    "                    as `tgc run` would run the graph (docs/passes.md): 0 none, 1 constant\n"
    "                    folding, common subexpressions and dead nodes, 2 (the default) also\n"
    "                    BatchNorm folding and fusions\n"
    "  --float16         as `tgc run --float16`: float32 nodes a listed gpu has float16\n"
    "                    kernels for compute in float16 (pass compute-in-float16)\n"
    "  --dump placed     write the placement (needs --devices), in --format:\n"
    "  --format yaml     a tgc/1 graph with every node's `device:` filled in (the default);\n"
    "                    compiling it again on the same devices gives the same placement\n"
    "  --format json     {\"nodes\": {NODE: {\"device\": ..., \"reason\": ...}}}, and\n"
    "                    \"kernel\": the way a kernel of several ways will run (Conv:\n"
    "                    winograd, direct, im2col...) where the shapes are static\n"
    "  --format dot      a Graphviz graph, nodes coloured by device (dot -Tsvg)\n"
    "  --dump partitioned  write one subgraph per device, joined by _Send/_Recv pairs\n"
    "                    (needs --devices), and print the pairs and bytes per step\n"
    "                    crossing each device pair: yaml writes DIR/DEVICE.yaml, a\n"
    "                    tgc/1 graph per device, with -o DIR (created if missing;\n"
    "                    without -o one document a device on standard output); json\n"
    "                    one document with every partition and pair; dot one cluster\n"
    "                    per device, a dashed edge per pair\n"
    "  --dump memory     predict each device's memory from a static plan over the executor's\n"
    "                    schedule (needs --devices): weights, the planned peak (offsets\n"
    "                    greedily by size, as TFLite's arena planner, or in order of\n"
    "                    first use where that packs smaller), the lower bound\n"
    "                    (the most bytes live at one step), the naive sum (no reuse), and\n"
    "                    the largest tensors at the busiest step; --format table (the\n"
    "                    default) or json (every buffer's lifetime and offset too)\n"
    "  --bind SYM=N,...  the value of each shape symbol for --dump memory (unbound: 1,\n"
    "                    and the plan says so), e.g. --bind N=400\n"
    "  --memory-limit DEV=SIZE,...  the limits a run will set (as tgc run's): --dump memory\n"
    "                    gives the run's verdict: exit 2 where a device's need (weights,\n"
    "                    kernel caches, activations, workspaces) is above its limit or\n"
    "                    the memory it has, less 5% (docs/memory.md)\n"
    "  --placement MODE  rules (the default) or auto: the nodes the rules leave open split\n"
    "                    over the devices where the graph runs fastest under each one's\n"
    "                    memory (--memory-limit, else what it has, less 5%), as tgc run\n"
    "                    --placement auto would, for pools of --threads and --inflight K\n"
    "                    steps at once (1: latency; K: throughput); reason `auto`\n"
    "  -o FILE           write the dump to FILE (atomically) instead of standard output;\n"
    "                    the placement summary then goes to standard output, else to\n"
    "                    standard error. A YAML dump's `file:` paths are relative, beneath\n"
    "                    FILE's folder: weights from elsewhere are written there as .npy\n"
    "                    files at the paths the graph gave them\n";

typedef enum dump_format { FORMAT_YAML, FORMAT_JSON, FORMAT_DOT } dump_format;

typedef struct dump_job {
    tgc_graph *g;
    tgc_placed *placed; /* NULL: dump shapes */
    dump_format format;
    const char *dest_dir;
    tgc_diags *diags;
    tgc_partitions *parts; /* --dump partitioned */
    int part;              /* its yaml: the partition to write */
} dump_job;

static tgc_status dump_partitions(const dump_job *job, FILE *f) {
    switch (job->format) {
    case FORMAT_JSON: return tgc_partitions_dump_json(job->parts, f, job->diags);
    case FORMAT_DOT: return tgc_partitions_dump_dot(job->parts, f, job->diags);
    default: return tgc_partitions_dump_yaml(job->parts, job->part, f, job->dest_dir, job->diags);
    }
}

static tgc_status dump(const dump_job *job, FILE *f) {
    if (job->parts != NULL) return dump_partitions(job, f);
    if (job->placed == NULL) return tgc_graph_dump_yaml(job->g, f, job->dest_dir, job->diags);
    switch (job->format) {
    case FORMAT_JSON: return tgc_placed_dump_json(job->placed, f, job->diags);
    case FORMAT_DOT: return tgc_placed_dump_dot(job->placed, f, job->diags);
    default: return tgc_placed_dump_yaml(job->placed, f, job->dest_dir, job->diags);
    }
}

static int write_dump(FILE *f, void *ctx) { return dump(ctx, f) == TGC_OK ? 0 : EIO; }

/* Prints the load or placement messages and the closing count; returns the
 * exit code for status s. */
static int failed(tgc_diags *diags, tgc_status s) {
    tgc_diags_print(diags, stderr);
    if (tgc_diags_error_count(diags) > 1)
        fprintf(stderr, "%zu errors; nothing written\n", tgc_diags_error_count(diags));
    tgc_diags_free(diags);
    return s == TGC_ERR_INVALID || s == TGC_ERR_IO || s == TGC_ERR_UNSUPPORTED ? TGC_EXIT_USAGE : TGC_EXIT_FAILED;
}

/* mkdir -p: every missing directory of `path`; 0 or an errno code. */
static int make_dirs(const char *path) {
    char *p = strdup(path);
    if (p == NULL) return ENOMEM;
    int err = 0;
    for (char *c = p + 1; err == 0; c++) {
        bool end = *c == '\0';
        if (*c != '/' && !end) continue;
        *c = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) err = errno;
        if (end) break;
        *c = '/';
    }
    struct stat st;
    if (err == 0 && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))) err = ENOTDIR;
    free(p);
    return err;
}

/* --dump partitioned: builds and checks the partitions of the placed graph,
 * prints their summary, writes the dump. Returns the exit code. */
static int write_partitions(tgc_graph *g, tgc_placed *placed, dump_format format, const char *out_path) {
    tgc_diags *diags = tgc_diags_create();
    if (diags == NULL) return TGC_EXIT_FAILED;
    tgc_partitions *parts = NULL;
    tgc_status s = tgc_graph_partition(g, placed, diags, &parts);
    if (s == TGC_OK) s = tgc_partitions_validate(parts, diags);
    if (s != TGC_OK) {
        tgc_partitions_free(parts);
        return failed(diags, s == TGC_ERR_NOMEM ? s : TGC_ERR_RUNTIME); /* a bad partition is tgc's bug */
    }
    tgc_partitions_summary(parts, out_path != NULL ? stdout : stderr);
    dump_job job = {g, placed, format, NULL, diags, parts, 0};
    int rc = TGC_EXIT_OK, err = 0;
    if (format == FORMAT_YAML && out_path != NULL) {
        /* -o DIR: DIR/DEVICE.yaml per partition, `file:` paths relative to DIR. */
        err = make_dirs(out_path);
        if (err != 0) fprintf(stderr, "tgc: error: cannot create directory '%s': %s\n", out_path, strerror(err));
        for (int i = 0; err == 0 && i < tgc_partitions_count(parts); i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.yaml", out_path, tgc_partitions_label(parts, i));
            for (char *c = path + strlen(out_path) + 1; *c; c++)
                if (*c == '/' || *c == ':') *c = '_'; /* node names may hold them */
            job.part = i;
            job.dest_dir = out_path;
            if ((err = tgc_write_atomically(path, write_dump, &job)) != 0)
                fprintf(stderr, "tgc: error: cannot write '%s': %s\n", path, strerror(err));
        }
    } else if (format == FORMAT_YAML) {
        for (int i = 0; err == 0 && i < tgc_partitions_count(parts); i++) {
            printf("--- # partition %s\n", tgc_partitions_label(parts, i));
            job.part = i;
            if (dump(&job, stdout) != TGC_OK) err = EIO;
        }
    } else if (out_path != NULL) {
        char *copy = strdup(out_path);
        char *slash = copy ? strrchr(copy, '/') : NULL;
        job.dest_dir = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
        err = copy ? tgc_write_atomically(out_path, write_dump, &job) : ENOMEM;
        if (err != 0) fprintf(stderr, "tgc: error: cannot write '%s': %s\n", out_path, strerror(err));
        free(copy);
    } else if (dump(&job, stdout) != TGC_OK) {
        err = EIO;
    }
    if (err != 0) rc = TGC_EXIT_FAILED;
    tgc_diags_print(diags, stderr); /* writer messages, if any */
    tgc_partitions_free(parts);
    tgc_diags_free(diags);
    return rc;
}

typedef struct memory_job {
    const tgc_memory_plan *mp;
    int json;
    tgc_diags *diags;
} memory_job;

static int write_memory(FILE *f, void *ctx) {
    const memory_job *job = ctx;
    return tgc_memory_plan_write(job->mp, f, job->json, job->diags) == TGC_OK ? 0 : EIO;
}

/* --dump optimized: replaces *g (loaded) by its optimized graph at `level`
 * for `devices` (NULL: cpu, as tgc run's default), which keeps the loaded
 * one alive as the owner of the weights it borrows: both are freed by
 * tgc_graph_free of the result via the holder below. The report goes to
 * standard error, or standard output when the dump goes to a file. On
 * failure *g is freed and NULL. (The other dumps compile through
 * tgc_graph_place and tgc_graph_memory_plan, as a run does.) */
static tgc_status optimize(tgc_graph **g, tgc_optimize_level level, int float16, const char *devices,
                           const char *out_path, tgc_diags *diags) {
    tgc_optimize_report rep;
    tgc_graph *opt = NULL;
    tgc_optimize_options o = {.level = level, .devices = devices != NULL ? devices : "cpu", .float16 = float16};
    tgc_status s = tgc_graph_optimize_with(*g, &o, &rep, diags, &opt);
    if (s == TGC_OK) s = tgc_graph_adopt_source(opt, *g);
    if (s != TGC_OK) {
        tgc_graph_free(opt);
        tgc_graph_free(*g);
        *g = NULL;
        return s;
    }
    tgc_optimize_report_print(&rep, out_path != NULL ? stdout : stderr);
    *g = opt;
    return TGC_OK;
}

/* --dump memory: the static memory plan, per device. Returns the exit code. */
static int dump_memory(const char *model, const tgc_graph_load_options *lopts, tgc_optimize_level level,
                       const char *devices, const char *bind, const char *format, const char *out_path,
                       const tgc_place_options *popts) {
    const char *limits = popts->memory_limits;
    if (devices == NULL)
        return tgc_usage_error("compile", "--dump memory needs --devices LIST (e.g. --devices cpu,gpu0)");
    int json = strcmp(format, "json") == 0;
    if (!json && strcmp(format, "table") != 0)
        return tgc_usage_error("compile", "unknown format '%s' for --dump memory (table or json)", format);
    tgc_diags *diags = tgc_diags_create();
    if (diags == NULL) return TGC_EXIT_FAILED;
    tgc_graph *g = NULL;
    tgc_status s = tgc_graph_load_with(model, lopts, diags, &g);
    if (s != TGC_OK) return failed(diags, s);
    tgc_memory_plan *mp = NULL;
    /* compiled (optimized, placed, partitioned) as the session will */
    tgc_memory_plan_options o = {.soft_placement = popts->soft_placement, .bind = bind, .optimize = level,
                                 .placement = popts->placement, .memory_limits = limits, .threads = popts->threads,
                                 .max_inflight = popts->max_inflight, .float16 = popts->float16};
    s = tgc_graph_memory_plan(g, devices, &o, diags, &mp);
    if (s != TGC_OK) {
        tgc_graph_free(g);
        return failed(diags, s);
    }
    if ((s = tgc_memory_plan_check(mp, limits, diags)) != TGC_OK) {
        tgc_memory_plan_free(mp);
        tgc_graph_free(g);
        tgc_diags_print(diags, stderr);
        tgc_diags_free(diags);
        return TGC_EXIT_USAGE;
    }
    tgc_diags_print(diags, stderr); /* warnings: soft placement's relaxations, peaks that cannot fit */
    memory_job job = {mp, json, diags};
    int err = out_path != NULL ? tgc_write_atomically(out_path, write_memory, &job) : write_memory(stdout, &job);
    if (err != 0) fprintf(stderr, "tgc: error: cannot write '%s': %s\n", out_path ? out_path : "standard output",
                          strerror(err));
    tgc_memory_plan_free(mp);
    tgc_graph_free(g);
    tgc_diags_free(diags);
    return err == 0 ? TGC_EXIT_OK : TGC_EXIT_FAILED;
}

int tgc_cmd_compile(int argc, char **argv) {
    const char *model = NULL, *out_path = NULL, *dump_name = "shapes", *format_name = "yaml", *devices = NULL;
    const char *bind = NULL, *limits = NULL;
    tgc_graph_load_options lopts = {0};
    bool format_given = false;
    tgc_place_options popts = {0};
    tgc_optimize_level level = TGC_OPTIMIZE_ALL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(compile_usage, stdout);
            return TGC_EXIT_OK;
        } else if (strcmp(a, "--dump") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--devices") == 0 ||
                   strcmp(a, "--format") == 0 || strcmp(a, "--bind") == 0 || strcmp(a, "--weights-dir") == 0 ||
                   strcmp(a, "--load-limits") == 0 || strcmp(a, "--optimize") == 0 ||
                   strcmp(a, "--memory-limit") == 0 || strcmp(a, "--placement") == 0 ||
                   strcmp(a, "--threads") == 0 || strcmp(a, "--inflight") == 0) {
            if (i + 1 >= argc) return tgc_usage_error("compile", "%s needs a value", a);
            const char *v = argv[++i];
            if (strcmp(a, "-o") == 0) out_path = v;
            else if (strcmp(a, "--optimize") == 0) {
                if (!tgc_parse_optimize_level(v, &level)) return tgc_usage_error("compile", "--optimize takes 0, 1 or 2, not '%s'", v);
            }
            else if (strcmp(a, "--weights-dir") == 0) lopts.weights_dir = v;
            else if (strcmp(a, "--load-limits") == 0) {
                tgc_diags *d = tgc_diags_create();
                tgc_status ls = d != NULL ? tgc_load_limits_parse(v, &lopts, d) : TGC_ERR_NOMEM;
                if (ls != TGC_OK && d != NULL) tgc_diags_print(d, stderr);
                tgc_diags_free(d);
                if (ls != TGC_OK) return ls == TGC_ERR_NOMEM ? TGC_EXIT_FAILED : TGC_EXIT_USAGE;
            }
            else if (strcmp(a, "--bind") == 0) bind = v;
            else if (strcmp(a, "--memory-limit") == 0) limits = v;
            else if (strcmp(a, "--threads") == 0) popts.threads = v;
            else if (strcmp(a, "--placement") == 0) {
                if (!tgc_parse_placement(v, &popts.placement))
                    return tgc_usage_error("compile", "--placement takes rules or auto, not '%s'", v);
            } else if (strcmp(a, "--inflight") == 0) {
                char *end;
                long n = strtol(v, &end, 10);
                if (*end != '\0' || n < 1 || n > 1024)
                    return tgc_usage_error("compile", "--inflight takes a count from 1 to 1024, got '%s'", v);
                popts.max_inflight = (int)n;
            }
            else if (strcmp(a, "--dump") == 0) dump_name = v;
            else if (strcmp(a, "--devices") == 0) devices = v;
            else {
                format_name = v;
                format_given = true;
            }
        } else if (strcmp(a, "--soft-placement") == 0) {
            popts.soft_placement = 1;
        } else if (strcmp(a, "--float16") == 0) {
            popts.float16 = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            return tgc_usage_error("compile", "unknown option '%s'", a);
        } else if (model == NULL) {
            model = a;
        } else {
            return tgc_usage_error("compile", "more than one model given ('%s' and '%s')", model, a);
        }
    }
    if (model == NULL) return tgc_usage_error("compile", "no model file given");
    popts.memory_limits = limits;
    if (strcmp(dump_name, "memory") == 0)
        return dump_memory(model, &lopts, level, devices, bind, format_given ? format_name : "table", out_path,
                           &popts);
    if (bind != NULL) return tgc_usage_error("compile", "--bind is for --dump memory");
    if (limits != NULL && popts.placement != TGC_PLACEMENT_AUTO)
        return tgc_usage_error("compile", "--memory-limit is for --dump memory, or for --placement auto");
    bool placed_dump = strcmp(dump_name, "placed") == 0;
    bool parts_dump = strcmp(dump_name, "partitioned") == 0;
    bool optimized_dump = strcmp(dump_name, "optimized") == 0;
    if (!placed_dump && !parts_dump && !optimized_dump && strcmp(dump_name, "shapes") != 0)
        return tgc_usage_error("compile",
                               "unknown dump '%s' (this tgc knows: shapes, optimized, placed, partitioned, memory)",
                               dump_name);
    dump_format format = FORMAT_YAML;
    if (strcmp(format_name, "json") == 0) format = FORMAT_JSON;
    else if (strcmp(format_name, "dot") == 0) format = FORMAT_DOT;
    else if (strcmp(format_name, "yaml") != 0)
        return tgc_usage_error("compile", "unknown format '%s' (yaml, json or dot)", format_name);
    if (!placed_dump && !parts_dump && format != FORMAT_YAML)
        return tgc_usage_error("compile", "--dump %s is written as yaml only; --format %s needs --dump placed",
                               dump_name, format_name);
    if (placed_dump && devices == NULL)
        return tgc_usage_error("compile", "--dump placed needs --devices LIST (e.g. --devices cpu,gpu0)");
    if (parts_dump && devices == NULL)
        return tgc_usage_error("compile", "--dump partitioned needs --devices LIST (e.g. --devices cpu,gpu0)");
    if (popts.soft_placement && devices == NULL)
        return tgc_usage_error("compile", "--soft-placement needs --devices LIST");

    tgc_diags *diags = tgc_diags_create();
    if (diags == NULL) return TGC_EXIT_FAILED;
    tgc_graph *g = NULL;
    tgc_status s = tgc_graph_load_with(model, &lopts, diags, &g);
    if (s != TGC_OK) return failed(diags, s);
    if (optimized_dump && (s = optimize(&g, level, popts.float16, devices, out_path, diags)) != TGC_OK)
        return failed(diags, s);
    tgc_placed *placed = NULL;
    if (devices != NULL) {
        /* placed and partitioned through the passes, as a run's: the dumps are what runs */
        popts.optimize = placed_dump || parts_dump ? level : TGC_OPTIMIZE_NONE;
        popts.float16 = placed_dump || parts_dump ? popts.float16 : 0;
        s = tgc_graph_place(g, devices, &popts, diags, &placed);
        if (s != TGC_OK) {
            tgc_graph_free(g);
            return failed(diags, s);
        }
    }
    tgc_diags_print(diags, stderr); /* warnings: soft placement's relaxations */
    tgc_diags_free(diags);          /* printed; the writer reports into a fresh list */
    if (placed != NULL) tgc_placed_summary(placed, out_path != NULL ? stdout : stderr);
    if (parts_dump) {
        int prc = write_partitions(g, placed, format, out_path);
        tgc_placed_free(placed);
        tgc_graph_free(g);
        return prc;
    }

    diags = tgc_diags_create();
    int rc = TGC_EXIT_OK;
    dump_job job = {g, placed_dump ? placed : NULL, format, NULL, diags, NULL, 0};
    if (diags == NULL) rc = TGC_EXIT_FAILED;
    else if (out_path == NULL) {
        if (dump(&job, stdout) != TGC_OK) rc = TGC_EXIT_FAILED;
    } else {
        char *copy = strdup(out_path);
        char *slash = copy ? strrchr(copy, '/') : NULL;
        job.dest_dir = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
        int err = copy ? tgc_write_atomically(out_path, write_dump, &job) : ENOMEM;
        if (err != 0) {
            fprintf(stderr, "tgc: error: cannot write '%s': %s\n", out_path, strerror(err));
            rc = TGC_EXIT_FAILED;
        }
        free(copy);
    }
    tgc_diags_print(diags, stderr); /* writer messages, if any */
    tgc_placed_free(placed);
    tgc_graph_free(g);
    tgc_diags_free(diags);
    return rc;
}
