/* Writes a graph back as a tgc/1 document through libyaml's emitter, so
 * quoting is always right. Small things (inputs, initializers, attrs, shapes,
 * `out` entries) are flow mappings on one line; nodes are block mappings.
 * The placer's dump is the same document with every node's `device:` set
 * to the device it got (tgc_graph_dump_yaml_devices). */
#include "tgc.h"

#include "graph/graph.h"
#include "graph/npy.h"
#include "graph/op_registry.h"
#include "graph/subgraph.h"
#include "support/alloc.h"
#include "support/dtype_elem.h"
#include "support/string_slots.h"
#include "support/open_beneath.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct dumper {
    yaml_emitter_t em;
    const tgc_graph *g; /* the graph being written: the top level, or a subgraph inside it */
    /* The subgraphs being written, outermost first: scope[0] is the top
     * level; scope[k] (k > 0) is held by owner[k], a node of scope[k - 1]. */
    const tgc_graph *scope[TGC_MAX_SUBGRAPH_DEPTH + 1];
    const tgc_node *owner[TGC_MAX_SUBGRAPH_DEPTH + 1];
    int level;
    const char *dest_dir;
    const char *const *devices; /* per node id of the top level: the device to write, or NULL */
    tgc_node_device_fn device_of; /* or per node of any graph (tgc_graph_dump_yaml_placed) */
    void *device_ctx;
    tgc_diags *diags;
    bool failed;
    bool reported; /* the failure has its own message in diags */
    /* Weights that exist only in memory, named by their `file:` but not
     * written (no dest_dir; past TGC_DUMP_INLINE_MAX elements), and the first. */
    int64_t not_written;
    const char *first_not_written;
} dumper;

/* The most elements of an in-memory weight a dump without a destination
 * folder writes inline; a bigger one (an ONNX model's weights, a folded
 * one) is named by its `file:` only, so that a dump to the terminal shows
 * the graph rather than millions of numbers. */
#define TGC_DUMP_INLINE_MAX 4096

static void emit(dumper *d, yaml_event_t *ev) {
    if (!d->failed && !yaml_emitter_emit(&d->em, ev)) d->failed = true;
}

static void scalar_styled(dumper *d, const char *s, yaml_scalar_style_t style) {
    yaml_event_t ev;
    if (d->failed) return;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1, style)) {
        d->failed = true;
        return;
    }
    emit(d, &ev);
}

/* Strings (names, op names, string attrs): plain where YAML allows; empty
 * strings need quotes. */
static void str(dumper *d, const char *s) { scalar_styled(d, s, s[0] ? YAML_ANY_SCALAR_STYLE : YAML_SINGLE_QUOTED_SCALAR_STYLE); }

static void num(dumper *d, const char *s) { scalar_styled(d, s, YAML_PLAIN_SCALAR_STYLE); }

static void int_scalar(dumper *d, int64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    num(d, buf);
}

/* The shortest decimal that reads back as the same double (or float when
 * as_float), in YAML's spelling for infinities and NaN. */
static void float_scalar(dumper *d, double v, bool as_float) {
    char buf[40];
    if (isnan(v)) snprintf(buf, sizeof buf, ".nan");
    else if (isinf(v)) snprintf(buf, sizeof buf, v > 0 ? ".inf" : "-.inf");
    else
        for (int p = 1; p <= 17; p++) {
            snprintf(buf, sizeof buf, "%.*g", p, v);
            double back = strtod(buf, NULL);
            if (as_float ? (float)back == (float)v : back == v) break;
        }
    num(d, buf);
}

static void begin_map(dumper *d, bool flow) {
    yaml_event_t ev;
    yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
    emit(d, &ev);
}

static void end_map(dumper *d) {
    yaml_event_t ev;
    yaml_mapping_end_event_initialize(&ev);
    emit(d, &ev);
}

static void begin_seq(dumper *d, bool flow) {
    yaml_event_t ev;
    yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
    emit(d, &ev);
}

static void end_seq(dumper *d) {
    yaml_event_t ev;
    yaml_sequence_end_event_initialize(&ev);
    emit(d, &ev);
}

static void dim_scalar(dumper *d, tgc_dim dim) {
    if (tgc_dim_known(dim)) int_scalar(d, dim.v);
    else str(d, d->scope[0]->symbols[dim.sym]);
}

static void shape_seq(dumper *d, const tgc_shape *s) {
    begin_seq(d, true);
    for (int i = 0; i < s->rank; i++) dim_scalar(d, s->dims[i]);
    end_seq(d);
}

