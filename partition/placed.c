/* The public face of placement (include/tgc.h, "Placement"): a placed graph
 * handle over the compile driver (partition/compile.h: the passes, the
 * placer and the partitioner, as a session runs them, the subgraphs
 * included), its lookups, and its dumps: YAML (a tgc/1 graph with every
 * device filled in), JSON (node -> device and reason), DOT (nodes coloured
 * by device) and a one-screen summary of devices and the tensors that
 * cross them. */
#include "partition/placed.h"

#include "devices/kernel.h"
#include "support/alloc.h"
#include "support/diag.h"
#include "support/parse_size.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

const tgc_placement *tgc_placed_subgraph(const tgc_placed *p, const tgc_graph *body, const char **label) {
    for (int i = 0; i < p->n_subs; i++)
        if (p->subs[i].g == body) {
            if (label != NULL) *label = p->subs[i].label;
            return &p->subs[i].c.placement;
        }
    return NULL;
}

tgc_status tgc_graph_place(const tgc_graph *g, const char *devices, const tgc_place_options *opts,
                           tgc_diags *diags, tgc_placed **out) {
    *out = NULL;
    tgc_placed *p = tgc_calloc(1, sizeof *p);
    if (p == NULL) return TGC_ERR_NOMEM;
    p->source = g;
    tgc_compile_options co = {.optimize = opts != NULL ? opts->optimize : TGC_OPTIMIZE_DEFAULT,
                              .float16 = opts != NULL && opts->float16 != 0,
                              .soft_placement = opts != NULL && opts->soft_placement != 0,
                              .small_host_bytes = opts != NULL ? opts->small_host_bytes : 0,
                              .partition = true};
    if (opts != NULL && opts->placement == TGC_PLACEMENT_AUTO)
        tgc_compile_options_auto(&co, opts->memory_limits, opts->threads, opts->max_inflight);
    tgc_status s = tgc_compile(g, devices, &co, diags, &p->c);
    if (s == TGC_OK) s = tgc_compile_subgraphs(&p->c, &co, diags, &p->subs, &p->n_subs);
    for (int i = 0; s == TGC_OK && i < p->c.n_devices; i++)
        tgc_device_id_name(p->c.devices[i], p->names[i], sizeof p->names[i]);
    if (s != TGC_OK) {
        tgc_placed_free(p);
        return s;
    }
    *out = p;
    return TGC_OK;
}

void tgc_placed_free(tgc_placed *p) {
    if (p == NULL) return;
    tgc_compiled_subs_release(p->subs, p->n_subs);
    tgc_compiled_release(&p->c);
    tgc_free(p);
}

const tgc_graph *tgc_placed_graph(const tgc_placed *p) { return p->c.g; }

int tgc_placed_device_count(const tgc_placed *p) { return p->c.n_devices; }

const char *tgc_placed_device(const tgc_placed *p, int i) {
    return i >= 0 && i < p->c.n_devices ? p->names[i] : NULL;
}

const char *tgc_placed_device_name(const tgc_placed *p, const char *node_name) {
    int32_t id = tgc_graph_find(p->c.g, node_name);
    return id < 0 ? NULL : p->names[p->c.placement.device[id]];
}

const char *tgc_placed_reason(const tgc_placed *p, const char *node_name) {
    int32_t id = tgc_graph_find(p->c.g, node_name);
    return id < 0 ? NULL : tgc_place_reason_name(p->c.placement.reason[id]);
}

/* ---- YAML ----------------------------------------------------------------------- */

/* The device of node `id` of g: the graph's or a subgraph's placement. */
static const char *device_of(void *ctx, const tgc_graph *g, int32_t id) {
    const tgc_placed *p = ctx;
    const tgc_placement *pl = g == p->c.g ? &p->c.placement : tgc_placed_subgraph(p, g, NULL);
    return pl != NULL && id >= 0 && id < pl->n_nodes ? p->names[pl->device[id]] : NULL;
}

tgc_status tgc_placed_dump_yaml(const tgc_placed *p, FILE *out, const char *dest_dir, tgc_diags *diags) {
    return tgc_graph_dump_yaml_placed(p->c.g, out, dest_dir, device_of, (void *)p, diags);
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
    const tgc_node *n = &p->c.g->nodes[id];
    return tgc_kernel_choice(tgc_kernel_for_node(p->c.g, n, p->c.devices[p->c.placement.device[id]].kind), p->c.g, id);
}

