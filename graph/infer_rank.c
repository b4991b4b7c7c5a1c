/* Inference over a rank known only at run time: the node is inferred once
 * per rank its unknown-rank inputs could have, and the answers are merged.
 * See infer_rank.h. */
#include "graph/infer_rank.h"

#include "support/alloc.h"

#include <stdio.h>
#include <string.h>

enum {
    RANKS = TGC_MAX_RANK + 1, /* ranks 0..TGC_MAX_RANK */
    MAX_ENUMERATED = 3,       /* unknown-rank inputs whose ranks combine freely: 9^3 trials */
};

/* The symbols a trial's shapes are made of: dims[d] for dim d of an
 * unknown-rank input, `varies` for a dim the op could not tell (a fresh dim
 * while probing) or that differs between ranks. Their names ("?0", "?")
 * cannot be written in a graph file, so they never meet a user's symbol;
 * they never reach an output of the graph (finish replaces them). */
typedef struct probe_syms {
    int32_t dims[TGC_MAX_RANK];
    int32_t varies;
} probe_syms;

static bool make_probe_syms(tgc_graph *g, probe_syms *p) {
    char name[8];
    for (int d = 0; d < TGC_MAX_RANK; d++) {
        snprintf(name, sizeof name, "?%d", d);
        if ((p->dims[d] = tgc_graph_symbol(g, name, true)) < 0) return false;
    }
    return (p->varies = tgc_graph_symbol(g, "?", true)) >= 0;
}

static bool is_probe(const probe_syms *p, tgc_dim d) {
    if (d.sym == p->varies) return true;
    for (int i = 0; i < TGC_MAX_RANK; i++)
        if (d.sym == p->dims[i]) return true;
    return false;
}

bool tgc_infer_rank_needed(const tgc_graph *g, const tgc_node *n) {
    for (int a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].type == TGC_ATTR_GRAPH) return false;
    for (int i = 0; i < n->n_inputs; i++) {
        const tgc_tensor_info *in = tgc_graph_ref_info(g, n->inputs[i]);
        if (in != NULL && in->kind == TGC_KIND_TENSOR && in->shape.rank == TGC_RANK_UNKNOWN) return true;
    }
    return false;
}

/* The trials' state: the inputs as one trial sees them, the outputs it
 * gives, and what the valid trials so far agree on. */
typedef struct trials {
    tgc_infer_ctx *c;
    probe_syms probe;
    int *unknown; /* indices of the unknown-rank inputs */
    int n_unknown;
    tgc_tensor_info *in;     /* n_inputs: shallow copies of the graph's infos */
    tgc_tensor_info *out;    /* n_outputs: one trial's */
    tgc_tensor_info *merged; /* n_outputs: what every valid trial gives */
    int valid;               /* trials that succeeded */
    bool dtype_differs;      /* two valid trials disagree on an output's dtype or kind */
} trials;

/* Gives the j-th unknown-rank input rank `rank`, its dims the probe's. */
static void set_rank(trials *t, int j, int rank) {
    tgc_shape *s = &t->in[t->unknown[j]].shape;
    s->rank = rank;
    for (int d = 0; d < rank; d++) s->dims[d] = tgc_dim_sym(t->probe.dims[d]);
}

static void clear_infos(tgc_tensor_info *infos, int n) {
    for (int k = 0; k < n; k++) {
        tgc_info_clear_value(&infos[k]);
        infos[k] = (tgc_tensor_info){.dtype = TGC_DTYPE_INVALID, .shape = {.rank = TGC_RANK_UNKNOWN}, .value_len = -1};
    }
}

/* Runs the op's inference on t->in into t->out; diags may be NULL. */
static tgc_status run_trial(trials *t, tgc_diags *diags) {
    tgc_infer_ctx trial = *t->c;
    trial.diags = diags;
    trial.input_infos = t->in;
    trial.output_infos = t->out;
    trial.probing = true;
    trial.probe_sym = t->probe.varies;
    clear_infos(t->out, t->c->node->n_outputs);
    tgc_status s = t->c->node->op->infer(&trial);
    if (trial.nomem) return TGC_ERR_NOMEM;
    for (int k = 0; s == TGC_OK && k < t->c->node->n_outputs; k++)
        if (t->out[k].dtype == TGC_DTYPE_INVALID) s = TGC_ERR_INVALID; /* the driver reports it */
    return s;
}

