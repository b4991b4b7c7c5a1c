/* Automatic placement inside the compile driver (compile_auto.h): layers
 * too heavy for any device cut into pieces, the placement held to the
 * exact static memory plan, and candidates optimized for one kind of
 * device alone. */
#include "partition/compile_auto.h"

#include "passes/pass.h"
#include "support/alloc.h"
#include "support/checked.h"
#include "support/diag.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* How many times automatic placement cuts heavy nodes finer (split-heavy)
 * before it gives up: pieces of a quarter of the smallest device's room,
 * then an eighth, a sixteenth. */
#define SPLIT_ROUNDS 3

/* True when every error in d is automatic placement's "over-memory". */
static bool only_over_memory(const tgc_diags *d) {
    size_t errors = 0;
    for (size_t i = 0; i < tgc_diags_count(d); i++) {
        if (tgc_diag_severity(d, i) != TGC_SEV_ERROR) continue;
        if (strcmp(tgc_diag_rule(d, i), "over-memory") != 0) return false;
        errors++;
    }
    return errors > 0;
}

/* Appends every message of `from` to `to`. */
static tgc_status copy_diags(const tgc_diags *from, tgc_diags *to) {
    tgc_status s = TGC_OK;
    for (size_t i = 0; i < tgc_diags_count(from) && s != TGC_ERR_NOMEM; i++) {
        const char *file = tgc_diag_file(from, i);
        s = tgc_diag_add(to, tgc_diag_severity(from, i), file[0] ? file : NULL,
                         (tgc_srcpos){tgc_diag_line(from, i), tgc_diag_column(from, i)}, tgc_diag_rule(from, i), "%s",
                         tgc_diag_message(from, i));
    }
    return s == TGC_ERR_NOMEM ? s : TGC_OK;
}

/* The smallest room automatic placement has on a bounded device; 0: none is bounded. */
static int64_t smallest_room(const tgc_placer_auto *a, int n) {
    int64_t least = 0;
    for (int d = 0; d < n; d++)
        if (a->capacity[d] > 0 && (least == 0 || a->capacity[d] < least)) least = a->capacity[d];
    return least;
}

/* g cut for round `round` of place_splitting (room: the smallest device's):
 * its heavy nodes into pieces of room / (4 << round) (split-heavy), then
 * its convolution chains whose steps hold more than room / (2 << round)
 * into bands of rows (split-spatial). The result owns `owner` (the graph
 * whose weights g's are, or NULL) and any graph between. *out NULL and
 * *n_cut 0 when nothing was cut (owner then still the caller's). */
static tgc_status cut_for_room(const tgc_graph *g, tgc_graph *owner, int64_t room, int round, tgc_diags *diags,
                               tgc_graph **out, int32_t *n_cut) {
    tgc_graph *heavy = NULL, *bands = NULL;
    int32_t n_heavy = 0, n_bands = 0;
    *out = NULL;
    *n_cut = 0;
    tgc_status s = tgc_graph_split_heavy(g, room / (4 << round), diags, &heavy, &n_heavy);
    if (s == TGC_OK && n_heavy == 0) {
        tgc_graph_free(heavy);
        heavy = NULL;
    }
    const tgc_graph *base = heavy != NULL ? heavy : g;
    if (s == TGC_OK) s = tgc_graph_split_spatial(base, room / (2 << round), diags, &bands, &n_bands);
    if (s == TGC_OK && n_bands == 0) {
        tgc_graph_free(bands);
        bands = NULL;
    }
    if (s != TGC_OK || (heavy == NULL && bands == NULL)) {
        tgc_graph_free(bands);
        tgc_graph_free(heavy);
        return s;
    }
    tgc_graph *innermost = heavy != NULL ? heavy : bands;
    if (owner != NULL) tgc_graph_adopt_source(innermost, owner);
    if (heavy != NULL && bands != NULL) tgc_graph_adopt_source(bands, heavy);
    *out = bands != NULL ? bands : heavy;
    *n_cut = n_heavy + n_bands;
    return TGC_OK;
}

/* Automatic placement, and where no split of the graph fits the devices'
 * memory, the same on the graph cut finer each round (cut_for_room): a
 * layer that alone fills most of a device (a classifier's weight) is then
 * shared out like any other, and a step whose activations fill it (an
 * image network's stem) runs in bands. The graph placed is out->g (the
 * cut one, owned as out->optimized, when a cut placement fits); the
 * refusal reported is the last try's. */