/* The text of reference r in scope `level`: "node" or "node:k"; a capture
 * is written as the outer value it stands for, as the file wrote it. */
static void ref_text(const dumper *d, int level, tgc_ref r, char *buf, size_t size) {
    const tgc_graph *g = d->scope[level];
    const tgc_node *n = &g->nodes[r.node];
    if (level > 0 && n->kind == TGC_NODE_INPUT && r.node >= g->n_inputs_nodes) {
        int32_t j = tgc_graph_feed_index(g, r.node) - g->n_inputs_nodes;
        if (j >= 0) {
            ref_text(d, level - 1, d->owner[level]->inputs[g->capture_input[j]], buf, size);
            return;
        }
    }
    if (r.port == 0) snprintf(buf, size, "%s", n->name);
    else snprintf(buf, size, "%s:%" PRId32, n->name, r.port);
}

static void ref_scalar(dumper *d, tgc_ref r, bool control) {
    if (r.node < 0) {
        str(d, "");
        return;
    }
    char buf[1100];
    buf[0] = '^';
    ref_text(d, d->level, r, buf + control, sizeof buf - 1);
    str(d, buf);
}

/* Path of `file` (relative to src_dir) as seen from dest_dir. Falls back to
 * an absolute path when the two share no prefix worth using. */
static char *relocate(const char *src_dir, const char *file, const char *dest_dir) {
    if (dest_dir == NULL || file[0] == '/') return tgc_strdup(file);
    char src_real[PATH_MAX], dest_real[PATH_MAX];
    if (realpath(src_dir, src_real) == NULL || realpath(dest_dir, dest_real) == NULL) return tgc_strdup(file);
    if (strcmp(src_real, dest_real) == 0) return tgc_strdup(file);
    /* Common directory prefix, then one "../" per remaining dest component. */
    size_t common = 0;
    for (size_t i = 0; src_real[i] && src_real[i] == dest_real[i]; i++)
        if (src_real[i + 1] == '/' || src_real[i + 1] == '\0')
            if (dest_real[i + 1] == '/' || dest_real[i + 1] == '\0') common = i + 1;
    int ups = 0;
    for (const char *p = dest_real + common; *p; p++)
        if (*p == '/' && p[1] != '\0') ups++;
    const char *src_rest = src_real + common + (src_real[common] == '/');
    size_t size = (size_t)ups * 3 + strlen(src_rest) + strlen(file) + 3;
    char *out = tgc_malloc(size);
    if (out == NULL) return NULL;
    out[0] = '\0';
    for (int i = 0; i < ups; i++) strcat(out, "../");
    if (*src_rest) {
        strcat(out, src_rest);
        strcat(out, "/");
    }
    strcat(out, file);
    return out;
}

/* Each value in the fewest digits that read back to the same element:
 * float32, float16 and bfloat16 as floats, float64 as a double, integers
 * exactly (uint64 above INT64_MAX too). */
static void tensor_values(dumper *d, const tgc_const *c) {
    int64_t numel = tgc_shape_numel(&c->shape);
    begin_seq(d, true);
    for (int64_t i = 0; i < numel; i++) {
        if (c->dtype == TGC_STRING) { /* double quotes: any text, escaped, never read as a number */
            scalar_styled(d, tgc_string_slot_get(c->data, (size_t)i), YAML_DOUBLE_QUOTED_SCALAR_STYLE);
        } else if (c->dtype == TGC_BOOL) {
            num(d, ((const uint8_t *)c->data)[i] ? "true" : "false");
        } else if (c->dtype == TGC_UINT64) {
            char buf[24];
            snprintf(buf, sizeof buf, "%" PRIu64, ((const uint64_t *)c->data)[i]);
            num(d, buf);
        } else if (tgc_dtype_is_float(c->dtype)) {
            float_scalar(d, tgc_elem_as_double(c->dtype, c->data, i), c->dtype != TGC_FLOAT64);
        } else {
            int_scalar(d, tgc_elem_as_int64(c->dtype, c->data, i));
        }
    }
    end_seq(d);
}

/* `path` (which stays beneath where it starts) without "." and "x/.."
 * components, in a new block; NULL when out of memory. */
