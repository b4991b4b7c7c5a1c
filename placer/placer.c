/* The placer's rules, in order, in one pass each (see placer.h and
 * docs/placement.md):
 *   1. each node's own constraints: its device spec (full or partial) and
 *      the listed devices where it has a kernel; a spec that names no listed
 *      device, or a device without a kernel for the node, is an error
 *      unless soft placement is on;
 *   2. colocation groups (colocation.c), merged in node order;
 *   3. each group's allowed devices: specs intersected with kernels (soft
 *      placement relaxes the specs to their kind, then drops them);
 *   4. a device per group, walking the nodes in topological order: a group
 *      with one allowed device takes it; a Shape/Size waits for its input;
 *      integer shape arithmetic goes to the host cpu; a node whose inputs
 *      are all in host memory and small stays on the host; anything else
 *      takes the first listed device of the best kind (the highest backend
 *      priority: gpu, then cpu);
 *   5. graph inputs and initializers: the device of their first consumer
 *      that reads their data on its device; read only as host-memory
 *      arguments (shape operands) they stay on the host cpu;
 *   6. Shape and Size: their input's device (they read only its dims).
 * TensorFlow's placer (core/common_runtime/placer.cc) is followed for the
 * order of the rules, soft placement and the host-memory treatment of
 * integer shape tensors; the error messages are this file's own. */
#include "placer/placer_impl.h"

#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

const char *tgc_place_reason_name(tgc_place_reason r) {
    switch (r) {
    case TGC_PLACED_BY_SPEC: return "spec";
    case TGC_PLACED_BY_COLOCATION: return "colocation";
    case TGC_PLACED_BY_KERNEL: return "kernel";
    case TGC_PLACED_BY_HOST_RULE: return "host-memory";
    case TGC_PLACED_BY_SMALL_HOST: return "small-host";
    case TGC_PLACED_BY_DEFAULT: return "default";
    case TGC_PLACED_BY_SOFT: return "soft";
    case TGC_PLACED_BY_CONSUMER: return "consumer";
    case TGC_PLACED_BY_AUTO: return "auto";
    case TGC_PLACED_BY_FEED: return "feed";
    }
    return "unknown";
}

int tgc_placer_max_task(const tgc_placer_device *devices, int n) {
    int m = 0;
    for (int i = 0; i < n; i++)
        if (devices[i].task > m) m = devices[i].task;
    return m;
}

tgc_status tgc_placer_parse_devices(const char *list, tgc_placer_device *devices, int max, int *n, tgc_diags *diags) {
    *n = 0;
    const char *p = list;
    char forms[128];
    tgc_device_name_forms(forms, sizeof forms);
    if (*p == '\0')
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list",
                              "empty device list; name at least one device (%s)", forms);
    for (;;) {
        size_t len = strcspn(p, ",");
        tgc_placer_device d;
        if (!tgc_device_id_parse(p, len, &d, NULL))
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list",
                                  "'%.*s' in device list '%s' is not a device name (%s, "
                                  "each may start with /task:N/)",
                                  (int)(len < 64 ? len : 64), p, list, forms);
        for (int i = 0; i < *n; i++)
            if (devices[i].kind == d.kind && devices[i].index == d.index && devices[i].task == d.task) {
                char name[32];
                return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list",
                                      "device %s is listed twice in '%s' (cpu is cpu0, gpu is gpu0, "
                                      "/task:0/cpu0 is cpu0)",
                                      tgc_placer_device_name(d, name, sizeof name), list);
            }
        if (*n == max)
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list",
                                  "device list '%s' names more than %d devices", list, max);
        devices[(*n)++] = d;
        p += len;
        if (*p == '\0') break;
        p++;
    }
    return TGC_OK;
}

/* ---- Kernels ------------------------------------------------------------------- */

static const tgc_kernel_def *registry_find(const tgc_graph *g, const tgc_node *n, tgc_device_kind kind, void *ctx) {
    (void)ctx;
    return tgc_kernel_for_node(g, n, kind);
}

static bool is_int(tgc_dtype t) { return t == TGC_INT32 || t == TGC_INT64; }

/* Integer shape arithmetic: every input and output int32/int64, every
 * output of known rank <= 1. */