static tgc_status place_splitting(tgc_compiled *out, const tgc_placer_options *po, tgc_diags *diags) {
    tgc_diags *trial = tgc_diags_create();
    if (trial == NULL) return TGC_ERR_NOMEM;
    tgc_status s = tgc_placer_run(out->g, out->devices, out->n_devices, po, trial, &out->placement);
    int64_t room = smallest_room(po->automatic, out->n_devices);
    /* a cut graph's node ids are its own: the charges made for out->g's do not carry over */
    tgc_placer_auto cut_auto = *po->automatic;
    cut_auto.charge = NULL;
    cut_auto.n_charged = 0;
    tgc_placer_options cut_po = *po;
    cut_po.automatic = &cut_auto;
    for (int round = 0; s == TGC_ERR_INVALID && room > 0 && round < SPLIT_ROUNDS && only_over_memory(trial);
         round++) {
        tgc_graph *cut = NULL;
        int32_t n_cut = 0;
        tgc_status cs = cut_for_room(out->g, out->optimized, room, round, diags, &cut, &n_cut);
        if (cs != TGC_OK) {
            s = cs;
            break;
        }
        if (cut == NULL) continue; /* nothing to cut this fine: finer next round */
        tgc_diags *again = tgc_diags_create();
        if (again == NULL) {
            out->optimized = cut; /* it owns the graph before it */
            out->g = cut;
            s = TGC_ERR_NOMEM;
            break;
        }
        tgc_placement_release(&out->placement);
        tgc_placement cut_placement;
        s = tgc_placer_run(cut, out->devices, out->n_devices, &cut_po, again, &cut_placement);
        out->placement = cut_placement;
        tgc_diags_free(trial);
        trial = again;
        /* the cut graph takes the place of the one placed before (it owns it), whichever placement is kept */
        out->optimized = cut;
        out->g = cut;
    }
    if (copy_diags(trial, diags) != TGC_OK) s = TGC_ERR_NOMEM;
    tgc_diags_free(trial);
    return s;
}

/* How many times automatic placement is made again where the exact memory
 * plan found its estimate short. */
#define FIT_ROUNDS 6

/* Charges the nodes of each device whose partition the exact static plan
 * finds over its room with what the placer's estimate of that partition
 * fell short by: the plan's need (the miss plus the room) less the
 * forecast's weights, kernel caches, workspace and live bytes
 * (charge[id * n_devices + d] += shortfall; the placer keeps a node's
 * charge free on d beside it, as a workspace: tgc_placer_auto .charge, so
 * the next forecast includes it and a second shortfall is what is still
 * missing). *missed when any device missed. */
static tgc_status charge_misses(const tgc_compiled *out, const tgc_compile_options *opts, const tgc_placer_auto *a,
                                int64_t *charge, bool *missed) {
    int64_t misses[TGC_PLACER_MAX_DEVICES], short_by[TGC_PLACER_MAX_DEVICES];
    *missed = false;
    tgc_status s = opts->memory_misses(out, opts, misses);
    for (int d = 0; s == TGC_OK && d < out->n_devices; d++) {
        short_by[d] = 0;
        if (misses[d] <= 0 || a->capacity[d] <= 0) continue;
        const tgc_placement_forecast *f = out->placement.forecast != NULL ? &out->placement.forecast[d] : NULL;
        int64_t estimate = f != NULL ? f->weights + f->caches + f->workspace + f->live : 0, need;
        short_by[d] = tgc_checked_add_i64(misses[d], a->capacity[d], &need) && need - estimate > misses[d]
                          ? need - estimate
                          : misses[d];
        *missed = true;
    }
    for (int32_t id = 0; s == TGC_OK && *missed && id < out->placement.n_nodes; id++) {
        int d = out->placement.device[id];
        if (d >= 0 && d < out->n_devices && short_by[d] > 0) charge[(size_t)id * out->n_devices + d] += short_by[d];
    }
    return s;
}

/* Automatic placement (with split-heavy: place_splitting) held to the
 * exact static memory plan. The placer's estimate of a segment's live
 * bytes can fall short of the arena the plan packs (MNASNet's stem: two
 * [1, 32, 112, 112] tensors are 3.2 MB live, the arena 4.0 MB). Where a
 * device's partition misses, each of its nodes is charged on that device
 * what the estimate fell short by (charge_misses) and placement runs
 * again: a segment holding any of those nodes on that device must leave
 * the room the plan found, and the other devices keep theirs. Charges add
 * up over rounds; where they leave no placement at all they are halved
 * back. At most FIT_ROUNDS rounds; where a device still misses then, the
 * graph is cut for room once (cut_for_room: a step too wide for any
 * device, which the placer's lean estimate let through; SqueezeNet 1.1's
 * stem over four devices of 3.9 MiB) and the rounds start again on it.
 * The messages kept are the last try's. */