static char *normalized(const char *path) {
    size_t len = strlen(path);
    char *out = tgc_malloc(len + 1);
    if (out == NULL) return NULL;
    size_t n = 0;
    for (const char *p = path; *p;) {
        size_t c = strcspn(p, "/");
        if (c == 2 && p[0] == '.' && p[1] == '.') {
            while (n > 0 && out[n - 1] != '/') n--; /* drop the last component */
            if (n > 0) n--;
        } else if (c > 0 && !(c == 1 && p[0] == '.')) {
            if (n > 0) out[n++] = '/';
            memcpy(out + n, p, c);
            n += c;
        }
        p += c + (p[c] == '/');
    }
    out[n] = '\0';
    return out;
}

/* The `file:` path to write for c. As written without a dest_dir. Else a
 * path relative to dest_dir and beneath it, so the dump reloads under the
 * loader's rule (support/open_beneath.h): the file's own where it lies
 * beneath dest_dir; otherwise (or when it exists only in memory) its data
 * is written there as an .npy, at the path the graph gave it (atomically; a file of that name is replaced).
 * NULL on failure (reported when it is more than out of memory). */
static char *file_for_dump(dumper *d, const tgc_const *c) {
    if (d->dest_dir == NULL) return tgc_strdup(c->file);
    if (!c->unsaved) {
        char *rel = relocate(d->g->dir, c->file, d->dest_dir);
        if (rel == NULL || tgc_path_stays_beneath(rel)) return rel;
        tgc_free(rel);
    }
    char *path = normalized(c->file);
    if (path == NULL) return NULL;
    tgc_npy a = {.dtype = c->dtype, .rank = c->shape.rank, .data = c->data, .nbytes = c->nbytes};
    for (int i = 0; i < c->shape.rank; i++) a.dims[i] = c->shape.dims[i].v;
    void *bytes = NULL;
    size_t size = 0;
    char err[PATH_MAX + 256] = "";
    tgc_status st = tgc_npy_serialize(&a, &bytes, &size);
    if (st == TGC_OK) st = tgc_write_beneath(d->dest_dir, path, bytes, size, err, sizeof err);
    tgc_free(bytes);
    if (st != TGC_OK) {
        if (st != TGC_ERR_NOMEM) {
            tgc_diag_add(d->diags, TGC_SEV_ERROR, d->dest_dir, (tgc_srcpos){0, 0}, "io",
                         "cannot write the weights file '%s' beside the dump: it %s", path,
                         err[0] ? err : tgc_status_name(st));
            d->reported = true;
        }
        tgc_free(path);
        return NULL;
    }
    return path;
}

/* dtype, shape and file or values; the caller opened the mapping. */
static void tensor_body(dumper *d, const tgc_const *c) {
    str(d, "dtype");
    str(d, tgc_dtype_name(c->dtype));
    str(d, "shape");
    shape_seq(d, &c->shape);
    bool in_memory = c->unsaved && d->dest_dir == NULL;
    if (c->file != NULL && in_memory && tgc_shape_numel(&c->shape) > TGC_DUMP_INLINE_MAX) {
        if (d->not_written++ == 0) d->first_not_written = c->file;
        str(d, "file");
        str(d, c->file);
    } else if (c->file != NULL && !in_memory) {
        char *path = d->failed ? NULL : file_for_dump(d, c);
        if (path == NULL) {
            d->failed = true;
            return;
        }
        str(d, "file");
        str(d, path);
        tgc_free(path);
    } else {
        str(d, "values");
        tensor_values(d, c);
    }
}

static void dump_subgraph(dumper *d, const tgc_node *owner, const tgc_graph *sub);

static void attr_value(dumper *d, const tgc_node *owner, const tgc_attr *a) {
    switch (a->type) {
    case TGC_ATTR_INT: int_scalar(d, a->i); break;
    case TGC_ATTR_FLOAT: float_scalar(d, a->f, false); break;
    case TGC_ATTR_STRING: str(d, a->s); break;
    case TGC_ATTR_INTS:
        begin_seq(d, true);
        for (size_t i = 0; i < a->n; i++) int_scalar(d, a->ints[i]);
        end_seq(d);
        break;
    case TGC_ATTR_FLOATS:
        begin_seq(d, true);
        for (size_t i = 0; i < a->n; i++) float_scalar(d, a->floats[i], false);
        end_seq(d);
        break;
    case TGC_ATTR_STRINGS:
        begin_seq(d, true);
        for (size_t i = 0; i < a->n; i++) str(d, a->strings[i]);
        end_seq(d);
        break;
    case TGC_ATTR_TENSOR:
        begin_map(d, true);
        tensor_body(d, a->tensor);
        end_map(d);
        break;
    case TGC_ATTR_GRAPH: dump_subgraph(d, owner, a->graph); break;
    }
}

