/* The public face of placement (include/tgc.h, "Placement"): a placed graph
 * handle over tgc_placer_run, its lookups, and its dumps: YAML (a tgc/1
 * graph with every device filled in), JSON (node -> device and reason),
 * DOT (nodes coloured by device) and a one-screen summary of devices and
 * the tensors that cross them. */
#include "tgc.h"

#include "devices/kernel.h"
#include "graph/subgraph.h"
#include "placer/placer.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

/* A subgraph's placement: If's branches, a Loop's body... are placed on
 * the same devices as graphs of their own (as a session does), so a body
 * may span devices. `label` names it: "loop.body", "outer.body.inner.body". */
typedef struct placed_sub {
    const tgc_graph *g;
    char *label;
    tgc_placement pl;
} placed_sub;

struct tgc_placed {
    const tgc_graph *g;
    tgc_placer_device devs[TGC_PLACER_MAX_DEVICES];
    char names[TGC_PLACER_MAX_DEVICES][32];
    int n_devs;
    tgc_placement pl;
    placed_sub *subs; /* every subgraph, depth first in node order */
    int n_subs, cap_subs;
};

/* Places the subgraphs of g's nodes (and theirs, at most
 * TGC_MAX_SUBGRAPH_DEPTH deep), labelled after `prefix`. */
static tgc_status place_subgraphs(tgc_placed *p, const tgc_graph *g, const char *prefix, const tgc_placer_options *po,
                                  tgc_diags *diags) {
    if (g->depth >= TGC_MAX_SUBGRAPH_DEPTH) return TGC_OK; /* the loader never makes one this deep */
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int a = 0; a < n->n_attrs; a++) {
            const tgc_graph *body = n->attrs[a].type == TGC_ATTR_GRAPH ? n->attrs[a].graph : NULL;
            if (body == NULL) continue;
            if (p->n_subs == p->cap_subs) {
                int cap = p->cap_subs ? p->cap_subs * 2 : 4;
                placed_sub *grown = tgc_realloc(p->subs, (size_t)cap * sizeof *grown);
                if (grown == NULL) return TGC_ERR_NOMEM;
                p->subs = grown;
                p->cap_subs = cap;
            }
            placed_sub *sp = &p->subs[p->n_subs];
            memset(sp, 0, sizeof *sp);
            size_t len = strlen(prefix) + strlen(n->name) + strlen(n->attrs[a].name) + 3;
            if ((sp->label = tgc_malloc(len)) == NULL) return TGC_ERR_NOMEM;
            snprintf(sp->label, len, "%s%s%s.%s", prefix, prefix[0] ? "." : "", n->name, n->attrs[a].name);
            sp->g = body;
            p->n_subs++;
            tgc_status s = tgc_placer_run(body, p->devs, p->n_devs, po, diags, &sp->pl);
            if (s == TGC_OK) s = place_subgraphs(p, body, sp->label, po, diags);
            if (s != TGC_OK) return s;
        }
    }
    return TGC_OK;
}

const tgc_placement *tgc_placed_subgraph(const tgc_placed *p, const tgc_graph *body, const char **label) {
    for (int i = 0; i < p->n_subs; i++)
        if (p->subs[i].g == body) {
            if (label != NULL) *label = p->subs[i].label;
            return &p->subs[i].pl;
        }
    return NULL;
}

tgc_status tgc_graph_place(const tgc_graph *g, const char *devices, const tgc_place_options *opts,
                           tgc_diags *diags, tgc_placed **out) {
    *out = NULL;
    tgc_placed *p = tgc_calloc(1, sizeof *p);
    if (p == NULL) return TGC_ERR_NOMEM;
    p->g = g;
    tgc_status s = tgc_placer_parse_devices(devices, p->devs, TGC_PLACER_MAX_DEVICES, &p->n_devs, diags);
    if (s == TGC_OK) {
        for (int i = 0; i < p->n_devs; i++) tgc_placer_device_name(p->devs[i], p->names[i], sizeof p->names[i]);
        tgc_placer_options po = {0};
        if (opts != NULL) {
            po.soft_placement = opts->soft_placement != 0;
            po.small_host_bytes = opts->small_host_bytes;
        }
        s = tgc_placer_run(g, p->devs, p->n_devs, &po, diags, &p->pl);
        if (s == TGC_OK) s = place_subgraphs(p, g, "", &po, diags);
    }
    if (s != TGC_OK) {
        tgc_placed_free(p);
        return s;
    }
    *out = p;
    return TGC_OK;
}

