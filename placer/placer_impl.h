/* The placer's working state, shared by placer.c (the rules, in order) and
 * colocation.c (the union-find of colocation groups and the words of its
 * conflicts). Private to placer/.
 *
 * Device sets are 64-bit masks over the device list (bit i: devices[i]).
 * Per node arrays are indexed by node id; the group arrays (spec0, spec1,
 * kern, holders, size, all_host_int) are meaningful at a group's root. */
#ifndef TGC_PLACER_PLACER_IMPL_H
#define TGC_PLACER_PLACER_IMPL_H

#include "placer/placer.h"

typedef uint64_t tgc_devmask;

/* Per node flags. */
enum {
    PL_HOST_INT = 1u << 0,  /* integer shape arithmetic: int32/int64 in and out, outputs of rank <= 1 */
    PL_METADATA = 1u << 1,  /* Shape, Size: reads only its input's dtype and dims */
    PL_BAD_SPEC = 1u << 2,  /* its own spec was reported as an error: not merged again */
    PL_BAD_KERN = 1u << 3,  /* no kernel anywhere, reported: not merged again */
    PL_DECIDED = 1u << 4,   /* (root) the group's device is chosen */
    PL_DEFERRED = 1u << 5,  /* (root) a Shape/Size waiting for its input's device */
    PL_SMALL_IN = 1u << 6,  /* at least one input, all of known size, at most small_host_bytes in all */
    /* Copies of what the node says, so later passes need not touch the
     * (large) node records again. */
    PL_OP = 1u << 7,         /* an op node (not a graph input or initializer) */
    PL_HAS_SPEC = 1u << 8,   /* it has a device spec */
    PL_HAS_COLOC = 1u << 9,  /* it has colocate_with entries */
    PL_READS_SOURCE = 1u << 10, /* an input is a graph input or initializer */
};

/* How a group's device was chosen (at the root). */
typedef enum pl_how {
    PL_HOW_FORCED,
    PL_HOW_HOST,
    PL_HOW_SMALL,
    PL_HOW_DEFAULT,
    PL_HOW_CONSUMER,
    PL_HOW_FEED,
    PL_HOW_AUTO
} pl_how;

typedef struct pl_ctx {
    const tgc_graph *g;
    const tgc_placer_device *devs;
    int n_devs;
    tgc_placer_options opt;
    tgc_diags *diags;
    tgc_devmask all;                            /* every listed device */
    int n_kinds;                                /* tgc_backend_count() */
    int priority[TGC_MAX_BACKENDS];             /* each kind's backend priority */
    tgc_devmask kind_mask[TGC_MAX_BACKENDS];    /* listed devices of each kind */
    int host_cpu;                               /* first listed device of the host kind, or -1 */

    /* Per node. */
    uint16_t *flags;
    uint8_t *kinds;                  /* bit k: the node has a kernel on kind k (all kinds for non-ops) */
    tgc_dtype *kdtype;               /* the dtype its kernel is chosen by */
    const tgc_kernel_def **kdef;     /* [id * KIND_COUNT + kind]: its kernel on that kind, or NULL */
    tgc_devmask *own_spec;           /* its own spec at level 0 (all: none) */

    /* Union-find (Tarjan 1975): parent pointers with path halving, union
     * by size. Group state at the root. */
    int32_t *parent;
    int32_t *size;
    tgc_devmask *spec0; /* specs as written (full device, or every listed device of the kind) */
    tgc_devmask *spec1; /* specs relaxed to their kind (soft placement's first step) */
    tgc_devmask *kern;  /* devices where every member has a kernel */
    int32_t *spec_holder; /* the member whose spec makes spec0 (-1: none) */
    int32_t *kern_holder; /* a member whose kernels make kern smaller than all (-1: none) */
    uint8_t *all_host_int; /* every op member is integer shape arithmetic */
    uint8_t *level;        /* soft placement's relaxation level of the group: 0, 1 (kind), 2 (any) */
    uint8_t *how;          /* pl_how of the group */

    /* Colocation edges in CSR form, both directions, for explaining chains:
     * edge_to[first[id] .. first[id + 1]) with edge_ok set once merged. */
    int32_t *edge_first, *edge_to;
    uint8_t *edge_ok;
    int32_t *bfs_prev; /* scratch for chain searches, -2 where unvisited */
    int32_t *bfs_queue;

    /* The result. */
    int32_t *device;
    tgc_place_reason *reason;
    tgc_placement_forecast *forecast; /* automatic placement's, per device (auto.c) */
    tgc_devmask replicas;             /* auto.c's choice of replicas (tgc_placement.replicas) */
} pl_ctx;

