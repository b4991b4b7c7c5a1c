/* Colocation groups: union-find (Tarjan 1975, "Efficiency of a good but not
 * linear set union algorithm": union by size, path halving) over the
 * colocate_with entries, as TensorFlow's ColocationGraph does. Each group
 * carries, at its root, what its members ask for (the intersection of their
 * device specs) and what they allow (the devices where every member has a
 * kernel), and which member makes each constraint, so that a merge that
 * cannot hold is explained as a chain: "it is colocated with 'w' (line 12)
 * which must run on gpu0, but Foo has no gpu kernel". Every merge is tried
 * on copies first (a dry run): one that fails is reported and leaves both
 * groups exactly as they were, so one bad entry gives one message and the
 * rest of the graph is still checked. */
#include "placer/placer_impl.h"

#include "support/alloc.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int32_t tgc_pl_find(pl_ctx *c, int32_t id) {
    int32_t *p = c->parent;
    while (p[id] != id) {
        p[id] = p[p[id]]; /* path halving */
        id = p[id];
    }
    return id;
}

/* ---- Messages ------------------------------------------------------------ */

void tgc_pl_text_add(pl_text *t, const char *fmt, ...) {
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = t->cap - t->len;
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if (t->p != NULL && (size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + (size_t)n + 1) cap *= 2;
        char *p = tgc_realloc(t->p, cap);
        if (p == NULL) {
            t->failed = true;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
}

void tgc_pl_text_free(pl_text *t) {
    tgc_free(t->p);
    memset(t, 0, sizeof *t);
}

const char *tgc_pl_spec_words(const char *spec, char *buf, size_t size) {
    tgc_device_id d;
    bool partial = false;
    if (tgc_device_id_parse(spec, strlen(spec), &d, &partial) && partial && strncmp(spec, "/task:", 6) != 0)
        snprintf(buf, size, "a %s", spec);
    else snprintf(buf, size, "%s", spec);
    return buf;
}

const char *tgc_pl_missing_kinds(const pl_ctx *c, int32_t id, tgc_devmask need, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < c->n_kinds; k++)
        if ((c->kind_mask[k] & need) != 0 && !(c->kinds[id] & (1u << k)) && used < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? " or " : "", tgc_backend_get(k)->prefix);
    return buf;
}

const char *tgc_pl_list_words(const pl_ctx *c, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < c->n_devs && used < size; i++) {
        char name[32];
        tgc_placer_device_name(c->devs[i], name, sizeof name);
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", name);
    }
    return buf;
}

/* ---- Colocation edges and chains -------------------------------------------- */

tgc_status tgc_pl_build_edges(pl_ctx *c) {
    const tgc_graph *g = c->g;
    int32_t nn = g->n_nodes;
    c->edge_first = tgc_calloc((size_t)nn + 2, sizeof *c->edge_first);
    if (c->edge_first == NULL) return TGC_ERR_NOMEM;
    int64_t edges = 0;
    for (int32_t id = 0; id < nn; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int i = 0; i < n->n_colocate; i++) {
            int32_t t = n->colocate[i].node;
            if (t < 0) continue;
            c->edge_first[id + 2]++;
            c->edge_first[t + 2]++;
            edges++;
        }
    }
    for (int32_t id = 0; id < nn; id++) c->edge_first[id + 2] += c->edge_first[id + 1];
    c->edge_to = tgc_malloc((size_t)(2 * edges + 1) * 2 * sizeof *c->edge_to); /* (to, edge id) pairs */
    c->edge_ok = tgc_calloc((size_t)edges + 1, 1);
    c->bfs_prev = tgc_malloc(((size_t)nn + 1) * sizeof *c->bfs_prev);
    c->bfs_queue = tgc_malloc(((size_t)nn + 1) * sizeof *c->bfs_queue);
    if (c->edge_to == NULL || c->edge_ok == NULL || c->bfs_prev == NULL || c->bfs_queue == NULL)
        return TGC_ERR_NOMEM;
    for (int32_t id = 0; id < nn; id++) c->bfs_prev[id] = -2;
    /* edge_first[id + 1] is the fill cursor of id; after filling,
     * edge_first[id] .. edge_first[id + 1] is id's range. */
    int32_t eid = 0;
    for (int32_t id = 0; id < nn; id++) {
        const tgc_node *n = &g->nodes[id];
        for (int i = 0; i < n->n_colocate; i++) {
            int32_t t = n->colocate[i].node;
            if (t < 0) continue;
            int32_t a = c->edge_first[id + 1]++, b = c->edge_first[t + 1]++;
            c->edge_to[2 * a] = t;
            c->edge_to[2 * a + 1] = eid;
            c->edge_to[2 * b] = id;
            c->edge_to[2 * b + 1] = eid;
            eid++;
        }
    }
    return TGC_OK;
}

/* Breadth-first search from `from` to `to` over merged edges; writes the
 * path's inner nodes (exclusive of both ends) into via[0..*n_via) (at most
 * max_via; *more set when there were more). Returns false if no path. */