void tgc_placed_free(tgc_placed *p) {
    if (p == NULL) return;
    tgc_placement_release(&p->pl);
    for (int i = 0; i < p->n_subs; i++) {
        tgc_placement_release(&p->subs[i].pl);
        tgc_free(p->subs[i].label);
    }
    tgc_free(p->subs);
    tgc_free(p);
}

int tgc_placed_device_count(const tgc_placed *p) { return p->n_devs; }

const char *tgc_placed_device(const tgc_placed *p, int i) { return i >= 0 && i < p->n_devs ? p->names[i] : NULL; }

const char *tgc_placed_device_name(const tgc_placed *p, const char *node_name) {
    int32_t id = tgc_graph_find(p->g, node_name);
    return id < 0 ? NULL : p->names[p->pl.device[id]];
}

const char *tgc_placed_reason(const tgc_placed *p, const char *node_name) {
    int32_t id = tgc_graph_find(p->g, node_name);
    return id < 0 ? NULL : tgc_place_reason_name(p->pl.reason[id]);
}

/* ---- YAML ----------------------------------------------------------------------- */

/* The device of node `id` of g: the graph's or a subgraph's placement. */
static const char *device_of(void *ctx, const tgc_graph *g, int32_t id) {
    const tgc_placed *p = ctx;
    const tgc_placement *pl = g == p->g ? &p->pl : tgc_placed_subgraph(p, g, NULL);
    return pl != NULL && id >= 0 && id < pl->n_nodes ? p->names[pl->device[id]] : NULL;
}

tgc_status tgc_placed_dump_yaml(const tgc_placed *p, FILE *out, const char *dest_dir, tgc_diags *diags) {
    return tgc_graph_dump_yaml_placed(p->g, out, dest_dir, device_of, (void *)p, diags);
}

static tgc_status write_result(FILE *out, tgc_diags *diags) {
    if (fflush(out) == 0 && !ferror(out)) return TGC_OK;
    tgc_diag_add(diags, TGC_SEV_ERROR, NULL, (tgc_srcpos){0, 0}, "io", "cannot write the placement: %s",
                 errno ? strerror(errno) : "write error");
    return TGC_ERR_IO;
}

/* ---- JSON --------------------------------------------------------------------------- */

static void json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
        else if (*c < 0x20) fprintf(out, "\\u%04x", *c);
        else fputc(*c, out);
    }
    fputc('"', out);
}

/* How node id's kernel will run on its device (tgc_kernel_choice: the
 * same chooser a run asks), or NULL for kernels with one way and shapes
 * not known before the run. */
static const char *kernel_way(const tgc_placed *p, int32_t id) {
    const tgc_node *n = &p->g->nodes[id];
    return tgc_kernel_choice(tgc_kernel_for_node(p->g, n, p->devs[p->pl.device[id]].kind), p->g, id);
}

tgc_status tgc_placed_dump_json(const tgc_placed *p, FILE *out, tgc_diags *diags) {
    const tgc_graph *g = p->g;
    fputs("{\n  \"graph\": ", out);
    if (g->name != NULL) json_string(out, g->name);
    else fputs("null", out);
    fputs(",\n  \"devices\": [", out);
    for (int i = 0; i < p->n_devs; i++) {
        fputs(i ? ", " : "", out);
        json_string(out, p->names[i]);
    }
    fputs("],\n  \"nodes\": {", out);
    for (int32_t id = 0; id < g->n_nodes; id++) {
        fputs(id ? ",\n    " : "\n    ", out);
        json_string(out, g->nodes[id].name);
        fputs(": {\"device\": ", out);
        json_string(out, p->names[p->pl.device[id]]);
        fputs(", \"reason\": ", out);
        json_string(out, tgc_place_reason_name(p->pl.reason[id]));
        const char *way = kernel_way(p, id);
        if (way != NULL) {
            fputs(", \"kernel\": ", out);
            json_string(out, way);
        }
        if (g->nodes[id].source_name != NULL) { /* the model's own name (an ONNX node's) */
            fputs(", \"source_name\": ", out);
            json_string(out, g->nodes[id].source_name);
        }
        fputc('}', out);
    }
    fputs(g->n_nodes ? "\n  }\n}\n" : "}\n}\n", out);
    return write_result(out, diags);
}

/* ---- DOT ------------------------------------------------------------------------------ */

static void dot_id(FILE *out, const char *s) {
    fputc('"', out);
    for (const char *c = s; *c; c++) {
        if (*c == '"' || *c == '\\') fputc('\\', out);
        fputc(*c, out);
    }
    fputc('"', out);
}

/* Blues and greens for devices over host memory (cpus), oranges and reds
 * for the others (gpus). */
