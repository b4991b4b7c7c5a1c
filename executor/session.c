/* Session setup: devices, a kernel per node, consumer counts per output
 * slot, and the weights loaded once onto the device that uses them. */
#include "executor/session.h"

#include "devices/opencl/opencl.h"
#include "graph/op_registry.h"
#include "support/alloc.h"
#include "support/diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses one device name: cpu (= cpu0), cpuN, gpuN (gpu = gpu0). Returns
 * the kind and index, or false. */
static bool parse_device_name(const char *name, tgc_device_kind *kind, int *index) {
    const char *digits;
    if (strncmp(name, "cpu", 3) == 0) *kind = TGC_DEVICE_CPU;
    else if (strncmp(name, "gpu", 3) == 0) *kind = TGC_DEVICE_GPU;
    else return false;
    digits = name + 3;
    if (*digits == '\0') {
        *index = 0;
        return true;
    }
    if (*digits == '0' && digits[1] != '\0') return false;
    *index = 0;
    for (; *digits; digits++) {
        if (*digits < '0' || *digits > '9' || *index >= TGC_MAX_DEVICES) return false;
        *index = *index * 10 + (*digits - '0');
    }
    return *index < TGC_MAX_DEVICES;
}

/* Parses "cpu", "gpu0", "cpu0,cpu1,gpu0" into devices. */
tgc_status tgc_session_open_devices(tgc_session *s, const char *devices, tgc_diags *diags) {
    const char *p = devices;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        char name[32];
        if (len == 0 || len >= sizeof name)
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list", "bad device list '%s'", devices);
        memcpy(name, p, len);
        name[len] = '\0';
        tgc_device_kind kind;
        int index;
        if (!parse_device_name(name, &kind, &index))
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list",
                                  "'%s' is not a device name (cpu, cpuN, gpu, gpuN)", name);
        for (int i = 0; i < s->n_devices; i++)
            if (s->devices[i]->index == index && s->devices[i]->kind == kind)
                return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list",
                                      "device '%s' is listed twice", name);
        if (s->n_devices == TGC_MAX_DEVICES)
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list", "too many devices");
        tgc_device *d = NULL;
        if (kind == TGC_DEVICE_CPU) {
            d = tgc_cpu_device_create(index);
            if (d == NULL) return TGC_ERR_NOMEM;
        } else {
            tgc_status st = tgc_cl_device_create(index, diags, &d);
            if (st != TGC_OK) return st;
        }
        s->devices[s->n_devices++] = d;
        p += len;
        if (*p == ',') p++;
    }
    if (s->n_devices == 0)
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list", "no device listed");
    return TGC_OK;
}

tgc_device *tgc_session_device_of(const tgc_session *s, int32_t id) {
    return s->device_of[id] < 0 ? tgc_host_device() : s->devices[s->device_of[id]];
}

/* Copies an initializer onto `d`. */
static tgc_status load_weight(tgc_device *d, const tgc_const *c, tgc_value *out) {
    tgc_value v = {.dtype = c->dtype, .rank = c->shape.rank};
    for (int i = 0; i < v.rank; i++) v.dims[i] = c->shape.dims[i].v;
    tgc_status s = tgc_buffer_alloc(d, c->nbytes, &v.buf);
    if (s != TGC_OK) return s;
    s = d->ops->copy_from_host(d, v.buf->mem, 0, c->data, c->nbytes);
    if (s != TGC_OK) {
        tgc_buffer_release(v.buf);
        return s;
    }
    *out = v;
    return TGC_OK;
}

/* The dtype a node's kernel is chosen by: its first input's, else its first output's. */
static tgc_dtype kernel_dtype(const tgc_graph *g, const tgc_node *n) {
    if (n->n_inputs > 0 && n->inputs[0].node >= 0) return tgc_graph_ref_info(g, n->inputs[0])->dtype;
    return n->n_outputs > 0 ? n->outputs[0].dtype : TGC_DTYPE_INVALID;
}

static tgc_status plan_nodes(tgc_session *s, tgc_diags *diags) {
    const tgc_graph *g = s->g;
    tgc_status result = TGC_OK;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        s->value_base[id] = s->n_values;
        s->n_values += n->n_outputs;
        s->device_of[id] = 0;
        if (n->kind != TGC_NODE_OP) continue;
        tgc_device *d = s->devices[s->device_of[id]];
        tgc_dtype dt = kernel_dtype(g, n);
        s->kernels[id] = tgc_kernel_find(n->op_name, d->kind, dt);
        if (s->kernels[id] == NULL)
            result = tgc_diag_error(diags, g->path, n->pos, "no-kernel", "node '%s' (%s): no %s kernel for %s on %s",
                                    n->name, n->op_name, d->kind == TGC_DEVICE_CPU ? "cpu" : "gpu", tgc_dtype_name(dt),
                                    d->name);
    }
    return result;
}

/* An initializer whose every consumer takes it as a host-memory input (a
 * shape argument) lives in host memory; others on their consumers' device. */
static void place_constants(tgc_session *s) {
    const tgc_graph *g = s->g;
    bool *device_use = tgc_calloc((size_t)g->n_nodes + 1, sizeof *device_use);
    if (device_use == NULL) return; /* keep them on the device: correct, only slower */
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        const tgc_kernel_def *k = s->kernels[id];
        for (int i = 0; k != NULL && i < n->n_inputs; i++)
            if (n->inputs[i].node >= 0 && !(k->host_inputs & (1u << i))) device_use[n->inputs[i].node] = true;
    }
    for (int32_t id = 0; id < g->n_nodes; id++)
        if (g->nodes[id].kind == TGC_NODE_CONST && !device_use[id]) s->device_of[id] = -1;
    tgc_free(device_use);
}