static bool host_int(const tgc_graph *g, const tgc_node *n) {
    if (n->n_outputs == 0) return false;
    for (int i = 0; i < n->n_outputs; i++) {
        const tgc_tensor_info *o = &n->outputs[i];
        if (!is_int(o->dtype) || o->shape.rank == TGC_RANK_UNKNOWN || o->shape.rank > 1) return false;
    }
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i].node >= 0 && !is_int(tgc_graph_ref_info(g, n->inputs[i])->dtype)) return false;
    return true;
}

/* Rule 5's "small": at least one input, every input's size known (a
 * symbolic dim is large), at most `limit` bytes in all. */
static bool small_inputs(const tgc_graph *g, const tgc_node *n, int64_t limit) {
    int64_t total = 0;
    int inputs = 0;
    for (int i = 0; i < n->n_inputs && limit >= 0; i++) {
        if (n->inputs[i].node < 0) continue;
        inputs++;
        const tgc_tensor_info *info = tgc_graph_ref_info(g, n->inputs[i]);
        int64_t numel = tgc_shape_numel(&info->shape);
        int64_t esize = (int64_t)tgc_dtype_size(info->dtype);
        if (numel < 0 || esize == 0 || numel > limit / esize) return false;
        total += numel * esize;
        if (total > limit) return false;
    }
    return inputs > 0 && limit >= 0;
}

static bool is_metadata_op(const tgc_node *n) {
    return n->op_name != NULL && (strcmp(n->op_name, "Shape") == 0 || strcmp(n->op_name, "Size") == 0);
}

/* ---- Setup ---------------------------------------------------------------------- */

static tgc_devmask kinds_mask(const pl_ctx *c, unsigned kinds) {
    tgc_devmask m = 0;
    for (int k = 0; k < c->n_kinds; k++)
        if (kinds & (1u << k)) m |= c->kind_mask[k];
    return m;
}

/* A node's device spec as masks: level 0 as written, level 1 its kind. */
static void spec_masks(const pl_ctx *c, const char *spec, tgc_devmask *s0, tgc_devmask *s1) {
    tgc_placer_device d;
    bool partial;
    bool has_task = strncmp(spec, "/task:", 6) == 0;
    if (!tgc_device_id_parse(spec, strlen(spec), &d, &partial)) { /* the loader checked the spelling */
        *s0 = *s1 = c->all;
        return;
    }
    /* Without a task, a spec names the device on any task (TensorFlow's
     * partial specs): cpu0 is every task's cpu0. */
    *s1 = c->kind_mask[d.kind];
    *s0 = 0;
    for (int i = 0; i < c->n_devs; i++)
        if (c->devs[i].kind == d.kind && (partial || c->devs[i].index == d.index) &&
            (!has_task || c->devs[i].task == d.task))
            *s0 |= tgc_pl_bit(i);
}

static void ctx_free(pl_ctx *c) {
    tgc_free(c->forecast);
    tgc_free(c->flags);
    tgc_free(c->kinds);
    tgc_free(c->kdtype);
    tgc_free(c->kdef);
    tgc_free(c->own_spec);
    tgc_free(c->parent);
    tgc_free(c->size);
    tgc_free(c->spec0);
    tgc_free(c->spec1);
    tgc_free(c->kern);
    tgc_free(c->spec_holder);
    tgc_free(c->kern_holder);
    tgc_free(c->all_host_int);
    tgc_free(c->level);
    tgc_free(c->how);
    tgc_free(c->edge_first);
    tgc_free(c->edge_to);
    tgc_free(c->edge_ok);
    tgc_free(c->bfs_prev);
    tgc_free(c->bfs_queue);
    tgc_free(c->device);
    tgc_free(c->reason);
}

static tgc_status ctx_alloc(pl_ctx *c) {
    size_t n = (size_t)c->g->n_nodes + 1;
    c->flags = tgc_calloc(n, sizeof *c->flags);
    c->kinds = tgc_calloc(n, sizeof *c->kinds);
    c->kdtype = tgc_calloc(n, sizeof *c->kdtype);
    c->kdef = tgc_calloc(n * (size_t)c->n_kinds, sizeof *c->kdef);
    c->own_spec = tgc_calloc(n, sizeof *c->own_spec);
    c->parent = tgc_calloc(n, sizeof *c->parent);
    c->size = tgc_calloc(n, sizeof *c->size);
    c->spec0 = tgc_calloc(n, sizeof *c->spec0);
    c->spec1 = tgc_calloc(n, sizeof *c->spec1);
    c->kern = tgc_calloc(n, sizeof *c->kern);
    c->spec_holder = tgc_calloc(n, sizeof *c->spec_holder);
    c->kern_holder = tgc_calloc(n, sizeof *c->kern_holder);
    c->all_host_int = tgc_calloc(n, sizeof *c->all_host_int);
    c->level = tgc_calloc(n, sizeof *c->level);
    c->how = tgc_calloc(n, sizeof *c->how);
    c->device = tgc_calloc(n, sizeof *c->device);
    c->reason = tgc_calloc(n, sizeof *c->reason);
    if (!c->flags || !c->kinds || !c->kdtype || !c->kdef || !c->own_spec || !c->parent || !c->size || !c->spec0 ||
        !c->spec1 || !c->kern || !c->spec_holder || !c->kern_holder || !c->all_host_int || !c->level || !c->how ||
        !c->device || !c->reason)
        return TGC_ERR_NOMEM;
    return TGC_OK;
}