tgc_status tgc_placed_dump_json(const tgc_placed *p, FILE *out, tgc_diags *diags) {
    const tgc_graph *g = p->c.g;
    fputs("{\n  \"graph\": ", out);
    if (g->name != NULL) json_string(out, g->name);
    else fputs("null", out);
    fputs(",\n  \"devices\": [", out);
    for (int i = 0; i < p->c.n_devices; i++) {
        fputs(i ? ", " : "", out);
        json_string(out, p->names[i]);
    }
    fputs("],\n", out);
    if (p->c.placement.replicas != 0) { /* whole steps take turns over these devices */
        fputs("  \"replicas\": [", out);
        for (int i = 0, shown = 0; i < p->c.n_devices; i++)
            if ((p->c.placement.replicas >> i) & 1u) {
                fputs(shown++ ? ", " : "", out);
                json_string(out, p->names[i]);
            }
        fputs("],\n", out);
    }
    const tgc_placement_forecast *fc = p->c.placement.forecast;
    if (fc != NULL) { /* automatic placement's: per device, one step */
        fputs("  \"forecast\": {", out);
        for (int i = 0; i < p->c.n_devices; i++) {
            fputs(i ? ",\n    " : "\n    ", out);
            json_string(out, p->names[i]);
            fprintf(out,
                    ": {\"seconds\": %.9g, \"measured\": %s, \"weights\": %" PRId64 ", \"kernel_caches\": %" PRId64
                    ", \"workspace\": %" PRId64 ", \"live\": %" PRId64 ", \"sent\": %" PRId64 ", \"received\": %" PRId64
                    "}",
                    fc[i].seconds, fc[i].measured ? "true" : "false", fc[i].weights, fc[i].caches, fc[i].workspace,
                    fc[i].live, fc[i].sent, fc[i].received);
        }
        fputs("\n  },\n", out);
    }
    fputs("  \"nodes\": {", out);
    for (int32_t id = 0; id < g->n_nodes; id++) {
        fputs(id ? ",\n    " : "\n    ", out);
        json_string(out, g->nodes[id].name);
        fputs(": {\"device\": ", out);
        json_string(out, p->names[p->c.placement.device[id]]);
        fputs(", \"reason\": ", out);
        json_string(out, tgc_place_reason_name(p->c.placement.reason[id]));
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
    for (int i = 0; i < d; i++) nth += p->c.devices[i].kind == p->c.devices[d].kind;
    return tgc_kind_host_memory(p->c.devices[d].kind) ? cpu[nth % 4] : gpu[nth % 4];
}

tgc_status tgc_placed_dump_dot(const tgc_placed *p, FILE *out, tgc_diags *diags) {
    const tgc_graph *g = p->c.g;
    fputs("digraph ", out);
    dot_id(out, g->name ? g->name : "graph");
    fputs(" {\n  rankdir=TB;\n  labelloc=t;\n  fontname=\"Helvetica\";\n", out);
    fputs("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n", out);
    fputs("  edge [fontname=\"Helvetica\", fontsize=8];\n", out);
    /* The legend: one node per device, side by side. */
    fputs("  subgraph cluster_devices {\n    label=\"devices\";\n    style=dashed;\n", out);
    for (int i = 0; i < p->c.n_devices; i++)
        fprintf(out, "    \"legend %d\" [label=\"%s\", fillcolor=\"%s\"];\n", i, p->names[i], device_colour(p, i));
    for (int i = 1; i < p->c.n_devices; i++) /* keep the legend in list order */
        fprintf(out, "    \"legend %d\" -> \"legend %d\" [style=invis];\n", i - 1, i);
    fputs("    rank=same;\n  }\n", out);
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        int d = p->c.placement.device[id];
        const char *what = n->kind == TGC_NODE_INPUT ? "input" : n->kind == TGC_NODE_CONST ? "initializer" : n->op_name;
        fputs("  ", out);
        dot_id(out, n->name);
        fputs(" [label=", out);
        /* name \n op \n device, as one quoted label. */
        fputc('"', out);
        for (const char *c = tgc_node_label(n); *c; c++) /* the model's own name: ONNX's */
            fprintf(out, "%s%c", (*c == '"' || *c == '\\') ? "\\" : "", *c);
        fprintf(out, "\\n%s\\n%s (%s)\", fillcolor=\"%s\"%s];\n", what, p->names[d],
                tgc_place_reason_name(p->c.placement.reason[id]), device_colour(p, d),
                n->kind == TGC_NODE_OP ? "" : ", shape=ellipse");
    }
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int i = 0; i < n->n_inputs + n->n_controls; i++) {
            bool control = i >= n->n_inputs;
            tgc_ref r = control ? n->controls[i - n->n_inputs] : n->inputs[i];
            if (r.node < 0) continue;
            bool cross = p->c.placement.device[r.node] != p->c.placement.device[id];
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
    const tgc_graph *g = p->c.g;
    int64_t ops[TGC_PLACER_MAX_DEVICES] = {0}, sources[TGC_PLACER_MAX_DEVICES] = {0};
    for (int32_t id = 0; id < g->n_nodes; id++) {
        if (g->nodes[id].kind == TGC_NODE_OP) ops[p->c.placement.device[id]]++;
        else sources[p->c.placement.device[id]]++;
    }
    fprintf(out, "placement on %d device%s:\n", p->c.n_devices, p->c.n_devices == 1 ? "" : "s");
    int width = 6; /* "/task:1/cpu0" widens the column */
    for (int i = 0; i < p->c.n_devices; i++)
        if ((int)strlen(p->names[i]) > width) width = (int)strlen(p->names[i]);
    for (int i = 0; i < p->c.n_devices; i++)
        fprintf(out, "  %-*s %6" PRId64 " nodes (%" PRId64 " ops, %" PRId64 " inputs and initializers)\n", width,
                p->names[i], ops[i] + sources[i], ops[i], sources[i]);
    const tgc_placement_forecast *fc = p->c.placement.forecast;
    for (int i = 0; fc != NULL && i < p->c.n_devices; i++) {
        char w[16], k[16], ws[16], l[16], snt[16], rcv[16];
        fprintf(out,
                "  %-*s forecast: %.3f ms a step (%s), weights %s, kernel caches %s, workspace %s, live %s, "
                "sends %s, receives %s\n",
                width, p->names[i], fc[i].seconds * 1e3, fc[i].measured ? "measured" : "some estimated",
                tgc_format_size(fc[i].weights, w, sizeof w), tgc_format_size(fc[i].caches, k, sizeof k),
                tgc_format_size(fc[i].workspace, ws, sizeof ws), tgc_format_size(fc[i].live, l, sizeof l),
                tgc_format_size(fc[i].sent, snt, sizeof snt), tgc_format_size(fc[i].received, rcv, sizeof rcv));
    }
    if (p->c.placement.replicas != 0) { /* automatic placement for throughput chose whole steps per device */
        fprintf(out, "  replicas: whole steps take turns over");
        for (int i = 0, shown = 0; i < p->c.n_devices; i++)
            if ((p->c.placement.replicas >> i) & 1u) fprintf(out, "%s %s", shown++ ? "," : "", p->names[i]);
        fprintf(out, ", each holding the whole graph (the ops are listed on the fastest)\n");
    }
    for (int k = 0; k < p->n_subs; k++) { /* each subgraph's ops per device */
        const tgc_compiled_sub *sp = &p->subs[k];
        int64_t sub_ops[TGC_PLACER_MAX_DEVICES] = {0};
        for (int32_t id = 0; id < sp->g->n_nodes; id++)
            if (sp->g->nodes[id].kind == TGC_NODE_OP) sub_ops[sp->c.placement.device[id]]++;
        fprintf(out, "  subgraph %s:", sp->label);
        for (int i = 0, shown = 0; i < p->c.n_devices; i++)
            if (sub_ops[i] > 0) fprintf(out, "%s %s %" PRId64 " ops", shown++ ? "," : "", p->names[i], sub_ops[i]);
        fputc('\n', out);
    }
    /* The ops the kernel-availability rule moved off the device kind their
     * placement preferred (an op or dtype with no kernel there). */
    int64_t by_kernel = 0;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        if (g->nodes[id].kind != TGC_NODE_OP || p->c.placement.reason[id] != TGC_PLACED_BY_KERNEL) continue;
        if (by_kernel++ == 0) fputs("  by kernel availability (no kernel for its op and dtype on the preferred device):\n", out);
        if (by_kernel <= 20)
            fprintf(out, "    %s (%s) on %s\n", g->nodes[id].name, g->nodes[id].op_name, p->names[p->c.placement.device[id]]);
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
        int d = p->c.placement.device[id];
        for (int i = 0; i < n->n_inputs; i++) {
            tgc_ref r = n->inputs[i];
            if (r.node >= 0 && p->c.placement.device[r.node] != d) dests[base[r.node] + r.port] |= (uint64_t)1 << d;
        }
        for (int i = 0; i < n->n_controls; i++)
            if (n->controls[i].node >= 0 && p->c.placement.device[n->controls[i].node] != d) controls++;
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
