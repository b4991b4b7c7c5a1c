/* What nhwc-conv's files share (passes/nhwc_conv.c, passes/nhwc_shape_ops.c).
 * Private to the pass. */
#ifndef TGC_PASSES_NHWC_CONV_H
#define TGC_PASSES_NHWC_CONV_H

#include "passes/rewrite.h"

#include <stdbool.h>
#include <stdint.h>

/* The permutations between NCHW and NHWC. */
extern const int64_t TGC_TO_NHWC[4], TGC_TO_NCHW[4];

/* The 4-entry perm of Transpose node id, or NULL when it is not one (or has another rank). */
const int64_t *tgc_nhwc_perm_of(const tgc_rewrite *rw, int32_t id);

/* Adds Transpose(from, perm[0..rank)) like node `like`, keeping its own name. */
tgc_status tgc_nhwc_add_transpose(tgc_rewrite *rw, int32_t like, tgc_ref from, const int64_t *perm, int rank,
                                  int32_t *id);

/* Transpose(made, perm) after node `made` (a node the pass added), which
 * its readers then read instead of made. TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_nhwc_transpose_after(tgc_rewrite *rw, int32_t made, const int64_t *perm);

/* Transpose(perm) after node `made` (one the pass added, like node id,
 * keeping its own name): id's readers read the Transpose, which takes id's
 * name, and id goes. TGC_OK or TGC_ERR_NOMEM. */
tgc_status tgc_nhwc_replace_with_transposed(tgc_rewrite *rw, int32_t id, int32_t made, const int64_t *perm);

/* The step-2 rules for shape ops (passes/nhwc_shape_ops.c), each at node
 * id, setting *moved when a Transpose moved below it: a Slice
 * (slice_through) and a channel shuffle ending at Reshape node id
 * (shuffle_through). TGC_OK (also when nothing matched) or TGC_ERR_NOMEM. */
tgc_status tgc_nhwc_slice_through(tgc_rewrite *rw, int32_t id, bool *moved);
tgc_status tgc_nhwc_shuffle_through(tgc_rewrite *rw, int32_t id, bool *moved);

/* True when Reshape node id starts a channel shuffle of an NCHW value
 * (Reshape to 5-D, read only by a Transpose [0, 2, 1, 3, 4], read only by
 * a Reshape). */
bool tgc_nhwc_starts_shuffle(const tgc_rewrite *rw, int32_t id);

#endif