static bool chain(pl_ctx *c, int32_t from, int32_t to, int32_t *via, int max_via, int *n_via, bool *more) {
    *n_via = 0;
    *more = false;
    if (from == to) return true;
    int32_t head = 0, tail = 0;
    c->bfs_queue[tail++] = from;
    c->bfs_prev[from] = -1;
    bool found = false;
    while (head < tail && !found) {
        int32_t u = c->bfs_queue[head++];
        for (int32_t e = c->edge_first[u]; e < c->edge_first[u + 1]; e++) {
            int32_t v = c->edge_to[2 * e];
            if (!c->edge_ok[c->edge_to[2 * e + 1]] || c->bfs_prev[v] != -2) continue;
            c->bfs_prev[v] = u;
            c->bfs_queue[tail++] = v;
            if (v == to) {
                found = true;
                break;
            }
        }
    }
    if (found) {
        /* Walk back from `to`; inner nodes come out in reverse. */
        int32_t count = 0;
        for (int32_t v = c->bfs_prev[to]; v != from; v = c->bfs_prev[v]) count++;
        int32_t k = 0;
        for (int32_t v = c->bfs_prev[to]; v != from; v = c->bfs_prev[v], k++) {
            int32_t pos = count - 1 - k; /* index from the `from` end */
            if (pos < max_via) via[pos] = v;
        }
        *n_via = count < max_via ? count : max_via;
        *more = count > max_via;
    }
    for (int32_t i = 0; i < tail; i++) c->bfs_prev[c->bfs_queue[i]] = -2;
    return found;
}

#define MAX_VIA 3

/* Appends "'h' (line L)" or "'h' (line L, via 'a', 'b')": how node `o`
 * reaches `h`, through `t` first when t >= 0 (the entry being merged). */
static void say_chain(pl_ctx *c, pl_text *t, int32_t o, int32_t first, int32_t h) {
    const tgc_graph *g = c->g;
    int32_t via[MAX_VIA + 1];
    int n_via = 0;
    bool more = false;
    if (first >= 0) {
        /* o -> first -> ... -> h: `first` itself is on the way unless it is h. */
        int32_t rest[MAX_VIA];
        int n_rest = 0;
        chain(c, first, h, rest, MAX_VIA, &n_rest, &more);
        if (first != h) via[n_via++] = first;
        for (int i = 0; i < n_rest && n_via < MAX_VIA; i++) via[n_via++] = rest[i];
        if (n_rest + (first != h) > MAX_VIA) more = true;
    } else {
        chain(c, o, h, via, MAX_VIA, &n_via, &more);
    }
    tgc_pl_text_add(t, "'%s' (line %d", g->nodes[h].name, g->nodes[h].pos.line);
    for (int i = 0; i < n_via; i++) tgc_pl_text_add(t, "%s'%s'", i ? ", " : ", via ", g->nodes[via[i]].name);
    if (more) tgc_pl_text_add(t, ", ...");
    tgc_pl_text_add(t, ")");
}

static const char *op_of(const tgc_node *n) {
    return n->op_name ? n->op_name : n->kind == TGC_NODE_INPUT ? "graph input" : "initializer";
}

/* Why holder `h` cannot run on the devices `need`: "Foo has no gpu kernel
 * for uint8" when h is o, else "it is [also ]colocated with 'h' (...),
 * whose op Foo has no gpu kernel for uint8". */
static void say_no_kernel(pl_ctx *c, pl_text *t, int32_t o, int32_t first, int32_t h, tgc_devmask need, bool also) {
    const tgc_node *hn = &c->g->nodes[h];
    char kinds[32];
    tgc_pl_missing_kinds(c, h, need, kinds, sizeof kinds);
    if (h != o) {
        tgc_pl_text_add(t, "it is %scolocated with ", also ? "also " : "");
        say_chain(c, t, o, first, h);
        tgc_pl_text_add(t, ", whose op ");
    }
    tgc_pl_text_add(t, "%s has no %s kernel for %s", op_of(hn), kinds, tgc_dtype_name(c->kdtype[h]));
}

/* Why the group asks for a device: "its device spec asks for gpu0", or
 * "it is colocated with 'w' (line 12) which must run on gpu0". */
static void say_spec(pl_ctx *c, pl_text *t, int32_t o, int32_t first, int32_t h, bool also) {
    char words[48];
    tgc_pl_spec_words(c->g->nodes[h].device, words, sizeof words);
    if (h == o) {
        tgc_pl_text_add(t, "its device spec asks for %s", words);
        return;
    }
    tgc_pl_text_add(t, "it is %scolocated with ", also ? "also " : "");
    say_chain(c, t, o, first, h);
    tgc_pl_text_add(t, " which must run on %s", words);
}

