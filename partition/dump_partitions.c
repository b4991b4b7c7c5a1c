/* Dumps of a partitioning: each partition as a tgc/1 YAML graph (the graph
 * dumper does the work), all of them and the pairs as one JSON document,
 * and a Graphviz picture with one cluster per device and a dashed edge for
 * each _Send -> _Recv pair. */
#include "partition/partition.h"

#include "support/alloc.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

tgc_status tgc_partition_dump_yaml(const tgc_partitioning *p, int i, FILE *out, const char *dest_dir,
                                   tgc_diags *diags) {
    return tgc_graph_dump_yaml(p->parts[i].graph, out, dest_dir, diags);
}

static tgc_status finish(FILE *out, tgc_diags *diags, const char *what) {
    if (fflush(out) != 0 || ferror(out)) {
        tgc_diag_add(diags, TGC_SEV_ERROR, NULL, (tgc_srcpos){0, 0}, "io", "cannot write the %s: %s", what,
                     errno ? strerror(errno) : "write error");
        return TGC_ERR_IO;
    }
    return TGC_OK;
}

/* "node", "node:k" or "^node" for a reference inside partition graph pg. */
static void ref_text(const tgc_graph *pg, tgc_ref r, bool control, char *buf, size_t size) {
    if (r.node < 0) snprintf(buf, size, "%s", "");
    else if (control) snprintf(buf, size, "^%s", pg->nodes[r.node].name);
    else if (r.port == 0) snprintf(buf, size, "%s", pg->nodes[r.node].name);
    else snprintf(buf, size, "%s:%" PRId32, pg->nodes[r.node].name, r.port);
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_float(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.17g", v);
    else fputs("null", f); /* JSON has no infinities or NaN */
}

static void json_shape(FILE *f, const tgc_graph *g, const tgc_shape *s) {
    if (s->rank == TGC_RANK_UNKNOWN) {
        fputs("null", f);
        return;
    }
    fputc('[', f);
    for (int i = 0; i < s->rank; i++) {
        if (i) fputs(", ", f);
        if (tgc_dim_known(s->dims[i])) fprintf(f, "%" PRId64, s->dims[i].v);
        else json_str(f, g->symbols[s->dims[i].sym]);
    }
    fputc(']', f);
}

static void json_attr(FILE *f, const tgc_graph *g, const tgc_attr *a) {
    switch (a->type) {
    case TGC_ATTR_INT: fprintf(f, "%" PRId64, a->i); break;
    case TGC_ATTR_FLOAT: json_float(f, a->f); break;
    case TGC_ATTR_STRING: json_str(f, a->s ? a->s : ""); break;
    case TGC_ATTR_INTS:
    case TGC_ATTR_FLOATS:
    case TGC_ATTR_STRINGS:
        fputc('[', f);
        for (size_t i = 0; i < a->n; i++) {
            if (i) fputs(", ", f);
            if (a->type == TGC_ATTR_INTS) fprintf(f, "%" PRId64, a->ints[i]);
            else if (a->type == TGC_ATTR_FLOATS) json_float(f, a->floats[i]);
            else json_str(f, a->strings[i]);
        }
        fputc(']', f);
        break;
    case TGC_ATTR_TENSOR:
        fputs("{\"dtype\": ", f);
        json_str(f, tgc_dtype_name(a->tensor->dtype));
        fputs(", \"shape\": ", f);
        json_shape(f, g, &a->tensor->shape);
        fputc('}', f);
        break;
    case TGC_ATTR_GRAPH:
        fprintf(f, "{\"subgraph_nodes\": %" PRId32 "}", a->graph != NULL ? a->graph->n_nodes : 0);
        break;
    }
}

static const char *kind_name(tgc_node_kind k) {
    return k == TGC_NODE_INPUT ? "input" : k == TGC_NODE_CONST ? "initializer" : "op";
}

static void json_node(FILE *f, const tgc_partitioning *p, int part, int32_t id) {
    const tgc_graph *pg = p->parts[part].graph;
    const tgc_node *n = &pg->nodes[id];
    char ref[1100];
    fputs("        {\"name\": ", f);
    json_str(f, n->name);
    fprintf(f, ", \"kind\": \"%s\"", kind_name(n->kind));
    if (n->op_name != NULL) {
        fputs(", \"op\": ", f);
        json_str(f, n->op_name);
    }
    fprintf(f, ", \"added\": %s", p->parts[part].origin[id] < 0 ? "true" : "false");
    fputs(", \"inputs\": [", f);
    for (int i = 0; i < n->n_inputs + n->n_controls; i++) {
        bool control = i >= n->n_inputs;
        ref_text(pg, control ? n->controls[i - n->n_inputs] : n->inputs[i], control, ref, sizeof ref);
        if (i) fputs(", ", f);
        json_str(f, ref);
    }
    fputs("], \"attrs\": {", f);
    for (int i = 0; i < n->n_attrs; i++) {
        if (i) fputs(", ", f);
        json_str(f, n->attrs[i].name);
        fputs(": ", f);
        json_attr(f, pg, &n->attrs[i]);
    }
    fputs("}, \"out\": [", f);
    for (int k = 0; k < n->n_outputs; k++) {
        fprintf(f, "%s{\"dtype\": \"%s\", \"shape\": ", k ? ", " : "", tgc_dtype_name(n->outputs[k].dtype));
        json_shape(f, pg, &n->outputs[k].shape);
        fputc('}', f);
    }
    fputs("]}", f);
}

tgc_status tgc_partition_dump_json(const tgc_partitioning *p, FILE *f, tgc_diags *diags) {
    const tgc_graph *first = p->n_parts > 0 ? p->parts[0].graph : NULL;
    fputs("{\n  \"format\": \"tgc/1 partitions\",\n  \"devices\": [", f);
    for (int d = 0; d < p->n_devices; d++) {
        char name[32];
        tgc_device_id id = {p->devices[d].kind, p->devices[d].index, 0};
        fprintf(f, "%s\"%s\"", d ? ", " : "", tgc_device_id_name(id, name, sizeof name));
    }
    fputs("],\n  \"partitions\": [\n", f);
    for (int i = 0; i < p->n_parts; i++) {
        const tgc_graph *pg = p->parts[i].graph;
        char ref[1100];
        fprintf(f, "    {\"device\": \"%s\",\n      \"inputs\": [", p->parts[i].device_name);
        for (int32_t k = 0; k < pg->n_inputs_nodes; k++) {
            if (k) fputs(", ", f);
            json_str(f, pg->nodes[k].name);
        }
        fputs("],\n      \"outputs\": [", f);
        for (int k = 0; k < pg->n_outputs; k++) {
            ref_text(pg, pg->outputs[k], false, ref, sizeof ref);
            if (k) fputs(", ", f);
            json_str(f, ref);
        }
        fputs("],\n      \"nodes\": [\n", f);
        for (int32_t id = 0; id < pg->n_nodes; id++) {
            json_node(f, p, i, id);
            fputs(id + 1 < pg->n_nodes ? ",\n" : "\n", f);
        }
        fprintf(f, "      ]}%s\n", i + 1 < p->n_parts ? "," : "");
    }
    fputs("  ],\n  \"pairs\": [\n", f);
    for (int32_t i = 0; i < p->n_pairs; i++) {
        const tgc_partition_pair *pr = &p->pairs[i];
        fputs("    {\"key\": ", f);
        json_str(f, pr->key);
        fputs(", \"tensor_name\": ", f);
        json_str(f, pr->tensor_name);
        fprintf(f, ", \"send_device\": \"%s\", \"recv_device\": \"%s\", \"send_node\": ",
                p->parts[pr->send_part].device_name, p->parts[pr->recv_part].device_name);
        json_str(f, p->parts[pr->send_part].graph->nodes[pr->send_node].name);
        fputs(", \"recv_node\": ", f);
        json_str(f, p->parts[pr->recv_part].graph->nodes[pr->recv_node].name);
        fprintf(f, ", \"control\": %s, \"send_host_memory\": %s, \"recv_host_memory\": %s, \"dtype\": \"%s\", \"shape\": ",
                pr->control ? "true" : "false", pr->send_host_memory ? "true" : "false",
                pr->recv_host_memory ? "true" : "false", tgc_dtype_name(pr->dtype));
        json_shape(f, first, &pr->shape);
        fprintf(f, ", \"bytes\": %" PRId64 "}%s\n", pr->bytes, i + 1 < p->n_pairs ? "," : "");
    }
    fputs("  ],\n  \"traffic\": [\n", f);
    int n = tgc_partition_traffic_list(p, NULL, 0);
    tgc_partition_traffic *traffic = tgc_malloc(((size_t)n + 1) * sizeof *traffic);
    if (traffic == NULL) return TGC_ERR_NOMEM;
    tgc_partition_traffic_list(p, traffic, n);
    for (int i = 0; i < n; i++) {
        tgc_partition_traffic t = traffic[i];
        fprintf(f, "    {\"send_device\": \"%s\", \"recv_device\": \"%s\", \"pairs\": %" PRId32 ", \"bytes\": %" PRId64
                   "}%s\n",
                p->parts[t.send_part].device_name, p->parts[t.recv_part].device_name, t.pairs, t.bytes,
                i + 1 < n ? "," : "");
    }
    tgc_free(traffic);
    fputs("  ],\n  \"bytes_note\": \"bytes per step; each symbolic dim counted as 1\",\n  \"outputs\": [\n", f);
    for (int i = 0; i < p->n_outputs; i++) {
        tgc_partition_fetch o = p->outputs[i];
        const tgc_graph *pg = p->parts[o.part].graph;
        char ref[1100];
        ref_text(pg, (tgc_ref){o.node, o.port, {0, 0}}, false, ref, sizeof ref);
        fprintf(f, "    {\"device\": \"%s\", \"tensor\": ", p->parts[o.part].device_name);
        json_str(f, ref);
        fprintf(f, "}%s\n", i + 1 < p->n_outputs ? "," : "");
    }
    fputs("  ]\n}\n", f);
    return finish(f, diags, "partitions as JSON");
}

/* ---- Graphviz ------------------------------------------------------------------ */

static void dot_str(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s, f);
    }
}

