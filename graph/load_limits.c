/* The limits an untrusted model is held to at load (graph/graph.h,
 * tgc_graph_load_options): the file's size, the count of nodes, the rank
 * and bytes of every tensor. Each has a default that fits real models and
 * an option to raise or lower it. */
#include "graph/graph.h"

#include "support/checked.h"
#include "support/diag.h"
#include "support/parse_size.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tgc_load_limits tgc_load_limits_of(const tgc_graph_load_options *opts) {
    tgc_load_limits l = {TGC_DEFAULT_MAX_FILE_BYTES, TGC_DEFAULT_MAX_NODES, TGC_DEFAULT_MAX_TENSOR_BYTES,
                         TGC_MAX_RANK};
    if (opts == NULL) return l;
    if (opts->max_file_bytes > 0) l.file_bytes = opts->max_file_bytes;
    if (opts->max_nodes > 0) l.nodes = opts->max_nodes;
    if (opts->max_tensor_bytes > 0) l.tensor_bytes = opts->max_tensor_bytes;
    if (opts->max_rank > 0 && opts->max_rank < TGC_MAX_RANK) l.rank = opts->max_rank;
    return l;
}

tgc_status tgc_load_limits_check_file(const tgc_load_limits *l, const char *path, int64_t size, tgc_diags *diags) {
    if (size <= l->file_bytes) return TGC_OK;
    tgc_diag_add(diags, TGC_SEV_ERROR, path, (tgc_srcpos){0, 0}, "over-limit",
                 "the file has %" PRId64 " bytes or more, above the limit of %" PRId64
                 " (--load-limits file=SIZE raises it)",
                 size, l->file_bytes);
    return TGC_ERR_INVALID;
}

const char *tgc_load_limits_tensor(const tgc_graph *g, const tgc_shape *shape, size_t elem_size, char *buf,
                                   size_t size) {
    const tgc_load_limits *l = &g->limits;
    if (shape->rank > l->rank) {
        snprintf(buf, size, "its rank %d is above the limit of %d (--load-limits rank=R)", shape->rank, l->rank);
        return buf;
    }
    if (shape->rank < 0) return NULL;
    int64_t dims[TGC_MAX_RANK];
    size_t bytes;
    for (int i = 0; i < shape->rank; i++) dims[i] = tgc_dim_known(shape->dims[i]) ? shape->dims[i].v : 1;
    if (!tgc_checked_dims_nbytes(shape->rank, dims, elem_size, &bytes) || (int64_t)bytes <= l->tensor_bytes)
        return NULL; /* overflow is size-overflow's to report */
    snprintf(buf, size, "its %zu bytes are above the limit of %" PRId64 " (--load-limits tensor=SIZE)", bytes,
             l->tensor_bytes);
    return buf;
}

tgc_status tgc_load_limits_parse(const char *spec, tgc_graph_load_options *opts, tgc_diags *diags) {
    static const char syntax[] = "file=SIZE,nodes=N,rank=R,tensor=SIZE (any of them), SIZE like 2GiB or 1000";
    tgc_graph_load_options o = *opts;
    const char *p = spec;
    while (p != NULL && *p != '\0') {
        const char *comma = strchr(p, ','), *end = comma != NULL ? comma : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        int64_t v = 0;
        bool ok = eq != NULL && tgc_parse_size(eq + 1, (size_t)(end - eq - 1), &v) && v >= 1;
        size_t key = eq != NULL ? (size_t)(eq - p) : 0;
        if (ok && key == 4 && strncmp(p, "file", 4) == 0) o.max_file_bytes = v;
        else if (ok && key == 5 && strncmp(p, "nodes", 5) == 0) o.max_nodes = v;
        else if (ok && key == 6 && strncmp(p, "tensor", 6) == 0) o.max_tensor_bytes = v;
        else if (ok && key == 4 && strncmp(p, "rank", 4) == 0 && v <= TGC_MAX_RANK) o.max_rank = (int)v;
        else {
            tgc_diag_add(diags, TGC_SEV_ERROR, "--load-limits", (tgc_srcpos){0, 0}, "bad-load-limits",
                         "'%.*s' is not a limit: %s (rank at most %d)", (int)(end - p), p, syntax, TGC_MAX_RANK);
            return TGC_ERR_INVALID;
        }
        p = comma != NULL ? comma + 1 : NULL;
    }
    *opts = o;
    return TGC_OK;
}