/* Each node's own constraints (rule 1's masks, rule 3's kernels, rule 4's flags). */
static tgc_status init_nodes(pl_ctx *c) {
    const tgc_graph *g = c->g;
    int64_t limit = c->opt.small_host_bytes == 0 ? TGC_PLACER_SMALL_HOST_BYTES : c->opt.small_host_bytes;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        c->parent[id] = id;
        c->size[id] = 1;
        c->spec_holder[id] = c->kern_holder[id] = -1;
        c->device[id] = -1;
        c->own_spec[id] = c->spec0[id] = c->spec1[id] = c->kern[id] = c->all;
        c->kinds[id] = (uint8_t)((1u << c->n_kinds) - 1);
        c->all_host_int[id] = 1;
        c->kdtype[id] = TGC_DTYPE_INVALID;
        if (n->n_colocate > 0) c->flags[id] |= PL_HAS_COLOC;
        if (n->kind != TGC_NODE_OP) continue;
        c->flags[id] |= PL_OP;
        for (int i = 0; i < n->n_inputs; i++)
            if (n->inputs[i].node >= 0 && g->nodes[n->inputs[i].node].kind != TGC_NODE_OP)
                c->flags[id] |= PL_READS_SOURCE;
        if (n->device != NULL) {
            c->flags[id] |= PL_HAS_SPEC;
            spec_masks(c, n->device, &c->spec0[id], &c->spec1[id]);
            c->own_spec[id] = c->spec0[id];
            if (c->spec0[id] != c->all) c->spec_holder[id] = id; /* a spec that restricts nothing holds nothing */
        }
        c->kdtype[id] = tgc_kernel_node_dtype(g, n);
        c->kinds[id] = 0;
        for (int k = 0; k < c->n_kinds; k++) {
            const tgc_kernel_def *kd = c->opt.kernel_find(g, n, k, c->opt.kernel_find_ctx);
            c->kdef[(size_t)id * c->n_kinds + k] = kd;
            if (kd != NULL) c->kinds[id] |= (uint8_t)(1u << k);
        }
        c->kern[id] = kinds_mask(c, c->kinds[id]);
        if (c->kern[id] != c->all) c->kern_holder[id] = id;
        if (small_inputs(g, n, limit)) c->flags[id] |= PL_SMALL_IN;
        if (is_metadata_op(n)) c->flags[id] |= PL_METADATA;
        else if (host_int(g, n)) c->flags[id] |= PL_HOST_INT;
        c->all_host_int[id] = (c->flags[id] & PL_HOST_INT) != 0;
    }
    return TGC_OK;
}

/* ---- Rule 1: each node alone --------------------------------------------------------- */

/* Marks the nodes whose own constraints cannot hold (reported later, in
 * node order, by report_node), so that merges do not report them again. */
static void check_nodes(pl_ctx *c) {
    const tgc_graph *g = c->g;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        if (!(c->flags[id] & PL_OP)) continue;
        if (c->kern[id] == 0) {
            c->flags[id] |= PL_BAD_KERN;
            c->kern[id] = c->all;
            c->kern_holder[id] = -1;
        }
        if (!c->opt.soft_placement &&
            (c->own_spec[id] == 0 || (!(c->flags[id] & PL_BAD_KERN) && (c->spec0[id] & c->kern[id]) == 0))) {
            c->flags[id] |= PL_BAD_SPEC;
            c->spec0[id] = c->spec1[id] = c->all;
            c->spec_holder[id] = -1;
        }
    }
}

