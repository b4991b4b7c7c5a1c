/* Writes an imported document as a tgc/1 file through libyaml's emitter (so
 * quoting is always right), in the layout graph/dump_yaml.c uses: small
 * things as one-line flow mappings, nodes as block mappings. Weights go to
 * STEM_weights/NAME.npy beside the YAML; small integer tensors and float
 * scalars are written inline as `values:`. A header comment says where the
 * graph came from and lists the names that had to change. */
#include "onnx/onnx_import.h"

#include "graph/subgraph.h"
#include "support/alloc.h"
#include "support/diag.h"
#include "support/dtype_elem.h"
#include "support/open_beneath.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* Integer and bool tensors up to this many elements are written inline. */
#define INLINE_INTS 64

typedef struct writer {
    yaml_emitter_t em;
    bool failed;
    /* Initializer name (unique in the whole file, subgraphs too) -> its
     * .npy path, for those not written inline. */
    tgc_strmap file_of;
    const char **files;
} writer;

static void emit(writer *w, yaml_event_t *ev) {
    if (!w->failed && !yaml_emitter_emit(&w->em, ev)) w->failed = true;
}

static void scalar(writer *w, const char *s, yaml_scalar_style_t style) {
    yaml_event_t ev;
    if (w->failed) return;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1, style)) {
        w->failed = true;
        return;
    }
    emit(w, &ev);
}

static void str(writer *w, const char *s) {
    scalar(w, s, s[0] ? YAML_ANY_SCALAR_STYLE : YAML_SINGLE_QUOTED_SCALAR_STYLE);
}

static void num(writer *w, const char *s) { scalar(w, s, YAML_PLAIN_SCALAR_STYLE); }

static void int_scalar(writer *w, int64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    num(w, buf);
}

const char *tgc_onnx_float_text(double v, bool as_double, char *buf, size_t size) {
    if (isnan(v))
        snprintf(buf, size, ".nan");
    else if (isinf(v))
        snprintf(buf, size, v > 0 ? ".inf" : "-.inf");
    else
        for (int p = 1; p <= 17; p++) {
            snprintf(buf, size, "%.*g", p, v);
            double back = strtod(buf, NULL);
            if (as_double ? back == v : (float)back == (float)v) break;
        }
    return buf;
}

double tgc_onnx_float_attr(double v) {
    char buf[40];
    tgc_onnx_float_text(v, false, buf, sizeof buf);
    return isnan(v) || isinf(v) ? v : strtod(buf, NULL);
}

static void float_scalar_as(writer *w, double v, bool as_double) {
    char buf[40];
    num(w, tgc_onnx_float_text(v, as_double, buf, sizeof buf));
}

static void float_scalar(writer *w, double v) { float_scalar_as(w, v, false); }

static void begin(writer *w, bool map, bool flow) {
    yaml_event_t ev;
    if (map)
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                            flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
    else
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                             flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
    emit(w, &ev);
}

static void end(writer *w, bool map) {
    yaml_event_t ev;
    if (map)
        yaml_mapping_end_event_initialize(&ev);
    else
        yaml_sequence_end_event_initialize(&ev);
    emit(w, &ev);
}

static int64_t numel(const tgc_npy *v) {
    int64_t n = 1;
    for (int i = 0; i < v->rank; i++)
        n *= v->dims[i];
    return n;
}

bool tgc_onnx_written_inline(const tgc_npy *v) {
    int64_t n = numel(v);
    if (n == 0) return true;
    if (v->dtype == TGC_BFLOAT16) return true; /* no .npy dtype: always inline (shortest decimals are exact) */
    if (v->dtype == TGC_STRING) return true;   /* text: inline, double-quoted */
    if (v->dtype == TGC_FLOAT32 || v->dtype == TGC_FLOAT64) return n == 1;
    return v->dtype != TGC_FLOAT16 && n <= INLINE_INTS;
}

static void tensor_body(writer *w, const tgc_npy *v, const char *file) {
    str(w, "dtype");
    str(w, tgc_dtype_name(v->dtype));
    str(w, "shape");
    begin(w, false, true);
    for (int i = 0; i < v->rank; i++)
        int_scalar(w, v->dims[i]);
    end(w, false);
    if (file != NULL) {
        str(w, "file");
        str(w, file);
        return;
    }
    str(w, "values");
    begin(w, false, true);
    int64_t n = numel(v);
    for (int64_t i = 0; i < n; i++) {
        const void *p = v->data;
        if (v->dtype == TGC_STRING) {
            const char *t = ((const char *const *)p)[i];
            scalar(w, t != NULL ? t : "", YAML_DOUBLE_QUOTED_SCALAR_STYLE);
        } else if (v->dtype == TGC_BOOL) {
            num(w, ((const uint8_t *)p)[i] ? "true" : "false");
        } else if (v->dtype == TGC_UINT64) {
            char buf[24];
            snprintf(buf, sizeof buf, "%" PRIu64, ((const uint64_t *)p)[i]);
            num(w, buf);
        } else if (tgc_dtype_is_float(v->dtype)) {
            float_scalar_as(w, tgc_elem_as_double(v->dtype, p, i), v->dtype == TGC_FLOAT64);
        } else {
            int_scalar(w, tgc_elem_as_int64(v->dtype, p, i));
        }
    }
    end(w, false);
}