tgc_status tgc_compile_place_auto(tgc_compiled *out, const tgc_compile_options *opts, const tgc_placer_options *po,
                                  tgc_placer_auto *a, tgc_diags *diags) {
    int64_t *charge = NULL;
    size_t n_charge = 0;
    const tgc_graph *charged = NULL; /* the graph charge's ids are of (split-heavy may cut another) */
    tgc_status s = TGC_OK;
    bool recut = false; /* cut once for room after the rounds missed */
    for (int round = 0;; round++) {
        tgc_diags *trial = tgc_diags_create();
        if (trial == NULL) {
            s = TGC_ERR_NOMEM;
            break;
        }
        a->charge = charged == out->g ? charge : NULL;
        a->n_charged = charged == out->g ? out->g->n_nodes : 0;
        s = place_splitting(out, po, trial);
        if (s == TGC_OK && opts->partition) {
            s = tgc_partition_build(out->g, &out->placement, out->devices, out->n_devices, trial, &out->parts);
            out->partitioned = s == TGC_OK;
        }
        bool missed = false, refused = s == TGC_ERR_INVALID && charge != NULL && only_over_memory(trial);
        if (s == TGC_OK && out->partitioned && opts->memory_misses != NULL && charged != out->g) {
            tgc_free(charge);
            charged = out->g;
            size_t cells;
            charge = tgc_checked_mul_size((size_t)out->g->n_nodes, (size_t)out->n_devices, &cells)
                         ? tgc_calloc(cells + 1, sizeof *charge)
                         : NULL;
            n_charge = charge != NULL ? cells : 0;
            if (charge == NULL) s = TGC_ERR_NOMEM;
        }
        if (s == TGC_OK && out->partitioned && opts->memory_misses != NULL)
            s = charge_misses(out, opts, a, charge, &missed);
        if (s == TGC_OK && missed && round == FIT_ROUNDS && !recut) {
            /* charges have not made it fit: a step too large for any device (the placer's lean estimate
             * let it through), which a cut for room may make smaller; the rounds start again on it */
            tgc_graph *cut = NULL;
            int32_t n_cut = 0;
            recut = true;
            s = cut_for_room(out->g, out->optimized, smallest_room(po->automatic, out->n_devices), 0, diags, &cut,
                             &n_cut);
            if (cut != NULL) { /* it owns the graph before it; the charges were for that one's nodes */
                out->optimized = cut;
                out->g = cut;
                round = -1;
            }
        }
        if (round == FIT_ROUNDS || !((s == TGC_OK && missed) || refused)) {
            if (copy_diags(trial, diags) != TGC_OK) s = TGC_ERR_NOMEM;
            tgc_diags_free(trial);
            break;
        }
        tgc_diags_free(trial);
        for (size_t i = 0; refused && i < n_charge; i++) charge[i] /= 2; /* too much: back off */
        if (out->partitioned) tgc_partitioning_release(&out->parts);
        out->partitioned = false;
        tgc_placement_release(&out->placement);
    }
    a->charge = NULL;
    a->n_charged = 0;
    tgc_free(charge);
    return s;
}

/* A one-kind candidate must beat the whole list's forecast by this share. */
#define ONE_KIND_GAIN 0.02

/* Where the whole list's placement leaves the other kinds idle, the
 * one-kind candidate (the graph `--devices` with that kind alone would
 * run) is taken unless forecast slower by this share: forecasts from
 * kernels timed once move by more than 2% on a busy or virtual machine (a
 * MobileNetV2-style block of three 14x14 layers on cpu0,gpu0: its
 * channels-last candidate forecast at 0.68-1.10 of the whole list's over
 * four sessions, the same graphs each time). */
#define ONE_KIND_IDLE_SLACK 0.25

/* The forecast time a step of c takes under automatic placement, by the
 * nodes' warm figures: one step's latency (inflight <= 1: its devices'
 * times added, the segments run one after another), a pipeline's stage
 * (the slowest device), or replicas' (their rates added); INFINITY
 * without a forecast. Warm, since it weighs two optimizations of one
 * model against each other: spilled (placer/cost.h), MNASNet's
 * channels-last graph on cpu0 was forecast 0.5% faster than the graph
 * optimized for cpu0 and gpu0, and ran 15% faster. */
static double forecast_seconds(const tgc_compiled *c, int inflight) {
    const tgc_placement_forecast *f = c->placement.forecast;
    if (f == NULL) return INFINITY;
    double sum = 0, most = 0, rate = 0;
    for (int d = 0; d < c->n_devices; d++) {
        double t = f[d].warm_seconds;
        sum += t;
        most = t > most ? t : most;
        if ((c->placement.replicas >> d & 1u) && t > 0) rate += 1.0 / t;
    }
    if (c->placement.replicas != 0) return rate > 0 ? 1.0 / rate : INFINITY;
    return inflight > 1 ? most : sum;
}