static tgc_status report_node(pl_ctx *c, int32_t id) {
    const tgc_graph *g = c->g;
    const tgc_node *n = &g->nodes[id];
    char list[512], words[48], kinds[32];
    tgc_pl_list_words(c, list, sizeof list);
    if (c->flags[id] & PL_BAD_KERN) {
        /* Would an unlisted kind have one? Then listing it is the way out. */
        pl_text m = {0};
        tgc_pl_text_add(&m, "cannot place '%s' (op %s): %s has no kernel for %s on any listed device (%s)", n->name,
                        n->op_name, n->op_name, tgc_dtype_name(c->kdtype[id]), list);
        bool elsewhere = false;
        for (int k = 0; k < c->n_kinds; k++)
            if (c->kind_mask[k] == 0 && c->opt.kernel_find(g, n, k, c->opt.kernel_find_ctx) != NULL) {
                tgc_pl_text_add(&m, "%sa %s", elsewhere ? " or " : "; add ", tgc_backend_get(k)->prefix);
                elsewhere = true;
            }
        if (elsewhere) tgc_pl_text_add(&m, " to --devices");
        else tgc_pl_text_add(&m, "; tgc has no %s kernel for %s", n->op_name, tgc_dtype_name(c->kdtype[id]));
        tgc_status s = m.failed ? TGC_ERR_NOMEM
                                : tgc_diag_add(c->diags, TGC_SEV_ERROR, g->path, n->pos, "no-kernel", "%s", m.p);
        tgc_pl_text_free(&m);
        if (s == TGC_ERR_NOMEM) return s;
    }
    if (!(c->flags[id] & PL_BAD_SPEC)) return TGC_OK;
    tgc_pl_spec_words(n->device, words, sizeof words);
    if (c->own_spec[id] == 0)
        return tgc_diag_add(c->diags, TGC_SEV_ERROR, g->path, n->device_pos, "unlisted-device",
                            "cannot place '%s' (op %s) on %s: its device spec asks for %s, but --devices lists only "
                            "%s; add %s to --devices, change the device spec, or use --soft-placement",
                            n->name, n->op_name, words, words, list, words);
    tgc_pl_missing_kinds(c, id, c->own_spec[id], kinds, sizeof kinds);
    return tgc_diag_add(c->diags, TGC_SEV_ERROR, g->path, n->device_pos, "no-kernel",
                        "cannot place '%s' (op %s) on %s: its device spec asks for %s, but %s has no %s kernel for "
                        "%s; change the device spec or use --soft-placement",
                        n->name, n->op_name, words, words, n->op_name, kinds, tgc_dtype_name(c->kdtype[id]));
}

/* ---- Rule 4: a device per group ------------------------------------------------------- */

/* The default: the first listed device in `m` of the best kind (the
 * highest backend priority; the earlier kind of two with one priority);
 * -1 if m is empty. */
static int pick_default(const pl_ctx *c, tgc_devmask m) {
    int best = -1;
    for (int i = 0; i < c->n_devs; i++) {
        if (!(m & tgc_pl_bit(i))) continue;
        if (best < 0 || c->priority[c->devs[i].kind] > c->priority[c->devs[best].kind] ||
            (c->priority[c->devs[i].kind] == c->priority[c->devs[best].kind] &&
             c->devs[i].kind < c->devs[best].kind))
            best = i;
    }
    return best;
}

static bool is_host(const pl_ctx *c, int d) { return tgc_kind_is_host(c->devs[d].kind); }

static int first_cpu(const pl_ctx *c, tgc_devmask m) {
    for (int i = 0; i < c->n_devs; i++)
        if (is_host(c, i) && (m & tgc_pl_bit(i))) return i;
    return -1;
}

static int dev_of(pl_ctx *c, int32_t id) { return c->device[tgc_pl_find(c, id)]; }

/* The host cpu of `task` (its first listed cpu): the host-memory rule
 * holds per process. -1 when the task has no cpu listed. */
static int host_cpu_of(const pl_ctx *c, int task) {
    if (c->host_cpu >= 0 && c->devs[c->host_cpu].task == task) return c->host_cpu;
    for (int i = 0; i < c->n_devs; i++)
        if (is_host(c, i) && c->devs[i].task == task) return i;
    return -1;
}

/* The host cpu for op `id`: the one of the process its first placed op
 * input is in; else the first listed cpu. */