static void dump_node(dumper *d, const tgc_node *n) {
    begin_map(d, false);
    str(d, "name");
    str(d, n->name);
    if (n->source_name != NULL) {
        str(d, "source_name");
        str(d, n->source_name);
    }
    str(d, "op");
    str(d, n->op_name);
    if (tgc_node_explicit_inputs(n) + n->n_controls > 0) {
        str(d, "inputs");
        begin_seq(d, true);
        for (int i = 0; i < tgc_node_explicit_inputs(n); i++) ref_scalar(d, n->inputs[i], false);
        for (int i = 0; i < n->n_controls; i++) ref_scalar(d, n->controls[i], true);
        end_seq(d);
    }
    if (n->n_attrs > 0) {
        str(d, "attrs");
        begin_map(d, !tgc_node_has_subgraphs(n)); /* a subgraph is written as a block */
        for (int i = 0; i < n->n_attrs; i++) {
            str(d, n->attrs[i].name);
            attr_value(d, n, &n->attrs[i]);
        }
        end_map(d);
    }
    const char *device = n->device;
    if (d->level == 0 && d->devices != NULL && d->devices[n - d->g->nodes] != NULL)
        device = d->devices[n - d->g->nodes];
    const char *placed = d->device_of != NULL ? d->device_of(d->device_ctx, d->g, (int32_t)(n - d->g->nodes)) : NULL;
    if (placed != NULL) device = placed;
    if (device != NULL) {
        str(d, "device");
        str(d, device);
    }
    if (n->n_colocate > 0) {
        str(d, "colocate_with");
        begin_seq(d, true);
        for (int i = 0; i < n->n_colocate; i++) str(d, d->g->nodes[n->colocate[i].node].name);
        end_seq(d);
    }
    str(d, "out");
    begin_seq(d, false);
    for (int k = 0; k < n->n_outputs; k++) {
        begin_map(d, true);
        str(d, "dtype");
        char type[64];
        str(d, tgc_type_str(n->outputs[k].dtype, n->outputs[k].kind, type, sizeof type));
        if (n->outputs[k].shape.rank != TGC_RANK_UNKNOWN) {
            str(d, "shape");
            shape_seq(d, &n->outputs[k].shape);
        }
        end_map(d);
    }
    end_seq(d);
    end_map(d);
}

/* A graph input: the top level's as declared; a subgraph's as inferred
 * (or declared, or by name alone when neither tells). */
static void dump_input(dumper *d, const tgc_node *n) {
    begin_map(d, true);
    str(d, "name");
    str(d, n->name);
    if (n->source_name != NULL) {
        str(d, "source_name");
        str(d, n->source_name);
    }
    const tgc_tensor_info *info = &n->outputs[0];
    bool has_shape = info->dtype != TGC_DTYPE_INVALID;
    if (!has_shape && n->n_declared > 0) {
        info = &n->declared[0];
        has_shape = n->declared_has_shape[0];
    }
    if (info->dtype != TGC_DTYPE_INVALID) {
        char type[64];
        str(d, "dtype");
        str(d, tgc_type_str(info->dtype, info->kind, type, sizeof type));
    }
    if (has_shape && info->shape.rank != TGC_RANK_UNKNOWN) {
        str(d, "shape");
        shape_seq(d, &info->shape);
    }
    end_map(d);
}

/* The keys of a graph after `format`: name, inputs, outputs,
 * initializers, nodes (d->g is the graph). */
static void dump_contents(dumper *d) {
    const tgc_graph *g = d->g;
    if (g->name != NULL) {
        str(d, "name");
        str(d, g->name);
    }
    str(d, "inputs");
    begin_seq(d, false);
    for (int32_t id = 0; id < g->n_inputs_nodes; id++) dump_input(d, &g->nodes[id]);
    end_seq(d);
    str(d, "outputs");
    begin_seq(d, true);
    for (int i = 0; i < g->n_outputs; i++) {
        const char *source = g->output_sources != NULL ? g->output_sources[i] : NULL;
        if (source != NULL) { /* {ref: R, source_name: S} */
            begin_map(d, true);
            str(d, "ref");
        }
        ref_scalar(d, g->outputs[i], false);
        if (source != NULL) {
            str(d, "source_name");
            str(d, source);
            end_map(d);
        }
    }
    end_seq(d);
    str(d, "initializers");
    begin_seq(d, false);
    for (int32_t id = g->n_inputs_nodes; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        if (n->kind != TGC_NODE_CONST) continue;
        begin_map(d, true);
        str(d, "name");
        str(d, n->name);
        tensor_body(d, n->data);
        end_map(d);
    }
    end_seq(d);
    str(d, "nodes");
    begin_seq(d, false);
    for (int32_t id = g->n_inputs_nodes; id < g->n_nodes; id++)
        if (g->nodes[id].kind == TGC_NODE_OP) dump_node(d, &g->nodes[id]);
    end_seq(d);
}

