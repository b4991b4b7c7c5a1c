/* "gpu" kernels that run on the host: the integer shape arithmetic of a
 * graph (Shape -> Gather -> Concat -> Reshape's target) stays in host memory
 * even when the graph runs on a GPU, as TensorFlow's HostMemory kernels do,
 * so no shape value goes host -> GPU -> host. Every input and output of
 * these kernels is host memory (Shape and Size read only their input's
 * dims, which are metadata), and each runs the cpu kernel's code. */
#include "devices/kernel.h"

#define ALL_HOST 0xffffffffu
#define INTS {TGC_INT32, TGC_INT64, TGC_DTYPE_INVALID}

/* Runs the cpu kernel of the same op: the data is all in host memory. */
static tgc_status on_host(tgc_kernel_ctx *c) {
    tgc_dtype dt = c->n_inputs > 0 && c->inputs[0].dtype != TGC_DTYPE_INVALID ? c->inputs[0].dtype
                                                                             : c->outputs[0].dtype;
    const tgc_kernel_def *k = tgc_kernel_find(c->node->op_name, TGC_DEVICE_CPU, dt);
    if (k == NULL) return tgc_kernel_fail(c, "no host kernel for %s on %s", c->node->op_name, tgc_dtype_name(dt));
    return k->fn(c);
}

#define HOST_INT_OP(name) \
    {.op = name, .fn = on_host, .host_inputs = ALL_HOST, .host_outputs = ALL_HOST, \
     .forward_input = -1, .dtypes = INTS}

const tgc_kernel_def tgc_gpu_kernels_host[] = {
    /* Metadata readers: input 0 stays where it is; the output is host memory. */
    {.op = "Shape", .fn = on_host, .host_outputs = 1, .metadata_inputs = 1, .forward_input = -1,
     .dtypes = {TGC_DTYPE_INVALID}},
    {.op = "Size", .fn = on_host, .host_outputs = 1, .metadata_inputs = 1, .forward_input = -1,
     .dtypes = {TGC_DTYPE_INVALID}},
    HOST_INT_OP("Gather"), HOST_INT_OP("Concat"), HOST_INT_OP("Unsqueeze"), HOST_INT_OP("Squeeze"),
    HOST_INT_OP("Slice"), HOST_INT_OP("Reshape"), HOST_INT_OP("Cast"), HOST_INT_OP("Add"), HOST_INT_OP("Sub"),
    HOST_INT_OP("Mul"), HOST_INT_OP("Div"), HOST_INT_OP("Range"), HOST_INT_OP("Identity"),
    HOST_INT_OP("Equal"), HOST_INT_OP("Less"), HOST_INT_OP("Greater"), HOST_INT_OP("Max"), HOST_INT_OP("Min"),
    HOST_INT_OP("ReduceSum"), HOST_INT_OP("ReduceMax"), HOST_INT_OP("Neg"), HOST_INT_OP("Abs"),
    HOST_INT_OP("Expand"), HOST_INT_OP("Flatten"), HOST_INT_OP("Transpose"), HOST_INT_OP("Split"),
    {.op = NULL},
};