static int host_cpu_near(pl_ctx *c, int32_t id) {
    const tgc_node *n = &c->g->nodes[id];
    for (int i = 0; i < n->n_inputs; i++) {
        int32_t p = n->inputs[i].node;
        /* A Shape or Size not placed yet will run where its own input is. */
        for (int hops = 0; p >= 0 && c->g->nodes[p].kind == TGC_NODE_OP && dev_of(c, p) < 0 && hops < 8; hops++)
            p = c->g->nodes[p].n_inputs > 0 ? c->g->nodes[p].inputs[0].node : -1;
        int pd = p >= 0 && c->g->nodes[p].kind == TGC_NODE_OP ? dev_of(c, p) : -1;
        if (pd >= 0) {
            int h = host_cpu_of(c, c->devs[pd].task);
            return h >= 0 ? h : c->host_cpu;
        }
    }
    return c->host_cpu;
}

/* Is output `port` of node p in host memory once p has run? Graph inputs
 * and initializers start there; so does everything on a kind whose memory
 * is host memory; another kind's kernel says which of its outputs it
 * leaves there (Shape, Size, shape arithmetic). */
static bool in_host_memory(pl_ctx *c, int32_t p, int32_t port) {
    if (!(c->flags[p] & PL_OP) || (c->flags[p] & PL_METADATA)) return true;
    int d = dev_of(c, p);
    if (d < 0) return false;
    tgc_device_kind kind = c->devs[d].kind;
    if (tgc_kind_host_memory(kind)) return true;
    const tgc_kernel_def *k = c->kdef[(size_t)p * c->n_kinds + kind];
    return tgc_kernel_host_output(k, port);
}

/* Rule 5's exception: every input in host memory (the sizes were checked
 * by small_inputs, while the node was at hand). */
static bool small_on_host(pl_ctx *c, int32_t id) {
    if (!(c->flags[id] & PL_SMALL_IN)) return false;
    const tgc_node *n = &c->g->nodes[id];
    for (int i = 0; i < n->n_inputs; i++)
        if (n->inputs[i].node >= 0 && !in_host_memory(c, n->inputs[i].node, n->inputs[i].port)) return false;
    return true;
}

/* Chooses the device of the group of op node `id` (its first op member in
 * topological order), or defers a lone Shape/Size until its input has one. */
static void decide_group(pl_ctx *c, int32_t id, int32_t *deferred, int32_t *n_deferred) {
    int32_t r = tgc_pl_find(c, id);
    tgc_devmask m = tgc_pl_allowed(c, r);
    int d = -1;
    pl_how how = PL_HOW_DEFAULT;
    if ((m & (m - 1)) == 0) {
        d = pick_default(c, m);
        how = PL_HOW_FORCED;
    } else if (c->size[r] == 1 && (c->flags[id] & PL_METADATA)) {
        c->flags[r] |= PL_DEFERRED | PL_DECIDED;
        deferred[(*n_deferred)++] = id;
        return;
    } else if (c->all_host_int[r] && host_cpu_near(c, id) >= 0 && (m & tgc_pl_bit(host_cpu_near(c, id)))) {
        d = host_cpu_near(c, id); /* the host of the process its inputs are in */
        how = PL_HOW_HOST;
    } else {
        d = pick_default(c, m);
        int cpu = first_cpu(c, m);
        if (c->size[r] == 1 && !is_host(c, d) && cpu >= 0 && small_on_host(c, id)) {
            /* Stay with the first input that is on a cpu, else the first cpu. */
            const tgc_node *n = &c->g->nodes[id];
            d = cpu;
            for (int i = 0; i < n->n_inputs; i++) {
                int32_t p = n->inputs[i].node;
                int pd = p >= 0 && c->g->nodes[p].kind == TGC_NODE_OP ? dev_of(c, p) : -1;
                if (pd >= 0 && is_host(c, pd) && (m & tgc_pl_bit(pd))) {
                    d = pd;
                    break;
                }
            }
            how = PL_HOW_SMALL;
        }
    }
    c->device[r] = d;
    c->how[r] = (uint8_t)how;
    c->flags[r] |= PL_DECIDED;
}