static void write_contents(writer *w, const tgc_onnx_doc *doc);

static void attr_value(writer *w, const tgc_onnx_attr *a) {
    switch (a->type) {
    case TGC_ATTR_INT: int_scalar(w, a->i); break;
    case TGC_ATTR_FLOAT: float_scalar(w, a->f); break;
    case TGC_ATTR_STRING: str(w, a->s); break;
    case TGC_ATTR_INTS:
        begin(w, false, true);
        for (size_t i = 0; i < a->n; i++)
            int_scalar(w, a->ints[i]);
        end(w, false);
        break;
    case TGC_ATTR_FLOATS:
        begin(w, false, true);
        for (size_t i = 0; i < a->n; i++)
            float_scalar(w, a->floats[i]);
        end(w, false);
        break;
    case TGC_ATTR_STRINGS:
        begin(w, false, true);
        for (size_t i = 0; i < a->n; i++)
            str(w, a->strings[i]);
        end(w, false);
        break;
    case TGC_ATTR_TENSOR:
        begin(w, true, true);
        tensor_body(w, a->tensor, NULL);
        end(w, true);
        break;
    case TGC_ATTR_GRAPH:
        begin(w, true, false);
        if (a->graph != NULL) write_contents(w, a->graph);
        end(w, true);
        break;
    }
}

/* The keys of a graph after `format`: name, inputs, outputs,
 * initializers, nodes; for the file and for each subgraph. */
static void write_contents(writer *w, const tgc_onnx_doc *doc) {
    if (doc->name != NULL) {
        str(w, "name");
        str(w, doc->name);
    }
    if (doc->n_inputs > 0) {
        str(w, "inputs");
        begin(w, false, false);
        for (int i = 0; i < doc->n_inputs; i++) {
            const tgc_onnx_input *in = &doc->inputs[i];
            begin(w, true, true);
            str(w, "name");
            str(w, in->name);
            if (in->source != NULL) {
                str(w, "source_name");
                str(w, in->source);
            }
            if (in->dtype != TGC_DTYPE_INVALID) {
                char type[64];
                str(w, "dtype");
                str(w, tgc_type_str(in->dtype, in->kind, type, sizeof type));
            }
            if (in->rank >= 0 && in->dtype != TGC_DTYPE_INVALID) {
                str(w, "shape");
                begin(w, false, true);
                for (int k = 0; k < in->rank; k++)
                    str(w, in->dims[k]);
                end(w, false);
            }
            end(w, true);
        }
        end(w, false);
    }
    str(w, "outputs");
    begin(w, false, true);
    for (int i = 0; i < doc->n_outputs; i++) {
        const char *source = doc->output_sources != NULL ? doc->output_sources[i] : NULL;
        if (source == NULL) {
            str(w, doc->outputs[i]);
            continue;
        }
        begin(w, true, true); /* {ref: R, source_name: ONNX name} */
        str(w, "ref");
        str(w, doc->outputs[i]);
        str(w, "source_name");
        str(w, source);
        end(w, true);
    }
    end(w, false);
    if (doc->n_inits > 0) {
        str(w, "initializers");
        begin(w, false, false);
        for (int i = 0; i < doc->n_inits; i++) {
            int32_t f = tgc_strmap_get(&w->file_of, doc->inits[i].name);
            begin(w, true, true);
            str(w, "name");
            str(w, doc->inits[i].name);
            tensor_body(w, &doc->inits[i].value, f >= 0 ? w->files[f] : NULL);
            end(w, true);
        }
        end(w, false);
    }
    if (doc->n_nodes > 0) {
        str(w, "nodes");
        begin(w, false, false);
        for (int i = 0; i < doc->n_nodes; i++) {
            const tgc_onnx_node *n = &doc->nodes[i];
            begin(w, true, false);
            str(w, "name");
            str(w, n->name);
            if (n->source != NULL) {
                str(w, "source_name");
                str(w, n->source);
            }
            str(w, "op");
            str(w, n->op);
            if (n->n_inputs > 0) {
                str(w, "inputs");
                begin(w, false, true);
                for (int k = 0; k < n->n_inputs; k++)
                    str(w, n->inputs[k]);
                end(w, false);
            }
            if (n->n_attrs > 0) {
                bool block = false; /* a subgraph is written as a block */
                for (int k = 0; k < n->n_attrs; k++)
                    block |= n->attrs[k].type == TGC_ATTR_GRAPH;
                str(w, "attrs");
                begin(w, true, !block);
                for (int k = 0; k < n->n_attrs; k++) {
                    str(w, n->attrs[k].name);
                    attr_value(w, &n->attrs[k]);
                }
                end(w, true);
            }
            end(w, true);
        }
        end(w, false);
    }
}

