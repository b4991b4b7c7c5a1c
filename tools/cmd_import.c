/* tgc import: an ONNX model into a tgc/1 graph file with its weights beside it. */
#include "tools/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char import_usage[] =
    "usage: tgc import MODEL.onnx [-o MODEL.yaml] [--load-limits LIST]\n"
    "\n"
    "Converts an ONNX model (opsets 7 to 18, older forms mapped onto the current ops; 1 to 6\n"
    "with a warning: docs/onnx-opsets.md) into a tgc/1 graph file. Weights go to\n"
    "STEM_weights/NAME.npy beside the output; small integer tensors are written inline.\n"
    "Every unsupported op, attribute and dtype is reported at once, with its count and\n"
    "first nodes. The result is loaded to check it.\n"
    "\n"
    "  -o, --output FILE   the graph file to write (default: MODEL.yaml beside MODEL.onnx)\n"
    "  --load-limits LIST  what the model may ask for (untrusted input): file=SIZE (the .onnx\n"
    "                      file, default 2GiB), nodes=N (1000000), rank=R (8), tensor=SIZE\n"
    "                      (one tensor's bytes, 64GiB), e.g. file=100MB,tensor=1GiB\n";

int tgc_cmd_import(int argc, char **argv) {
    const char *model = NULL, *output = NULL, *limits = NULL;
    for (int i = 0; i < argc; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            fputs(import_usage, stdout);
            return TGC_EXIT_OK;
        }
        if (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) {
            if (i + 1 >= argc) return tgc_usage_error("import", "%s needs a file name", opt);
            output = argv[++i];
        } else if (strcmp(opt, "--load-limits") == 0) {
            if (i + 1 >= argc) return tgc_usage_error("import", "%s needs a value", opt);
            limits = argv[++i];
        } else if (opt[0] == '-' && opt[1] != '\0') {
            return tgc_usage_error("import", "unknown option '%s'", opt);
        } else if (model != NULL) {
            return tgc_usage_error("import", "more than one model given ('%s' and '%s')", model, opt);
        } else {
            model = opt;
        }
    }
    if (model == NULL) return tgc_usage_error("import", "no model file given");

    char *default_out = NULL;
    if (output == NULL) {
        size_t len = strlen(model);
        const char *dot = strrchr(model, '.');
        const char *slash = strrchr(model, '/');
        if (dot != NULL && (slash == NULL || dot > slash + 1)) len = (size_t)(dot - model);
        default_out = malloc(len + 6);
        if (default_out == NULL) return TGC_EXIT_FAILED;
        snprintf(default_out, len + 6, "%.*s.yaml", (int)len, model);
        output = default_out;
    }

    tgc_diags *diags = tgc_diags_create();
    if (diags == NULL) {
        free(default_out);
        return TGC_EXIT_FAILED;
    }
    tgc_graph_load_options lopts = {0};
    tgc_status st = limits != NULL ? tgc_load_limits_parse(limits, &lopts, diags) : TGC_OK;
    if (st == TGC_OK) st = tgc_onnx_import_with(model, output, &lopts, diags);
    tgc_diags_print(diags, stderr);
    int rc = TGC_EXIT_OK;
    if (st == TGC_OK) {
        /* The graph just written must load: if it does not, say so and fail. */
        tgc_graph *g = NULL;
        tgc_diags *d2 = tgc_diags_create();
        lopts.max_file_bytes = 0; /* the limit was the .onnx file's */
        tgc_status ls = d2 != NULL ? tgc_graph_load_with(output, &lopts, d2, &g) : TGC_ERR_NOMEM;
        if (ls == TGC_OK) {
            printf("imported %s: %zu nodes -> %s\n", model, tgc_graph_node_count(g), output);
        } else {
            tgc_diags_print(d2, stderr);
            fprintf(stderr, "tgc: error: %s was written but does not load (%s)\n", output, tgc_status_name(ls));
            rc = ls == TGC_ERR_IO || ls == TGC_ERR_NOMEM ? TGC_EXIT_FAILED : TGC_EXIT_USAGE;
        }
        tgc_graph_free(g);
        tgc_diags_free(d2);
    } else {
        fprintf(stderr, "tgc: error: cannot import %s (%s)\n", model, tgc_status_name(st));
        rc = st == TGC_ERR_IO || st == TGC_ERR_NOMEM ? TGC_EXIT_FAILED : TGC_EXIT_USAGE;
    }
    tgc_diags_free(diags);
    free(default_out);
    return rc;
}