/* Rule 5: graph inputs and initializers that no op group took. */
static tgc_status place_sources(pl_ctx *c) {
    const tgc_graph *g = c->g;
    int32_t nn = g->n_nodes;
    int32_t *first_any = tgc_malloc(((size_t)nn + 1) * 2 * sizeof *first_any);
    if (first_any == NULL) return TGC_ERR_NOMEM;
    int32_t *first_data = first_any + nn + 1;
    for (int32_t i = 0; i <= nn; i++) first_any[i] = first_data[i] = -1;
    for (int32_t id = 0; id < nn; id++) {
        if ((c->flags[id] & (PL_OP | PL_READS_SOURCE)) != (PL_OP | PL_READS_SOURCE)) continue;
        const tgc_node *n = &g->nodes[id];
        bool metadata = (c->flags[id] & PL_METADATA) && (c->flags[tgc_pl_find(c, id)] & PL_DEFERRED);
        int d = metadata ? -1 : dev_of(c, id);
        const tgc_kernel_def *k = d >= 0 ? c->kdef[(size_t)id * c->n_kinds + c->devs[d].kind] : NULL;
        for (int i = 0; i < n->n_inputs; i++) {
            int32_t p = n->inputs[i].node;
            if (p < 0 || g->nodes[p].kind == TGC_NODE_OP || d < 0) continue;
            bool host_read = tgc_kernel_host_input(k, i) || tgc_kernel_metadata_input(k, i);
            if (first_any[p] < 0) first_any[p] = d;
            if (!host_read && first_data[p] < 0) first_data[p] = d;
        }
    }
    for (int32_t id = 0; id < nn; id++) {
        if (c->flags[id] & PL_OP) continue;
        int32_t r = tgc_pl_find(c, id);
        if (c->flags[r] & PL_DECIDED) continue;
        int d;
        pl_how how;
        int any = first_any[id];
        if (first_data[id] >= 0) d = first_data[id], how = PL_HOW_CONSUMER;
        else if (any >= 0 && is_host(c, any)) d = any, how = PL_HOW_HOST;
        else if (host_cpu_of(c, any >= 0 ? c->devs[any].task : 0) >= 0)
            d = host_cpu_of(c, any >= 0 ? c->devs[any].task : 0), how = PL_HOW_HOST;
        else if (any >= 0) d = any, how = PL_HOW_CONSUMER;
        else d = pick_default(c, c->all), how = PL_HOW_DEFAULT;
        c->device[r] = d;
        c->how[r] = (uint8_t)how;
        c->flags[r] |= PL_DECIDED;
    }
    tgc_free(first_any);
    return TGC_OK;
}

/* Rule 4's metadata readers, in topological order: where their input is. */
static void place_deferred(pl_ctx *c, const int32_t *deferred, int32_t n_deferred) {
    for (int32_t i = 0; i < n_deferred; i++) {
        int32_t id = deferred[i], r = tgc_pl_find(c, id);
        const tgc_node *n = &c->g->nodes[id];
        tgc_devmask m = tgc_pl_allowed(c, r);
        int d = n->n_inputs > 0 && n->inputs[0].node >= 0 ? dev_of(c, n->inputs[0].node) : -1;
        if (d >= 0 && (m & tgc_pl_bit(d))) {
            c->how[r] = PL_HOW_HOST;
        } else {
            d = pick_default(c, m);
            c->how[r] = PL_HOW_DEFAULT;
        }
        c->device[r] = d;
        c->flags[r] &= (uint16_t)~PL_DEFERRED;
    }
}

/* ---- Reasons and soft placement's warnings --------------------------------------------------- */

static tgc_place_reason reason_of(pl_ctx *c, int32_t id) {
    int32_t r = tgc_pl_find(c, id);
    int d = c->device[r];
    pl_how how = (pl_how)c->how[r];
    if (!(c->flags[id] & PL_OP)) {
        if (c->size[r] > 1) return TGC_PLACED_BY_COLOCATION; /* an op of its group decided */
        switch (how) {
        case PL_HOW_CONSUMER: return TGC_PLACED_BY_CONSUMER;
        case PL_HOW_FEED: return TGC_PLACED_BY_FEED;
        case PL_HOW_HOST: return TGC_PLACED_BY_HOST_RULE;
        case PL_HOW_DEFAULT: return TGC_PLACED_BY_DEFAULT;
        default: return TGC_PLACED_BY_DEFAULT;
        }
    }
    if (c->level[r] > 0) return TGC_PLACED_BY_SOFT;
    if (c->flags[id] & PL_HAS_SPEC) return TGC_PLACED_BY_SPEC;
    if (how == PL_HOW_HOST) return TGC_PLACED_BY_HOST_RULE;
    if (how == PL_HOW_SMALL) return TGC_PLACED_BY_SMALL_HOST;
    if (how == PL_HOW_AUTO) return TGC_PLACED_BY_AUTO;
    if (c->spec_holder[r] >= 0) return TGC_PLACED_BY_COLOCATION; /* another member's spec */
    /* Did kernels move it off the device the default would give? Its own
     * kernels, or another member's? */
    int unrestricted = pick_default(c, c->spec0[r]);
    if (unrestricted != d)
        return (kinds_mask(c, c->kinds[id]) & tgc_pl_bit(unrestricted)) ? TGC_PLACED_BY_COLOCATION : TGC_PLACED_BY_KERNEL;
    return TGC_PLACED_BY_DEFAULT;
}