static void write_document(writer *w, const tgc_onnx_doc *doc) {
    yaml_event_t ev;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    emit(w, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    emit(w, &ev);
    begin(w, true, false);
    str(w, "format");
    str(w, "tgc/1");
    write_contents(w, doc);
    end(w, true);
    yaml_document_end_event_initialize(&ev, 1);
    emit(w, &ev);
    yaml_stream_end_event_initialize(&ev);
    emit(w, &ev);
}

static int write_handler(void *data, unsigned char *buffer, size_t size) {
    return fwrite(buffer, 1, size, (FILE *)data) == size;
}

/* A comment line's text: printable ASCII only (names may hold anything). */
static void comment_text(FILE *f, const char *s) {
    for (; *s; s++)
        fputc(*s >= 0x20 && *s < 0x7f ? *s : '?', f);
}

static void write_header(FILE *f, const tgc_onnx_doc *doc) {
    const char *base = strrchr(doc->source, '/');
    fputs("# Imported from ", f);
    comment_text(f, base ? base + 1 : doc->source);
    fprintf(f, " by tgc import (ONNX opset %" PRId64 ", producer: ", doc->opset);
    comment_text(f, doc->producer[0] ? doc->producer : "unknown");
    fputs(").\n", f);
    if (doc->n_renames > 0)
        fputs("# Names changed to fit tgc's [A-Za-z0-9_.:/-] (ONNX name -> tgc name; inputs, outputs and nodes\n"
              "# keep theirs as source_name, by which feeds and fetches may name them):\n", f);
    for (int i = 0; i < doc->n_renames; i++) {
        fputs("#   ", f);
        comment_text(f, doc->renames[i].from);
        fputs(" -> ", f);
        comment_text(f, doc->renames[i].to);
        fputc('\n', f);
    }
}

const char *tgc_onnx_weight_file(tgc_onnx_namer *files, const char *wdir_rel, const char *name) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", name);
    for (char *p = buf; *p; p++)
        if (*p == '/' || *p == ':') *p = '_';
    const char *fname = tgc_onnx_name(files, buf, "tensor");
    return fname != NULL ? tgc_onnx_printf(files->arena, "%s/%s.npy", wdir_rel, fname) : NULL;
}

static tgc_status io_error(tgc_diags *diags, const char *path, const char *what, const char *reason) {
    tgc_diag_error(diags, path, (tgc_srcpos){0, 0}, "io", "%s: %s", what, reason);
    return TGC_ERR_IO;
}

/* Where the weights go: the folder of the YAML (ydir) and the folder
 * beneath it (wdir_rel). */
typedef struct weights_out {
    tgc_onnx_arena *arena;
    tgc_onnx_namer files;
    const char *ydir, *wdir_rel;
    tgc_diags *diags;
    writer *w;
    int n_files, cap_files;
} weights_out;

/* Writes the initializers of doc and of its subgraphs that are not written
 * inline as .npy files, noting each one's path in wo->w. */