static bool same_value(const tgc_tensor_info *a, const tgc_tensor_info *b) {
    if (a->value_len != b->value_len) return false;
    for (int i = 0; i < a->value_len; i++)
        if (!tgc_dim_eq(a->value[i], b->value[i])) return false;
    return true;
}

/* Folds a valid trial's outputs into t->merged. */
static void merge_trial(trials *t) {
    for (int k = 0; k < t->c->node->n_outputs; k++) {
        tgc_tensor_info *m = &t->merged[k], *o = &t->out[k];
        if (t->valid == 0) {
            *m = *o; /* takes the value */
            o->value = NULL;
            o->value_len = -1;
            continue;
        }
        if (m->dtype != o->dtype || m->kind != o->kind) t->dtype_differs = true;
        if (m->value_len >= 0 && !same_value(m, o)) tgc_info_clear_value(m);
        if (m->shape.rank != o->shape.rank || o->shape.rank == TGC_RANK_UNKNOWN) {
            m->shape.rank = TGC_RANK_UNKNOWN;
            continue;
        }
        for (int d = 0; d < m->shape.rank; d++)
            if (!tgc_dim_eq(m->shape.dims[d], o->shape.dims[d])) m->shape.dims[d] = tgc_dim_sym(t->probe.varies);
    }
    t->valid++;
}

/* Writes the merged outputs into the graph: probe symbols become fresh
 * symbols (one per dim: nothing says two such dims are equal), a value
 * that names one is dropped. */
static tgc_status finish(trials *t, bool ranks_shared) {
    tgc_infer_ctx *c = t->c;
    for (int k = 0; k < c->node->n_outputs; k++) {
        tgc_tensor_info *m = &t->merged[k];
        tgc_shape shape = m->shape;
        if (ranks_shared) shape.rank = TGC_RANK_UNKNOWN;
        for (int d = 0; d < shape.rank; d++)
            if (is_probe(&t->probe, shape.dims[d])) shape.dims[d] = tgc_infer_fresh_dim(c);
        tgc_status s = tgc_infer_set_output_kind(c, k, m->kind, m->dtype, &shape);
        if (s != TGC_OK) return s;
        bool value_known = m->value_len >= 0 && !ranks_shared;
        for (int i = 0; value_known && i < m->value_len; i++)
            if (is_probe(&t->probe, m->value[i])) value_known = false;
        if (value_known && (s = tgc_infer_set_value(c, k, m->value_len, m->value)) != TGC_OK) return s;
    }
    return TGC_OK;
}

/* Sets the ranks of combination `combo`: its base-9 digits, one per
 * unknown-rank input, or (shared) the rank `combo` for all of them. */
static void set_combo(trials *t, int combo, bool shared) {
    for (int j = 0, rest = combo; j < t->n_unknown; j++, rest = shared ? rest : rest / RANKS)
        set_rank(t, j, shared ? combo : rest % RANKS);
}

/* Whether message i of d is about an unknown-rank input's probed shape:
 * placed at that input, or showing a probe dim. */
static bool blames_unknown(const trials *t, const tgc_diags *d, size_t i) {
    if (strstr(tgc_diag_message(d, i), "[?") != NULL) return true;
    for (int j = 0; j < t->n_unknown; j++) {
        tgc_srcpos at = t->c->node->inputs[t->unknown[j]].pos;
        if (at.line > 0 && tgc_diag_line(d, i) == at.line && tgc_diag_column(d, i) == at.col) return true;
    }
    return false;
}

/* The combination to report when none is valid: the first (no input at
 * rank 0) whose error is about something else than the probed shapes, as
 * Gemm's complaint about a 3-d B; else every input at rank 1. */
static tgc_status pick_report(trials *t, int combos, bool shared, int *chosen) {
    *chosen = -1;
    tgc_diags *scratch = tgc_diags_create();
    if (scratch == NULL) return TGC_ERR_NOMEM;
    tgc_status s = TGC_OK;
    for (int combo = 0; combo < combos && *chosen < 0; combo++) {
        set_combo(t, combo, shared);
        bool has_rank0 = false;
        for (int j = 0; j < t->n_unknown; j++) has_rank0 |= t->in[t->unknown[j]].shape.rank == 0;
        if (has_rank0) continue;
        size_t before = tgc_diags_count(scratch);
        s = run_trial(t, scratch);
        if (s == TGC_ERR_NOMEM) break;
        size_t after = tgc_diags_count(scratch);
        if (after > before && !blames_unknown(t, scratch, after - 1)) *chosen = combo;
    }
    tgc_diags_free(scratch);
    return s == TGC_ERR_NOMEM ? s : TGC_OK;
}