static tgc_status warn_relaxed(pl_ctx *c, int32_t id) {
    const tgc_graph *g = c->g;
    const tgc_node *n = &g->nodes[id];
    int32_t r = tgc_pl_find(c, id);
    int d = c->device[r];
    char words[48], list[512], dev[32], kinds[32];
    tgc_pl_spec_words(n->device, words, sizeof words);
    tgc_placer_device_name(c->devs[d], dev, sizeof dev);
    pl_text m = {0};
    tgc_pl_text_add(&m, "'%s' (op %s) asks for %s, but ", n->name, n->op_name, words);
    tgc_devmask own_kern = kinds_mask(c, c->kinds[id]);
    if (c->own_spec[id] == 0)
        tgc_pl_text_add(&m, "--devices lists only %s", tgc_pl_list_words(c, list, sizeof list));
    else if ((c->own_spec[id] & own_kern) == 0)
        tgc_pl_text_add(&m, "%s has no %s kernel for %s", n->op_name,
                        tgc_pl_missing_kinds(c, id, c->own_spec[id], kinds, sizeof kinds),
                        tgc_dtype_name(c->kdtype[id]));
    else if ((c->own_spec[id] & c->kern[r]) == 0)
        tgc_pl_text_add(&m, "it is colocated with nodes that have no kernel there");
    else
        tgc_pl_text_add(&m, "it is colocated with nodes that must run elsewhere");
    tgc_pl_text_add(&m, "; soft placement put it on %s (%s)", dev,
                    c->level[r] == 1 ? "the spec relaxed to its kind" : "the spec dropped");
    tgc_status s = m.failed ? TGC_ERR_NOMEM
                            : tgc_diag_add(c->diags, TGC_SEV_WARNING, g->path, n->device_pos, "soft-placement", "%s",
                                           m.p);
    tgc_pl_text_free(&m);
    return s;
}

/* ---- The driver ----------------------------------------------------------------------------------- */

/* Graph inputs whose consumer is in another process go to task 0, which
 * reads the feeds (its first cpu, else its first device); a pair carries
 * them over. An input colocated with ops stays with its group. */
static void feeds_on_task0(pl_ctx *c) {
    if (tgc_placer_max_task(c->devs, c->n_devs) == 0) return;
    int home = -1;
    for (int i = 0; i < c->n_devs; i++)
        if (c->devs[i].task == 0 && (home < 0 || (!is_host(c, home) && is_host(c, i))))
            home = i;
    if (home < 0) return; /* no device on task 0: the session refuses the list */
    for (int32_t id = 0; id < c->g->n_nodes; id++) {
        if (c->g->nodes[id].kind != TGC_NODE_INPUT) continue;
        int32_t r = tgc_pl_find(c, id);
        if (c->size[r] > 1 || c->device[r] < 0 || c->devs[c->device[r]].task == 0) continue;
        c->device[r] = home;
        c->how[r] = (uint8_t)PL_HOW_FEED;
    }
}

