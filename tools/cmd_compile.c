/* tgc compile: load, validate and infer a graph, then dump it. */
#include "tools/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char compile_usage[] =
    "usage: tgc compile MODEL.yaml [--dump shapes] [-o FILE]\n"
    "\n"
    "Loads MODEL.yaml (format tgc/1), checks every rule of the format and infers\n"
    "each tensor's dtype and shape. Errors are printed as FILE:LINE:COL: error: ...\n"
    "and nothing is written.\n"
    "\n"
    "  --dump shapes   write the graph with every node's inferred `out` (the default)\n"
    "  -o FILE         write the dump to FILE instead of standard output\n";

typedef struct dump_job {
    tgc_graph *g;
    const char *dest_dir;
    tgc_diags *diags;
} dump_job;

static int write_dump(FILE *f, void *ctx) {
    dump_job *job = ctx;
    return tgc_graph_dump_yaml(job->g, f, job->dest_dir, job->diags) == TGC_OK ? 0 : EIO;
}

int tgc_cmd_compile(int argc, char **argv) {
    const char *model = NULL, *out_path = NULL, *dump = "shapes";
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(compile_usage, stdout);
            return TGC_EXIT_OK;
        } else if (strcmp(a, "--dump") == 0 || strcmp(a, "-o") == 0) {
            if (i + 1 >= argc) return tgc_usage_error("compile", "%s needs a value", a);
            if (a[1] == 'o') out_path = argv[++i];
            else dump = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            return tgc_usage_error("compile", "unknown option '%s'", a);
        } else if (model == NULL) {
            model = a;
        } else {
            return tgc_usage_error("compile", "more than one model given ('%s' and '%s')", model, a);
        }
    }
    if (model == NULL) return tgc_usage_error("compile", "no model file given");
    if (strcmp(dump, "shapes") != 0)
        return tgc_usage_error("compile", "unknown dump '%s' (this tgc knows: shapes)", dump);

    tgc_diags *diags = tgc_diags_create();
    if (diags == NULL) return TGC_EXIT_FAILED;
    tgc_graph *g = NULL;
    tgc_status s = tgc_graph_load(model, diags, &g);
    tgc_diags_print(diags, stderr);
    if (s != TGC_OK) {
        if (tgc_diags_error_count(diags) > 1)
            fprintf(stderr, "%zu errors; nothing written\n", tgc_diags_error_count(diags));
        tgc_diags_free(diags);
        return s == TGC_ERR_INVALID || s == TGC_ERR_IO ? TGC_EXIT_USAGE : TGC_EXIT_FAILED;
    }
    tgc_diags_free(diags); /* printed; the writer reports into a fresh list */
    diags = tgc_diags_create();
    int rc = TGC_EXIT_OK;
    if (diags == NULL) rc = TGC_EXIT_FAILED;
    else if (out_path == NULL) {
        if (tgc_graph_dump_yaml(g, stdout, NULL, diags) != TGC_OK) rc = TGC_EXIT_FAILED;
    } else {
        char *copy = strdup(out_path);
        char *slash = copy ? strrchr(copy, '/') : NULL;
        const char *dest_dir = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
        dump_job job = {g, dest_dir, diags};
        int err = copy ? tgc_write_atomically(out_path, write_dump, &job) : ENOMEM;
        if (err != 0) {
            fprintf(stderr, "tgc: error: cannot write '%s': %s\n", out_path, strerror(err));
            rc = TGC_EXIT_FAILED;
        }
        free(copy);
    }
    tgc_diags_print(diags, stderr); /* writer messages, if any */
    tgc_graph_free(g);
    tgc_diags_free(diags);
    return rc;
}