static const char *device_colour(const tgc_placed *p, int d) {
    static const char *const cpu[] = {"#8ecae6", "#95d5b2", "#b8c0ff", "#cdb4db"};
    static const char *const gpu[] = {"#ffb703", "#f4a261", "#e76f51", "#f28482"};
    int nth = 0;
    for (int i = 0; i < d; i++) nth += p->devs[i].kind == p->devs[d].kind;
    return tgc_kind_host_memory(p->devs[d].kind) ? cpu[nth % 4] : gpu[nth % 4];
}

tgc_status tgc_placed_dump_dot(const tgc_placed *p, FILE *out, tgc_diags *diags) {
    const tgc_graph *g = p->g;
    fputs("digraph ", out);
    dot_id(out, g->name ? g->name : "graph");
    fputs(" {\n  rankdir=TB;\n  labelloc=t;\n  fontname=\"Helvetica\";\n", out);
    fputs("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n", out);
    fputs("  edge [fontname=\"Helvetica\", fontsize=8];\n", out);
    /* The legend: one node per device, side by side. */
    fputs("  subgraph cluster_devices {\n    label=\"devices\";\n    style=dashed;\n", out);
    for (int i = 0; i < p->n_devs; i++)
        fprintf(out, "    \"legend %d\" [label=\"%s\", fillcolor=\"%s\"];\n", i, p->names[i], device_colour(p, i));
    for (int i = 1; i < p->n_devs; i++) /* keep the legend in list order */
        fprintf(out, "    \"legend %d\" -> \"legend %d\" [style=invis];\n", i - 1, i);
    fputs("    rank=same;\n  }\n", out);
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        int d = p->pl.device[id];
        const char *what = n->kind == TGC_NODE_INPUT ? "input" : n->kind == TGC_NODE_CONST ? "initializer" : n->op_name;
        fputs("  ", out);
        dot_id(out, n->name);
        fputs(" [label=", out);
        /* name \n op \n device, as one quoted label. */
        fputc('"', out);
        for (const char *c = tgc_node_label(n); *c; c++) /* the model's own name: ONNX's */
            fprintf(out, "%s%c", (*c == '"' || *c == '\\') ? "\\" : "", *c);
        fprintf(out, "\\n%s\\n%s (%s)\", fillcolor=\"%s\"%s];\n", what, p->names[d],
                tgc_place_reason_name(p->pl.reason[id]), device_colour(p, d),
                n->kind == TGC_NODE_OP ? "" : ", shape=ellipse");
    }
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int i = 0; i < n->n_inputs + n->n_controls; i++) {
            bool control = i >= n->n_inputs;
            tgc_ref r = control ? n->controls[i - n->n_inputs] : n->inputs[i];
            if (r.node < 0) continue;
            bool cross = p->pl.device[r.node] != p->pl.device[id];
            fputs("  ", out);
            dot_id(out, g->nodes[r.node].name);
            fputs(" -> ", out);
            dot_id(out, n->name);
            fputs(" [", out);
            if (control) {
                fputs("style=dashed", out);
            } else {
                char shape[256];
                tgc_shape_str(g, &tgc_graph_ref_info(g, r)->shape, shape, sizeof shape);
                fputs("label=", out);
                dot_id(out, shape);
            }
            if (cross) fputs(", penwidth=2.5, color=\"#d62828\"", out);
            fputs("];\n", out);
        }
    }
    fputs("}\n", out);
    return write_result(out, diags);
}

/* ---- Summary ------------------------------------------------------------------------- */

