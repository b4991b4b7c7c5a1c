/* Einsum equations (ONNX Einsum-12, numpy.einsum's notation), parsed once
 * for shape inference (graph/ops_linalg.c) and the cpu kernel
 * (devices/cpu/kernels_linalg.c): "ij,jk->ik" (explicit output),
 * "ij,jk" (implicit: the ellipsis dims, then the letters used once, in
 * ASCII order), "...ii->...i" (ellipsis; a letter twice in one term is a
 * diagonal). Spaces are ignored. Every axis of every term and of the
 * output gets a label id: letters 'A'..'Z', 'a'..'z' are 0..51, the
 * ellipsis dims (right-aligned, broadcast as numpy does) 52.. . Labels
 * that are not in the output are summed over.
 *
 * Example usage:
 *     tgc_einsum e;
 *     char err[128];
 *     if (!tgc_einsum_parse("bij,bjk->bik", 2, (int[]){3, 3}, &e, err, sizeof err)) fail(err);
 *     // e.labels[1][2] is k's id; e.out_rank 3
 */
#ifndef TGC_GRAPH_EINSUM_H
#define TGC_GRAPH_EINSUM_H

#include "graph/shape.h"

#include <stdbool.h>
#include <stddef.h>

#define TGC_EINSUM_MAX_INPUTS 8
#define TGC_EINSUM_LETTERS 52
#define TGC_EINSUM_MAX_LABELS (TGC_EINSUM_LETTERS + TGC_MAX_RANK)

typedef struct tgc_einsum {
    int n_inputs;
    int rank[TGC_EINSUM_MAX_INPUTS];                      /* each term's rank, as given */
    int labels[TGC_EINSUM_MAX_INPUTS][TGC_MAX_RANK];      /* label id of each axis */
    int out_rank;
    int out_labels[TGC_MAX_RANK];
    int n_ellipsis;                                       /* ellipsis dims: labels 52 .. 52 + n - 1 */
    bool used[TGC_EINSUM_MAX_LABELS];                     /* the label appears somewhere */
} tgc_einsum;

/* Parses `equation` for n_inputs (1..TGC_EINSUM_MAX_INPUTS) terms of ranks
 * ranks[0..n_inputs) into *e. False on a malformed equation (a character
 * other than letters, ',', '->', '...' and spaces; a term count other
 * than n_inputs; a term whose letters need more or fewer axes than its
 * rank; '...' twice in a term; an output letter twice, or absent from the
 * inputs; '...' in the output but in no input; more than TGC_MAX_RANK
 * output axes), with the reason in err[0..err_size). */
bool tgc_einsum_parse(const char *equation, int n_inputs, const int *ranks, tgc_einsum *e, char *err,
                      size_t err_size);

#endif