static tgc_status write_weights(weights_out *wo, const tgc_onnx_doc *doc, int depth) {
    if (depth > TGC_MAX_SUBGRAPH_DEPTH) return TGC_OK; /* the importer never makes one this deep */
    for (int i = 0; i < doc->n_inits; i++) {
        const tgc_npy *v = &doc->inits[i].value;
        if (tgc_onnx_written_inline(v)) continue;
        const char *rel = tgc_onnx_weight_file(&wo->files, wo->wdir_rel, doc->inits[i].name);
        if (rel == NULL) return TGC_ERR_NOMEM;
        if (wo->n_files == wo->cap_files) {
            int cap = wo->cap_files ? wo->cap_files * 2 : 16;
            const char **grown = tgc_onnx_alloc(wo->arena, (size_t)cap * sizeof *grown);
            if (grown == NULL) return TGC_ERR_NOMEM;
            if (wo->n_files) memcpy(grown, wo->w->files, (size_t)wo->n_files * sizeof *grown);
            wo->w->files = grown;
            wo->cap_files = cap;
        }
        wo->w->files[wo->n_files] = rel;
        if (tgc_strmap_put(&wo->w->file_of, doc->inits[i].name, wo->n_files++) != TGC_OK) return TGC_ERR_NOMEM;
        char err[PATH_MAX + 256] = "";
        void *bytes = NULL;
        size_t size = 0;
        tgc_status st = tgc_npy_serialize(v, &bytes, &size);
        if (st == TGC_OK) st = tgc_write_beneath(wo->ydir, rel, bytes, size, err, sizeof err);
        tgc_free(bytes);
        if (st != TGC_OK && st != TGC_ERR_NOMEM) {
            tgc_diag_error(wo->diags, wo->ydir, (tgc_srcpos){0, 0}, "io", "cannot write '%s': it %s", rel,
                           err[0] ? err : "is inconsistent");
            st = TGC_ERR_IO;
        }
        if (st != TGC_OK) return st;
    }
    for (int i = 0; i < doc->n_nodes; i++)
        for (int k = 0; k < doc->nodes[i].n_attrs; k++) {
            const tgc_onnx_doc *sub = doc->nodes[i].attrs[k].graph;
            tgc_status st = sub != NULL ? write_weights(wo, sub, depth + 1) : TGC_OK;
            if (st != TGC_OK) return st;
        }
    return TGC_OK;
}

tgc_status tgc_onnx_write(const tgc_onnx_doc *doc, const char *yaml_path, tgc_diags *diags) {
    tgc_onnx_arena arena = {0};
    writer w = {0};
    weights_out wo = {.arena = &arena, .files = {.arena = &arena}, .diags = diags, .w = &w};
    tgc_status st = TGC_OK;

    /* STEM_weights/ beside the YAML: dir/m.yaml -> dir/m_weights/. */
    const char *slash = strrchr(yaml_path, '/');
    const char *file = slash ? slash + 1 : yaml_path;
    size_t stem_len = strlen(file);
    const char *dot = strrchr(file, '.');
    if (dot != NULL && dot != file && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0))
        stem_len = (size_t)(dot - file);
    wo.wdir_rel = tgc_onnx_printf(&arena, "%.*s_weights", (int)stem_len, file);
    /* The YAML's folder: weights are written beneath it (support/open_beneath.h:
     * atomically, never through a link planted as STEM_weights or a file). */
    wo.ydir = slash ? tgc_onnx_printf(&arena, "%.*s", slash == yaml_path ? 1 : (int)(slash - yaml_path), yaml_path)
                    : tgc_onnx_strdup(&arena, ".");
    if (wo.wdir_rel == NULL || wo.ydir == NULL) st = TGC_ERR_NOMEM;
    if (st == TGC_OK) st = write_weights(&wo, doc, 0);

    /* The YAML, to a temporary file renamed into place. */
    char *tmp = st == TGC_OK ? tgc_onnx_printf(&arena, "%s.tmpXXXXXX", yaml_path) : NULL;
    if (st == TGC_OK && tmp == NULL) st = TGC_ERR_NOMEM;
    if (st == TGC_OK) {
        int fd = mkstemp(tmp);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (f == NULL) {
            st = io_error(diags, yaml_path, "cannot write", strerror(errno));
            if (fd >= 0) close(fd);
            if (fd >= 0) unlink(tmp);
        } else {
            write_header(f, doc);
            if (!yaml_emitter_initialize(&w.em))
                w.failed = true;
            else {
                yaml_emitter_set_output(&w.em, write_handler, f);
                yaml_emitter_set_width(&w.em, 120);
                yaml_emitter_set_unicode(&w.em, 1);
                write_document(&w, doc);
                if (!w.failed && !yaml_emitter_flush(&w.em)) w.failed = true;
                yaml_emitter_delete(&w.em);
            }
            int saved = errno;
            bool bad = w.failed || fflush(f) != 0 || ferror(f);
            bad = (fclose(f) != 0) || bad;
            if (bad || rename(tmp, yaml_path) != 0) {
                st = io_error(diags, yaml_path, "cannot write",
                              bad ? (saved ? strerror(saved) : "emitter error") : strerror(errno));
                unlink(tmp);
            }
        }
    }
    if (st == TGC_ERR_NOMEM) tgc_diag_error(diags, yaml_path, (tgc_srcpos){0, 0}, "out-of-memory", "out of memory");
    tgc_onnx_namer_release(&wo.files);
    tgc_strmap_release(&w.file_of);
    tgc_onnx_arena_release(&arena);
    return st;
}