/* A node's DOT id: "DEVICE/NAME", quoted. */
static void dot_id(FILE *f, const tgc_partition *pt, int32_t id) {
    fputc('"', f);
    dot_str(f, pt->device_name);
    fputc('/', f);
    dot_str(f, pt->graph->nodes[id].name);
    fputc('"', f);
}

tgc_status tgc_partition_dump_dot(const tgc_partitioning *p, FILE *f, tgc_diags *diags) {
    fputs("digraph partitions {\n  node [shape=box, fontsize=10];\n", f);
    for (int i = 0; i < p->n_parts; i++) {
        const tgc_partition *pt = &p->parts[i];
        const tgc_graph *pg = pt->graph;
        fprintf(f, "  subgraph cluster_%d {\n    label=\"%s\";\n", i, pt->device_name);
        for (int32_t id = 0; id < pg->n_nodes; id++) {
            const tgc_node *n = &pg->nodes[id];
            const char *what = n->kind == TGC_NODE_INPUT ? "input" : n->kind == TGC_NODE_CONST ? "initializer"
                                                                                                : n->op_name;
            fputs("    ", f);
            dot_id(f, pt, id);
            fputs(" [label=\"", f);
            dot_str(f, n->name);
            fputs("\\n", f);
            dot_str(f, what);
            fputs("\"", f);
            if (pt->origin[id] < 0) fputs(", style=filled, fillcolor=lightgrey", f);
            fputs("];\n", f);
        }
        for (int32_t id = 0; id < pg->n_nodes; id++) {
            const tgc_node *n = &pg->nodes[id];
            for (int e = 0; e < n->n_inputs + n->n_controls; e++) {
                bool control = e >= n->n_inputs;
                tgc_ref r = control ? n->controls[e - n->n_inputs] : n->inputs[e];
                if (r.node < 0) continue;
                fputs("    ", f);
                dot_id(f, pt, r.node);
                fputs(" -> ", f);
                dot_id(f, pt, id);
                fputs(control ? " [style=dotted];\n" : ";\n", f);
            }
        }
        fputs("  }\n", f);
    }
    for (int32_t i = 0; i < p->n_pairs; i++) {
        const tgc_partition_pair *pr = &p->pairs[i];
        char shape[256];
        fputs("  ", f);
        dot_id(f, &p->parts[pr->send_part], pr->send_node);
        fputs(" -> ", f);
        dot_id(f, &p->parts[pr->recv_part], pr->recv_node);
        fputs(" [style=dashed, label=\"", f);
        dot_str(f, pr->tensor_name);
        fprintf(f, "\\n%s %s%s\"];\n", tgc_dtype_name(pr->dtype),
                tgc_shape_str(p->parts[0].graph, &pr->shape, shape, sizeof shape),
                pr->recv_host_memory ? " (host)" : "");
    }
    fputs("}\n", f);
    return finish(f, diags, "partitions as DOT");
}