_Static_assert(sizeof(tgc_devmask) * 8 >= TGC_PLACER_MAX_DEVICES, "a device mask holds a bit per listed device");

/* Bit i: devices[i]. */
static inline tgc_devmask tgc_pl_bit(int i) { return (tgc_devmask)1 << i; }

/* The devices group `r` (a root) may go to at its soft-placement level:
 * its specs as written (0), relaxed to their kind (1) or dropped (2),
 * where every member has a kernel. */
static inline tgc_devmask tgc_pl_allowed(const pl_ctx *c, int32_t r) {
    switch (c->level[r]) {
    case 0: return c->spec0[r] & c->kern[r];
    case 1: return c->spec1[r] & c->kern[r];
    default: return c->kern[r];
    }
}

/* colocation.c */
int32_t tgc_pl_find(pl_ctx *c, int32_t id);

/* Builds the colocation edge lists (CSR). TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_pl_build_edges(pl_ctx *c);

/* Merges the groups of every colocate_with entry of node `id`, each after
 * a dry run: an entry whose merge cannot hold is reported (with the chain
 * of constraints) and leaves both groups as they were. Edges are numbered
 * in node order, then entry order: *next_eid is the id of the node's first
 * entry and is advanced past its entries. Called for every node in id
 * order. Returns TGC_OK, TGC_ERR_INVALID (something reported) or
 * TGC_ERR_NOMEM. */
tgc_status tgc_pl_colocate_node(pl_ctx *c, int32_t id, int32_t *next_eid);

/* auto.c: automatic placement of the op groups rule 5 decided (how
 * PL_HOW_DEFAULT, more than one device allowed), after every op group is
 * decided and before the sources follow their consumers. TGC_OK;
 * TGC_ERR_INVALID (rule "over-memory", the figures in words) when no
 * split fits the devices' memory; TGC_ERR_NOMEM. */
tgc_status tgc_pl_auto(pl_ctx *c);

/* auto.c: the forecast of the placement made (c->forecast, one per
 * device), once every node has its device, the sources and feeds too.
 * Nothing without automatic placement's cost model. TGC_OK or
 * TGC_ERR_NOMEM. */
tgc_status tgc_pl_auto_forecast(pl_ctx *c);

/* Words for messages (placer.c and colocation.c). */
/* "gpu0", "a gpu", "a cpu" for a spec as written (a partial spec: "a"
 * and the kind's prefix). */
const char *tgc_pl_spec_words(const char *spec, char *buf, size_t size);
/* The listed kinds that the node has no kernel on, as "gpu" or "cpu or gpu"
 * (their backends' prefixes). */
const char *tgc_pl_missing_kinds(const pl_ctx *c, int32_t id, tgc_devmask need, char *buf, size_t size);
/* "cpu0, gpu0" */
const char *tgc_pl_list_words(const pl_ctx *c, char *buf, size_t size);

/* A growable message buffer; on out of memory it stops growing and says so
 * through `failed`. */
typedef struct pl_text {
    char *p;
    size_t len, cap;
    bool failed;
} pl_text;

void tgc_pl_text_add(pl_text *t, const char *fmt, ...) TGC_PRINTF(2, 3);
void tgc_pl_text_free(pl_text *t);

#endif