void tgc_placed_summary(const tgc_placed *p, FILE *out) {
    const tgc_graph *g = p->g;
    int64_t ops[TGC_PLACER_MAX_DEVICES] = {0}, sources[TGC_PLACER_MAX_DEVICES] = {0};
    for (int32_t id = 0; id < g->n_nodes; id++) {
        if (g->nodes[id].kind == TGC_NODE_OP) ops[p->pl.device[id]]++;
        else sources[p->pl.device[id]]++;
    }
    fprintf(out, "placement on %d device%s:\n", p->n_devs, p->n_devs == 1 ? "" : "s");
    int width = 6; /* "/task:1/cpu0" widens the column */
    for (int i = 0; i < p->n_devs; i++)
        if ((int)strlen(p->names[i]) > width) width = (int)strlen(p->names[i]);
    for (int i = 0; i < p->n_devs; i++)
        fprintf(out, "  %-*s %6" PRId64 " nodes (%" PRId64 " ops, %" PRId64 " inputs and initializers)\n", width,
                p->names[i], ops[i] + sources[i], ops[i], sources[i]);
    for (int k = 0; k < p->n_subs; k++) { /* each subgraph's ops per device */
        const placed_sub *sp = &p->subs[k];
        int64_t sub_ops[TGC_PLACER_MAX_DEVICES] = {0};
        for (int32_t id = 0; id < sp->g->n_nodes; id++)
            if (sp->g->nodes[id].kind == TGC_NODE_OP) sub_ops[sp->pl.device[id]]++;
        fprintf(out, "  subgraph %s:", sp->label);
        for (int i = 0, shown = 0; i < p->n_devs; i++)
            if (sub_ops[i] > 0) fprintf(out, "%s %s %" PRId64 " ops", shown++ ? "," : "", p->names[i], sub_ops[i]);
        fputc('\n', out);
    }
    /* The ops the kernel-availability rule moved off the device kind their
     * placement preferred (an op or dtype with no kernel there). */
    int64_t by_kernel = 0;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        if (g->nodes[id].kind != TGC_NODE_OP || p->pl.reason[id] != TGC_PLACED_BY_KERNEL) continue;
        if (by_kernel++ == 0) fputs("  by kernel availability (no kernel for its op and dtype on the preferred device):\n", out);
        if (by_kernel <= 20)
            fprintf(out, "    %s (%s) on %s\n", g->nodes[id].name, g->nodes[id].op_name, p->names[p->pl.device[id]]);
    }
    if (by_kernel > 20) fprintf(out, "    and %" PRId64 " more\n", by_kernel - 20);

    /* One tensor per (output, destination device): the union of each
     * output's consumers' devices other than its own. */
    int64_t n_out = 0;
    for (int32_t id = 0; id < g->n_nodes; id++) n_out += g->nodes[id].n_outputs;
    uint64_t *dests = tgc_calloc((size_t)n_out + 1, sizeof *dests);
    int64_t *base = tgc_calloc((size_t)g->n_nodes + 1, sizeof *base);
    bool *symbols = tgc_calloc((size_t)g->n_symbols + 1, sizeof *symbols);
    if (dests == NULL || base == NULL || symbols == NULL) {
        fputs("  (out of memory counting cross-device tensors)\n", out);
        tgc_free(dests);
        tgc_free(base);
        tgc_free(symbols);
        return;
    }
    for (int32_t id = 1; id < g->n_nodes; id++) base[id] = base[id - 1] + g->nodes[id - 1].n_outputs;
    int64_t controls = 0;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        int d = p->pl.device[id];
        for (int i = 0; i < n->n_inputs; i++) {
            tgc_ref r = n->inputs[i];
            if (r.node >= 0 && p->pl.device[r.node] != d) dests[base[r.node] + r.port] |= (uint64_t)1 << d;
        }
        for (int i = 0; i < n->n_controls; i++)
            if (n->controls[i].node >= 0 && p->pl.device[n->controls[i].node] != d) controls++;
    }
    int64_t tensors = 0, bytes = 0, unknown = 0;
    bool any_symbol = false;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int k = 0; k < n->n_outputs; k++) {
            uint64_t m = dests[base[id] + k];
            if (m == 0) continue;
            int copies = 0;
            for (; m; m &= m - 1) copies++;
            tensors += copies;
            const tgc_tensor_info *info = &n->outputs[k];
            if (info->shape.rank == TGC_RANK_UNKNOWN || tgc_dtype_size(info->dtype) == 0) {
                unknown += copies;
                continue;
            }
            int64_t numel = 1;
            for (int j = 0; j < info->shape.rank; j++) {
                tgc_dim dim = info->shape.dims[j];
                if (tgc_dim_known(dim)) numel *= dim.v;
                else if (dim.sym >= 0 && dim.sym < g->n_symbols) symbols[dim.sym] = any_symbol = true;
            }
            bytes += numel * (int64_t)tgc_dtype_size(info->dtype) * copies;
        }
    }
    fprintf(out, "  crossing devices: %" PRId64 " tensor%s, %" PRId64 " bytes per step", tensors,
            tensors == 1 ? "" : "s", bytes);
    if (any_symbol) {
        fputs(" (counting", out);
        int shown = 0;
        for (int32_t s = 0; s < g->n_symbols; s++)
            if (symbols[s]) fprintf(out, "%s%s", shown++ ? ", " : " ", g->symbols[s]);
        fputs(" as 1)", out);
    }
    if (unknown > 0) fprintf(out, "; %" PRId64 " more of unknown size", unknown);
    if (controls > 0) fprintf(out, "; %" PRId64 " control edge%s", controls, controls == 1 ? "" : "s");
    fputc('\n', out);
    tgc_free(dests);
    tgc_free(base);
    tgc_free(symbols);
}
