/* The cpu indexing family's table (ONNX opset 17/18): the gathers and
 * scatters (kernels_gather.c, kernels_scatter.c), the rearranging and
 * filling ops (kernels_arrange.c), the selections (kernels_select.c,
 * kernels_unique.c). Kernels that move bytes take any dtype; the others
 * list theirs, generated from elem_types.h's lists. */
#include "devices/cpu/elem_types.h"
#include "devices/cpu/kernels_indexing.h"

#define ANY_DTYPE {TGC_DTYPE_INVALID}
#define SIGNED_DTYPES {TGC_CPU_SIGNED_TYPES(TGC_CPU_DTYPE_OF) TGC_DTYPE_INVALID}
#define NUMERIC_DTYPES {TGC_CPU_NUMERIC_TYPES(TGC_CPU_DTYPE_OF) TGC_DTYPE_INVALID}
#define ALL_DTYPES {TGC_CPU_ALL_TYPES(TGC_CPU_DTYPE_OF) TGC_DTYPE_INVALID}
#define BIT(i) (1u << (i))

const tgc_kernel_def tgc_cpu_kernels_indexing[] = {
    {.op = "GatherElements", .fn = tgc_cpu_gather_elements, .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "GatherND", .fn = tgc_cpu_gather_nd, .forward_input = -1, .dtypes = ANY_DTYPE},
    /* The scatters never take data's buffer: the same tensor may also be
     * the indices or the updates (forwarding counts every use in the node),
     * which writing would change under the loop that reads them. */
    {.op = "ScatterElements", .fn = tgc_cpu_scatter_elements, .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "ScatterND", .fn = tgc_cpu_scatter_nd, .forward_input = -1, .dtypes = ANY_DTYPE},
    {.op = "Tile", .fn = tgc_cpu_tile, .host_inputs = BIT(1), .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "Trilu", .fn = tgc_cpu_trilu, .host_inputs = BIT(1), .forward_input = 0,
     .dtypes = ANY_DTYPE},
    {.op = "EyeLike", .fn = tgc_cpu_eye_like, .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "OneHot", .fn = tgc_cpu_one_hot, .host_inputs = BIT(1), .forward_input = -1,
     .dtypes = NUMERIC_DTYPES, .sizes_outputs = true},
    {.op = "CumSum", .fn = tgc_cpu_cumsum, .host_inputs = BIT(1), .forward_input = 0,
     .dtypes = SIGNED_DTYPES},
    {.op = "ReverseSequence", .fn = tgc_cpu_reverse_sequence, .forward_input = -1,
     .dtypes = ANY_DTYPE},
    {.op = "TopK", .fn = tgc_cpu_top_k, .host_inputs = BIT(1), .forward_input = -1,
     .dtypes = NUMERIC_DTYPES},
    {.op = "NonZero", .fn = tgc_cpu_nonzero, .forward_input = -1, .dtypes = ALL_DTYPES,
     .sizes_outputs = true},
    {.op = "Compress", .fn = tgc_cpu_compress, .forward_input = -1, .dtypes = ANY_DTYPE,
     .sizes_outputs = true},
    {.op = "Unique", .fn = tgc_cpu_unique, .forward_input = -1, .dtypes = ALL_DTYPES,
     .sizes_outputs = true},
    {.op = NULL},
};
