/* tgc compile: load, validate and infer a graph, place it on a list of
 * devices when one is given, then dump what the next stage gets. */
#include "tools/cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char compile_usage[] =
    "usage: tgc compile MODEL.yaml [--devices LIST [--soft-placement]]\n"
    "                   [--dump shapes|placed] [--format yaml|json|dot] [-o FILE]\n"
    "\n"
    "Loads MODEL.yaml (format tgc/1), checks every rule of the format and infers\n"
    "each tensor's dtype and shape. With --devices it also gives every node a\n"
    "device (see docs/placement.md) and prints a summary: nodes per device, and\n"
    "the tensors that will cross devices. Errors are printed as\n"
    "FILE:LINE:COL: error: ... and nothing is written.\n"
    "\n"
    "  --devices LIST    place on these devices: cpu (= cpu0), cpuN, gpu (= gpu0), gpuN,\n"
    "                    comma-separated, e.g. cpu,gpu0 or cpu0,cpu1\n"
    "  --soft-placement  relax device specs that cannot hold (to their kind, then to\n"
    "                    any device) with a warning, instead of failing\n"
    "  --dump shapes     write the graph with every node's inferred `out` (the default)\n"
    "  --dump placed     write the placement (needs --devices), in --format:\n"
    "  --format yaml     a tgc/1 graph with every node's `device:` filled in (the default);\n"
    "                    compiling it again on the same devices gives the same placement\n"
    "  --format json     {\"nodes\": {NODE: {\"device\": ..., \"reason\": ...}}}\n"
    "  --format dot      a Graphviz graph, nodes coloured by device (dot -Tsvg)\n"
    "  -o FILE           write the dump to FILE (atomically) instead of standard output;\n"
    "                    the placement summary then goes to standard output, else to\n"
    "                    standard error\n";

typedef enum dump_format { FORMAT_YAML, FORMAT_JSON, FORMAT_DOT } dump_format;

typedef struct dump_job {
    tgc_graph *g;
    tgc_placed *placed; /* NULL: dump shapes */
    dump_format format;
    const char *dest_dir;
    tgc_diags *diags;
} dump_job;

static tgc_status dump(const dump_job *job, FILE *f) {
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
    return s == TGC_ERR_INVALID || s == TGC_ERR_IO ? TGC_EXIT_USAGE : TGC_EXIT_FAILED;
}

int tgc_cmd_compile(int argc, char **argv) {
    const char *model = NULL, *out_path = NULL, *dump_name = "shapes", *format_name = "yaml", *devices = NULL;
    tgc_place_options popts = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(compile_usage, stdout);
            return TGC_EXIT_OK;
        } else if (strcmp(a, "--dump") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--devices") == 0 ||
                   strcmp(a, "--format") == 0) {
            if (i + 1 >= argc) return tgc_usage_error("compile", "%s needs a value", a);
            const char *v = argv[++i];
            if (strcmp(a, "-o") == 0) out_path = v;
            else if (strcmp(a, "--dump") == 0) dump_name = v;
            else if (strcmp(a, "--devices") == 0) devices = v;
            else format_name = v;
        } else if (strcmp(a, "--soft-placement") == 0) {
            popts.soft_placement = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            return tgc_usage_error("compile", "unknown option '%s'", a);
        } else if (model == NULL) {
            model = a;
        } else {
            return tgc_usage_error("compile", "more than one model given ('%s' and '%s')", model, a);
        }
    }
    if (model == NULL) return tgc_usage_error("compile", "no model file given");
    bool placed_dump = strcmp(dump_name, "placed") == 0;
    if (!placed_dump && strcmp(dump_name, "shapes") != 0)
        return tgc_usage_error("compile", "unknown dump '%s' (this tgc knows: shapes, placed)", dump_name);
    dump_format format = FORMAT_YAML;
    if (strcmp(format_name, "json") == 0) format = FORMAT_JSON;
    else if (strcmp(format_name, "dot") == 0) format = FORMAT_DOT;
    else if (strcmp(format_name, "yaml") != 0)
        return tgc_usage_error("compile", "unknown format '%s' (yaml, json or dot)", format_name);
    if (!placed_dump && format != FORMAT_YAML)
        return tgc_usage_error("compile", "--dump shapes is written as yaml only; --format %s needs --dump placed",
                               format_name);
    if (placed_dump && devices == NULL)
        return tgc_usage_error("compile", "--dump placed needs --devices LIST (e.g. --devices cpu,gpu0)");
    if (popts.soft_placement && devices == NULL)
        return tgc_usage_error("compile", "--soft-placement needs --devices LIST");

    tgc_diags *diags = tgc_diags_create();
    if (diags == NULL) return TGC_EXIT_FAILED;
    tgc_graph *g = NULL;
    tgc_status s = tgc_graph_load(model, diags, &g);
    if (s != TGC_OK) return failed(diags, s);
    tgc_placed *placed = NULL;
    if (devices != NULL) {
        s = tgc_graph_place(g, devices, &popts, diags, &placed);
        if (s != TGC_OK) {
            tgc_graph_free(g);
            return failed(diags, s);
        }
    }
    tgc_diags_print(diags, stderr); /* warnings: soft placement's relaxations */
    tgc_diags_free(diags);          /* printed; the writer reports into a fresh list */
    if (placed != NULL) tgc_placed_summary(placed, out_path != NULL ? stdout : stderr);

    diags = tgc_diags_create();
    int rc = TGC_EXIT_OK;
    dump_job job = {g, placed_dump ? placed : NULL, format, NULL, diags};
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