/* Whether c's placement puts every node on a device of `kind`. */
static bool only_kind(const tgc_compiled *c, int kind) {
    for (int32_t id = 0; id < c->placement.n_nodes; id++) {
        int d = c->placement.device[id];
        if (d >= 0 && d < c->n_devices && (int)c->devices[d].kind != kind) return false;
    }
    return true;
}

/* Moves src into dst (released first); src is left empty. */
static void compiled_move(tgc_compiled *dst, tgc_compiled *src) {
    tgc_compiled_release(dst);
    *dst = *src;
    if (dst->partitioned) dst->parts.devices = dst->devices; /* it pointed into src */
    memset(src, 0, sizeof *src);
}

/* Over devices of several kinds, the graph is optimized for what every
 * listed kind can run (tgc_graph_optimize: a fusion only where each kind
 * has the fused kernel), so a device that gets nothing still costs the
 * others their fusions (PoCL's gpu0 beside the cpu: MobileNetV3-Small's
 * channels-last convolutions unfused, 0.67 -> 1.03 ms a step with every
 * node on cpu0). So the graph is also optimized for each kind alone and
 * placed over the whole list (the fused nodes then run only where their
 * kernels are; the rest is placed as ever), and a candidate whose forecast
 * beats the whole list's by ONE_KIND_GAIN replaces it, with a note; where
 * the whole list's placement gives the other kinds nothing, one forecast
 * no slower by ONE_KIND_IDLE_SLACK does (MNASNet on cpu0,gpu0: its
 * channels-last graph forecast 1.7% faster, run 4-14% faster). Not
 * over several processes (every rank must decide alike from nominal
 * costs). */
tgc_status tgc_compile_one_kind(const tgc_graph *g, const tgc_compile_options *opts, tgc_diags *diags,
                                tgc_compiled *out) {
    if (tgc_placer_max_task(out->devices, out->n_devices) > 0) return TGC_OK;
    double best = forecast_seconds(out, opts->inflight), whole = best;
    tgc_compiled chosen = {0};
    char chosen_list[TGC_PLACER_MAX_DEVICES * 24] = "";
    int n = out->n_devices;
    for (int first = 0; first < n; first++) {
        tgc_placer_device sub[TGC_PLACER_MAX_DEVICES];
        int n_sub = 0;
        bool seen = false;
        for (int d = 0; d < first && !seen; d++) seen = out->devices[d].kind == out->devices[first].kind;
        for (int d = 0; d < n && !seen; d++)
            if (out->devices[d].kind == out->devices[first].kind) sub[n_sub++] = out->devices[d];
        if (seen || n_sub == n) continue; /* a kind tried already, or the list is one kind */
        char list[TGC_PLACER_MAX_DEVICES * 24];
        tgc_compile_list_string(sub, n_sub, list, sizeof list);
        tgc_diags *quiet = tgc_diags_create();
        if (quiet == NULL) {
            tgc_compiled_release(&chosen);
            return TGC_ERR_NOMEM;
        }
        tgc_compile_options o = *opts;
        o.whole_list = true;
        o.optimize_for = list;
        tgc_compiled cand;
        tgc_status s = tgc_compile_on(g, out->devices, n, &o, quiet, &cand);
        tgc_diags_free(quiet);
        if (s == TGC_ERR_NOMEM) {
            tgc_compiled_release(&cand);
            tgc_compiled_release(&chosen);
            return s;
        }
        double t = s == TGC_OK ? forecast_seconds(&cand, opts->inflight) : INFINITY;
        /* where the whole list's placement gives the other kinds nothing, their kernels bought nothing:
         * the candidate made for this kind alone is taken unless forecast slower by the margin */
        bool idle_others = only_kind(out, out->devices[first].kind);
        double bar = whole * (idle_others ? 1 + ONE_KIND_IDLE_SLACK : 1 - ONE_KIND_GAIN);
        if (t < bar && (t < best || best == whole)) {
            best = t;
            compiled_move(&chosen, &cand);
            snprintf(chosen_list, sizeof chosen_list, "%s", list);
        } else {
            tgc_compiled_release(&cand);
        }
    }
    if (chosen.n_devices == 0) return TGC_OK;
    tgc_diag_add(diags, TGC_SEV_NOTE, g->path, (tgc_srcpos){0, 0}, "placement-one-kind",
                 "automatic placement: optimized for %s alone, the graph is forecast at %.3f ms a step against "
                 "%.3f ms optimized for the whole list (whose other kinds lack some of its fused kernels; the "
                 "nodes' warm figures)",
                 chosen_list, best * 1e3, whole * 1e3);
    compiled_move(out, &chosen);
    return TGC_OK;
}