/* Subgraph `sub` of node `owner` (a node of d->g), as a block mapping. */
static void dump_subgraph(dumper *d, const tgc_node *owner, const tgc_graph *sub) {
    if (d->level >= TGC_MAX_SUBGRAPH_DEPTH) { /* the loader never makes one this deep */
        d->failed = true;
        return;
    }
    const tgc_graph *outer = d->g;
    d->level++;
    d->scope[d->level] = d->g = sub;
    d->owner[d->level] = owner;
    begin_map(d, false);
    dump_contents(d);
    end_map(d);
    d->level--;
    d->g = outer;
}

static void dump_graph(dumper *d) {
    yaml_event_t ev;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    emit(d, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    emit(d, &ev);
    begin_map(d, false);
    str(d, "format");
    str(d, "tgc/1");
    dump_contents(d);
    end_map(d);
    yaml_document_end_event_initialize(&ev, 1);
    emit(d, &ev);
    yaml_stream_end_event_initialize(&ev);
    emit(d, &ev);
}

static int write_handler(void *data, unsigned char *buffer, size_t size) {
    return fwrite(buffer, 1, size, (FILE *)data) == size;
}

tgc_status tgc_graph_dump_yaml(const tgc_graph *g, FILE *out, const char *dest_dir, tgc_diags *diags) {
    return tgc_graph_dump_yaml_devices(g, out, dest_dir, NULL, diags);
}

static tgc_status dump_with(dumper *d, FILE *out);

tgc_status tgc_graph_dump_yaml_placed(const tgc_graph *g, FILE *out, const char *dest_dir, tgc_node_device_fn device_of,
                                      void *ctx, tgc_diags *diags) {
    dumper d = {.g = g, .dest_dir = dest_dir, .device_of = device_of, .device_ctx = ctx, .diags = diags, .scope = {g}};
    return dump_with(&d, out);
}

tgc_status tgc_graph_dump_yaml_devices(const tgc_graph *g, FILE *out, const char *dest_dir,
                                       const char *const *node_devices, tgc_diags *diags) {
    dumper d = {.g = g, .dest_dir = dest_dir, .devices = node_devices, .diags = diags, .scope = {g}};
    return dump_with(&d, out);
}

static tgc_status dump_with(dumper *dp, FILE *out) {
    dumper d = *dp;
    tgc_diags *diags = d.diags;
    if (tgc_graph_check_whole(d.g, diags) != TGC_OK) return TGC_ERR_INVALID;
    if (!yaml_emitter_initialize(&d.em)) return TGC_ERR_NOMEM;
    yaml_emitter_set_output(&d.em, write_handler, out);
    yaml_emitter_set_width(&d.em, 120);
    yaml_emitter_set_unicode(&d.em, 1);
    dump_graph(&d);
    if (!d.failed && !yaml_emitter_flush(&d.em)) d.failed = true;
    yaml_emitter_delete(&d.em);
    if (d.reported) return TGC_ERR_IO;
    if (d.failed || fflush(out) != 0 || ferror(out)) {
        tgc_diag_add(diags, TGC_SEV_ERROR, NULL, (tgc_srcpos){0, 0}, "io", "cannot write the graph: %s",
                     errno ? strerror(errno) : "emitter error");
        return TGC_ERR_IO;
    }
    if (d.not_written > 0)
        return tgc_diag_add(diags, TGC_SEV_WARNING, d.g->path, (tgc_srcpos){0, 0}, "weights-not-written",
                            "%lld weight%s held only in memory (read from an ONNX model or made by a pass) %s named by "
                            "%s `file:` ('%s'%s) but not written: a dump written with -o writes them beside it",
                            (long long)d.not_written, d.not_written == 1 ? "" : "s", d.not_written == 1 ? "is" : "are",
                            d.not_written == 1 ? "its" : "their", d.first_not_written,
                            d.not_written == 1 ? "" : ", ...") == TGC_ERR_NOMEM
                   ? TGC_ERR_NOMEM
                   : TGC_OK;
    return TGC_OK;
}