static tgc_status run(pl_ctx *c, tgc_placement *out) {
    const tgc_graph *g = c->g;
    tgc_status s = ctx_alloc(c);
    if (s == TGC_OK) s = init_nodes(c);
    if (s == TGC_OK) s = tgc_pl_build_edges(c);
    if (s != TGC_OK) return s;

    /* Rules 1-3: each node's errors, then its colocation entries, in node
     * order, so messages come out in file order. */
    check_nodes(c);
    tgc_status result = TGC_OK;
    int32_t eid = 0;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        if (c->flags[id] & (PL_BAD_KERN | PL_BAD_SPEC)) {
            s = report_node(c, id);
            if (s == TGC_ERR_NOMEM) return s;
            result = TGC_ERR_INVALID;
        }
        s = tgc_pl_colocate_node(c, id, &eid);
        if (s == TGC_ERR_NOMEM) return s;
        if (s != TGC_OK) result = s;
    }
    if (result != TGC_OK) return result;

    /* Soft placement: the lowest relaxation level that leaves a device. */
    for (int32_t id = 0; id < g->n_nodes; id++) {
        if (c->parent[id] != id) continue;
        c->level[id] = (c->spec0[id] & c->kern[id]) ? 0 : (c->spec1[id] & c->kern[id]) ? 1 : 2;
    }

    /* Rule 4 in topological order; then sources; then Shape/Size. */
    int32_t *deferred = tgc_malloc(((size_t)g->n_nodes + 1) * sizeof *deferred);
    if (deferred == NULL) return TGC_ERR_NOMEM;
    int32_t n_deferred = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        int32_t id = g->topo != NULL ? g->topo[i] : i; /* no order: ids are one (graphs built by hand) */
        if ((c->flags[id] & PL_OP) && !(c->flags[tgc_pl_find(c, id)] & PL_DECIDED))
            decide_group(c, id, deferred, &n_deferred);
    }
    s = c->opt.automatic != NULL ? tgc_pl_auto(c) : TGC_OK;
    if (s == TGC_OK) s = place_sources(c);
    if (s == TGC_OK) place_deferred(c, deferred, n_deferred);
    if (s == TGC_OK) feeds_on_task0(c);
    if (s == TGC_OK && c->opt.automatic != NULL) s = tgc_pl_auto_forecast(c);
    tgc_free(deferred);
    if (s != TGC_OK) return s;

    for (int32_t id = 0; id < g->n_nodes; id++) {
        c->reason[id] = reason_of(c, id);
        if (c->opt.soft_placement && (c->flags[id] & PL_HAS_SPEC) &&
            !(c->own_spec[id] & tgc_pl_bit(c->device[tgc_pl_find(c, id)]))) {
            s = warn_relaxed(c, id);
            if (s == TGC_ERR_NOMEM) return s;
        }
    }
    /* Hand over device and reason; the group array reuses `parent`. */
    for (int32_t id = 0; id < g->n_nodes; id++) c->parent[id] = tgc_pl_find(c, id);
    for (int32_t id = 0; id < g->n_nodes; id++) c->device[id] = c->device[c->parent[id]];
    out->n_nodes = g->n_nodes;
    out->device = c->device;
    out->reason = c->reason;
    out->group = c->parent;
    out->forecast = c->forecast;
    out->replicas = c->replicas;
    c->forecast = NULL;
    c->device = NULL;
    c->reason = NULL;
    c->parent = NULL;
    return TGC_OK;
}

tgc_status tgc_placer_run(const tgc_graph *g, const tgc_placer_device *devices, int n_devices,
                          const tgc_placer_options *opts, tgc_diags *diags, tgc_placement *out) {
    memset(out, 0, sizeof *out);
    pl_ctx c = {.g = g, .devs = devices, .n_devs = n_devices, .diags = diags, .host_cpu = -1,
                .n_kinds = tgc_backend_count()};
    for (int k = 0; k < c.n_kinds; k++) c.priority[k] = tgc_backend_get(k)->priority;
    if (opts != NULL) c.opt = *opts;
    if (c.opt.kernel_find == NULL) c.opt.kernel_find = registry_find;
    if (n_devices < 1 || n_devices > TGC_PLACER_MAX_DEVICES)
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list",
                              "a placement needs 1 to %d devices, got %d", TGC_PLACER_MAX_DEVICES, n_devices);
    for (int i = 0; i < n_devices; i++) {
        for (int j = 0; j < i; j++)
            if (devices[j].kind == devices[i].kind && devices[j].index == devices[i].index &&
                devices[j].task == devices[i].task) {
                char name[32];
                return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list", "device %s is listed twice",
                                      tgc_placer_device_name(devices[i], name, sizeof name));
            }
        if (tgc_backend_get(devices[i].kind) == NULL)
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list",
                                  "device %d of the list has kind %d, which no backend has", i, devices[i].kind);
        c.all |= tgc_pl_bit(i);
        c.kind_mask[devices[i].kind] |= tgc_pl_bit(i);
        if (tgc_kind_is_host(devices[i].kind) && c.host_cpu < 0) c.host_cpu = i;
    }
    tgc_status s = run(&c, out);
    ctx_free(&c);
    return s;
}

void tgc_placement_release(tgc_placement *p) {
    if (p == NULL) return;
    tgc_free(p->device);
    tgc_free(p->reason);
    tgc_free(p->group);
    tgc_free(p->forecast);
    memset(p, 0, sizeof *p);
}