static tgc_status count_uses(tgc_session *s) {
    const tgc_graph *g = s->g;
    s->use_count = tgc_calloc((size_t)s->n_values + 1, sizeof *s->use_count);
    s->weights = tgc_calloc((size_t)s->n_values + 1, sizeof *s->weights);
    if (s->use_count == NULL || s->weights == NULL) return TGC_ERR_NOMEM;
    for (int32_t id = 0; id < g->n_nodes; id++)
        for (int i = 0; i < g->nodes[id].n_inputs; i++) {
            tgc_ref r = g->nodes[id].inputs[i];
            if (r.node >= 0) s->use_count[s->value_base[r.node] + r.port]++;
        }
    for (int i = 0; i < g->n_outputs; i++) s->use_count[s->value_base[g->outputs[i].node] + g->outputs[i].port]++;
    return TGC_OK;
}

static tgc_status name_outputs(tgc_session *s) {
    const tgc_graph *g = s->g;
    s->output_names = tgc_calloc((size_t)g->n_outputs + 1, sizeof *s->output_names);
    if (s->output_names == NULL) return TGC_ERR_NOMEM;
    for (int i = 0; i < g->n_outputs; i++) {
        const char *node = g->nodes[g->outputs[i].node].name;
        size_t size = strlen(node) + 16;
        if ((s->output_names[i] = tgc_malloc(size)) == NULL) return TGC_ERR_NOMEM;
        if (g->outputs[i].port == 0) snprintf(s->output_names[i], size, "%s", node);
        else snprintf(s->output_names[i], size, "%s:%d", node, (int)g->outputs[i].port);
    }
    return TGC_OK;
}

static tgc_status load_weights(tgc_session *s, tgc_diags *diags) {
    const tgc_graph *g = s->g;
    for (int32_t id = 0; id < g->n_nodes; id++) {
        const tgc_node *n = &g->nodes[id];
        if (n->kind != TGC_NODE_CONST) continue;
        tgc_device *d = tgc_session_device_of(s, id);
        tgc_status st = load_weight(d, n->data, &s->weights[s->value_base[id]]);
        if (st != TGC_OK)
            return tgc_diag_add(diags, TGC_SEV_ERROR, g->path, n->pos, "out-of-memory",
                                "initializer '%s': cannot place %zu bytes on %s", n->name, n->data->nbytes, d->name),
                   st;
    }
    return TGC_OK;
}

tgc_status tgc_session_create(const tgc_graph *g, const char *devices, const tgc_session_options *opts,
                              tgc_diags *diags, tgc_session **out) {
    (void)opts;
    *out = NULL;
    tgc_session *s = tgc_calloc(1, sizeof *s);
    if (s == NULL) return TGC_ERR_NOMEM;
    s->g = g;
    size_t n = (size_t)g->n_nodes + 1;
    s->device_of = tgc_calloc(n, sizeof *s->device_of);
    s->kernels = tgc_calloc(n, sizeof *s->kernels);
    s->value_base = tgc_calloc(n, sizeof *s->value_base);
    tgc_status st = s->device_of && s->kernels && s->value_base ? TGC_OK : TGC_ERR_NOMEM;
    if (st == TGC_OK) st = tgc_session_open_devices(s, devices, diags);
    if (st == TGC_OK) st = plan_nodes(s, diags);
    if (st == TGC_OK) place_constants(s);
    if (st == TGC_OK) st = count_uses(s);
    if (st == TGC_OK) st = name_outputs(s);
    if (st == TGC_OK) st = load_weights(s, diags);
    if (st != TGC_OK) {
        tgc_session_free(s);
        return st;
    }
    *out = s;
    return TGC_OK;
}

void tgc_session_free(tgc_session *s) {
    if (s == NULL) return;
    if (s->weights != NULL)
        for (int32_t i = 0; i < s->n_values; i++) tgc_buffer_release(s->weights[i].buf);
    for (int i = 0; i < s->n_devices; i++) tgc_device_destroy(s->devices[i]);
    tgc_free(s->device_of);
    tgc_free(s->kernels);
    tgc_free(s->value_base);
    tgc_free(s->use_count);
    tgc_free(s->weights);
    if (s->output_names != NULL)
        for (int i = 0; i < s->g->n_outputs; i++) tgc_free(s->output_names[i]);
    tgc_free(s->output_names);
    tgc_free(s);
}

int tgc_session_output_count(const tgc_session *s) { return s->g->n_outputs; }

const char *tgc_session_output_name(const tgc_session *s, int i) {
    return s->output_names[i];
}

int tgc_session_device_count(const tgc_session *s) { return s->n_devices; }
const char *tgc_session_device_name(const tgc_session *s, int i) { return s->devices[i]->name; }

tgc_memory_figures tgc_session_memory(const tgc_session *s, int i) {
    tgc_allocator_stats st = tgc_device_stats(s->devices[i]);
    tgc_memory_figures f = {st.live_buffers, st.bytes_in_use, st.peak_bytes_in_use, st.num_allocs,
                            st.largest_alloc_size};
    return f;
}