/* No rank is valid: the op's own error at the ranks pick_report chose,
 * and a note, at the same place, on why. */
static tgc_status report_invalid(trials *t, int combos, bool shared) {
    int chosen;
    tgc_status s = pick_report(t, combos, shared, &chosen);
    if (s != TGC_OK) return s;
    if (chosen >= 0) set_combo(t, chosen, shared);
    else
        for (int j = 0; j < t->n_unknown; j++) set_rank(t, j, 1);
    tgc_diags *d = t->c->diags;
    size_t before = tgc_diags_count(d);
    s = run_trial(t, d);
    if (s == TGC_ERR_NOMEM) return s;
    const tgc_node *node = t->c->node;
    if (s == TGC_OK) /* this combination failed before; it cannot pass now */
        return tgc_infer_fail(t->c, t->unknown[0], "internal", "inference over unknown ranks is inconsistent (a tgc bug)");
    size_t after = tgc_diags_count(d);
    tgc_srcpos at = after > before ? (tgc_srcpos){tgc_diag_line(d, after - 1), tgc_diag_column(d, after - 1)}
                                   : node->pos;
    return tgc_diag_add(d, TGC_SEV_NOTE, t->c->graph->path, at, "rank-unknown",
                        "node '%s' (%s): input %d has a rank known only at run time, and no rank from 0 to %d makes "
                        "the node valid; the error is the one at rank %d", tgc_node_label(node), node->op_name,
                        t->unknown[0], TGC_MAX_RANK, t->in[t->unknown[0]].shape.rank) == TGC_ERR_NOMEM
               ? TGC_ERR_NOMEM
               : TGC_ERR_INVALID;
}

static tgc_status run_trials(trials *t) {
    bool shared = t->n_unknown > MAX_ENUMERATED;
    int combos = 1;
    for (int j = 0; j < (shared ? 1 : t->n_unknown); j++) combos *= RANKS;
    for (int combo = 0; combo < combos; combo++) {
        set_combo(t, combo, shared);
        tgc_status s = run_trial(t, NULL);
        if (s == TGC_ERR_NOMEM) return s;
        if (s == TGC_OK) merge_trial(t);
    }
    if (t->valid == 0) return report_invalid(t, combos, shared);
    if (t->dtype_differs)
        return tgc_infer_fail(t->c, t->unknown[0], "unsupported", "input %d has a rank known only at run time, and "
                              "the dtype of an output depends on it", t->unknown[0]);
    return finish(t, shared);
}

tgc_status tgc_infer_over_ranks(tgc_infer_ctx *c) {
    const tgc_node *n = c->node;
    trials t = {.c = c};
    size_t ni = (size_t)n->n_inputs, no = (size_t)n->n_outputs;
    t.unknown = tgc_calloc(ni + 1, sizeof *t.unknown);
    t.in = tgc_calloc(ni + 1, sizeof *t.in);
    t.out = tgc_calloc(no + 1, sizeof *t.out);
    t.merged = tgc_calloc(no + 1, sizeof *t.merged);
    tgc_status s = t.unknown && t.in && t.out && t.merged && make_probe_syms(c->graph, &t.probe) ? TGC_OK
                                                                                                 : TGC_ERR_NOMEM;
    for (size_t i = 0; s == TGC_OK && i < ni; i++) {
        const tgc_tensor_info *info = tgc_infer_input(c, (int)i);
        if (info == NULL) {
            t.in[i].dtype = TGC_DTYPE_INVALID; /* omitted */
            continue;
        }
        t.in[i] = *info; /* shares the value: read only */
        if (info->kind == TGC_KIND_TENSOR && info->shape.rank == TGC_RANK_UNKNOWN) t.unknown[t.n_unknown++] = (int)i;
    }
    if (s == TGC_OK) {
        clear_infos(t.out, (int)no);
        clear_infos(t.merged, (int)no);
        s = run_trials(&t);
    }
    if (t.out != NULL) clear_infos(t.out, (int)no);
    if (t.merged != NULL) clear_infos(t.merged, (int)no);
    tgc_free(t.unknown);
    tgc_free(t.in);
    tgc_free(t.out);
    tgc_free(t.merged);
    return s;
}
