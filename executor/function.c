/* tgc_function: a graph compiled once and called as one op on tensor
 * handles (TensorFlow's PartitionedCall under tf.function). It is a session
 * over the process's shared devices (tgc_session.shared_devices): the
 * eager contexts' devices, so inputs are fed where they lie and outputs
 * stay where they were computed. */
#include "executor/session.h"

#include "support/alloc.h"
#include "support/diag.h"

struct tgc_function {
    tgc_session *s;
    const char **input_names; /* the session's, in the graph's order */
    int n_inputs, n_outputs;
};

tgc_status tgc_function_create(const tgc_graph *g, const char *devices, const tgc_function_options *opts,
                               tgc_diags *diags, tgc_function **out) {
    *out = NULL;
    if (g == NULL || devices == NULL) return TGC_ERR_INVALID;
    tgc_session_options so = {0};
    if (opts != NULL) {
        so.optimize = opts->optimize;
        so.placement = opts->placement;
        so.soft_placement = opts->soft_placement;
        so.threads = opts->threads;
    }
    tgc_function *f = tgc_calloc(1, sizeof *f);
    if (f == NULL) return TGC_ERR_NOMEM;
    tgc_status st = tgc_session_create_on(g, devices, &so, true, diags, &f->s);
    if (st == TGC_OK && f->s->distributed)
        st = tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-device-list",
                            "a function runs in this process: '%s' names another's devices", devices);
    if (st == TGC_OK) {
        f->n_inputs = tgc_session_input_count(f->s);
        f->n_outputs = tgc_session_output_count(f->s);
        if ((f->input_names = tgc_calloc((size_t)f->n_inputs + 1, sizeof *f->input_names)) == NULL)
            st = TGC_ERR_NOMEM;
    }
    for (int i = 0; st == TGC_OK && i < f->n_inputs; i++) f->input_names[i] = tgc_session_input_name(f->s, i);
    if (st != TGC_OK) {
        tgc_function_free(f);
        return st;
    }
    *out = f;
    return TGC_OK;
}

void tgc_function_free(tgc_function *f) {
    if (f == NULL) return;
    tgc_session_free(f->s);
    tgc_free(f->input_names);
    tgc_free(f);
}

tgc_status tgc_function_call(tgc_function *f, tgc_tensor *const *inputs, int n_inputs, tgc_tensor **outputs,
                             int n_outputs, tgc_diags *diags) {
    if (f == NULL || outputs == NULL || (n_inputs > 0 && inputs == NULL)) return TGC_ERR_INVALID;
    for (int i = 0; i < n_outputs; i++) outputs[i] = NULL;
    if (n_inputs != f->n_inputs || n_outputs != f->n_outputs)
        return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-call",
                              "function of graph '%s' takes %d inputs and gives %d outputs; called with %d and %d",
                              f->s->g->name ? f->s->g->name : f->s->g->path, f->n_inputs, f->n_outputs, n_inputs,
                              n_outputs);
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i] == NULL)
            return tgc_diag_error(diags, NULL, (tgc_srcpos){0, 0}, "bad-feed", "input %d ('%s') is NULL", i,
                                  f->input_names[i]);
    return tgc_session_run(f->s, n_inputs, f->input_names, inputs, outputs, diags);
}