/* Reports the merge of o's group (root ra) with t's (root rb). */
static tgc_status report(pl_ctx *c, int32_t o, int32_t t, int32_t ra, int32_t rb) {
    const tgc_graph *g = c->g;
    const tgc_node *on = &g->nodes[o];
    tgc_devmask K = c->kern[ra] & c->kern[rb], S = c->spec0[ra] & c->spec0[rb];
    pl_text m = {0};
    char wa[48], wb[48];
    tgc_pl_text_add(&m, "cannot place '%s' (op %s) ", on->name, op_of(on));
    /* The holders on each side, and from which end the chain starts. */
    int32_t ha = c->spec_holder[ra], hb = c->spec_holder[rb];
    int32_t ka = c->kern_holder[ra], kb = c->kern_holder[rb];
    if (K == 0) {
        assert(ka >= 0 && kb >= 0); /* both sides restrict, each by a member's kernels */
        tgc_pl_text_add(&m, "on any one device: ");
        say_no_kernel(c, &m, o, -1, ka, c->all, false);
        tgc_pl_text_add(&m, ", but ");
        say_no_kernel(c, &m, o, t, kb, c->all, ka != o);
        tgc_pl_text_add(&m, "; remove the colocation");
    } else if (S == 0) {
        assert(ha >= 0 && hb >= 0); /* both sides restrict, each by a member's spec */
        tgc_pl_text_add(&m, "on both %s and %s: ", tgc_pl_spec_words(g->nodes[ha].device, wa, sizeof wa),
                        tgc_pl_spec_words(g->nodes[hb].device, wb, sizeof wb));
        say_spec(c, &m, o, -1, ha, false);
        tgc_pl_text_add(&m, ", but ");
        say_spec(c, &m, o, t, hb, ha != o);
        tgc_pl_text_add(&m, "; remove the colocation, make the device specs agree, or use --soft-placement");
    } else {
        /* One side's spec meets the other side's kernels. */
        bool spec_on_a = ha >= 0 && (c->spec0[ra] & c->kern[rb]) == 0;
        int32_t hs = spec_on_a ? ha : hb, hk = spec_on_a ? kb : ka;
        int32_t sfirst = spec_on_a ? -1 : t, kfirst = spec_on_a ? t : -1;
        tgc_devmask need = spec_on_a ? c->spec0[ra] : c->spec0[rb];
        assert(hs >= 0 && hk >= 0);
        tgc_pl_text_add(&m, "on %s: ", tgc_pl_spec_words(g->nodes[hs].device, wa, sizeof wa));
        say_spec(c, &m, o, sfirst, hs, false);
        tgc_pl_text_add(&m, ", but ");
        say_no_kernel(c, &m, o, kfirst, hk, need, hs != o);
        tgc_pl_text_add(&m, "; remove the colocation or use --soft-placement");
    }
    tgc_status s = m.failed ? TGC_ERR_NOMEM
                            : tgc_diag_add(c->diags, TGC_SEV_ERROR, g->path, on->pos, "placement-conflict", "%s", m.p);
    tgc_pl_text_free(&m);
    return s;
}

tgc_status tgc_pl_colocate_node(pl_ctx *c, int32_t o, int32_t *next_eid) {
    if (!(c->flags[o] & PL_HAS_COLOC)) return TGC_OK;
    const tgc_node *n = &c->g->nodes[o];
    tgc_status result = TGC_OK;
    for (int i = 0; i < n->n_colocate; i++) {
        int32_t t = n->colocate[i].node;
        if (t < 0) continue;
        int32_t eid = (*next_eid)++;
        int32_t ra = tgc_pl_find(c, o), rb = tgc_pl_find(c, t);
        if (ra == rb) {
            c->edge_ok[eid] = 1;
            continue;
        }
        /* The dry run: the merged group's constraints, on copies. */
        tgc_devmask K = c->kern[ra] & c->kern[rb];
        tgc_devmask S0 = c->spec0[ra] & c->spec0[rb];
        bool fails = K == 0 || (!c->opt.soft_placement && (S0 & K) == 0);
        if (fails) {
            tgc_status s = report(c, o, t, ra, rb);
            if (s == TGC_ERR_NOMEM) return s;
            result = TGC_ERR_INVALID;
            continue;
        }
        int32_t spec_holder = S0 == c->spec0[ra] && c->spec_holder[ra] >= 0 ? c->spec_holder[ra]
                              : S0 == c->spec0[rb]                          ? c->spec_holder[rb]
                                                                            : c->spec_holder[ra];
        if (S0 == c->all) spec_holder = -1;
        int32_t kern_holder = K == c->kern[ra] && c->kern_holder[ra] >= 0 ? c->kern_holder[ra] : c->kern_holder[rb];
        if (K == c->all) kern_holder = -1;
        /* Commit: the smaller group joins the larger; ties keep the lower id. */
        int32_t root = ra, child = rb;
        if (c->size[rb] > c->size[ra] || (c->size[rb] == c->size[ra] && rb < ra)) root = rb, child = ra;
        c->parent[child] = root;
        c->size[root] += c->size[child];
        c->spec1[root] = c->spec1[ra] & c->spec1[rb];
        c->spec0[root] = S0;
        c->kern[root] = K;
        c->spec_holder[root] = spec_holder;
        c->kern_holder[root] = kern_holder;
        c->all_host_int[root] = c->all_host_int[ra] && c->all_host_int[rb];
        c->edge_ok[eid] = 1;
    }
    return result;
}
