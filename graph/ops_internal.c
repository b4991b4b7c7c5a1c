/* tgc's internal ops, inserted by the partitioner (partition/) and never
 * written by users: _Send and _Recv, the two ends of a cross-device edge
 * (TensorFlow's names). They meet in a rendezvous under the same `key`
 * ("send_device;recv_device;tensor_name", plus ";host" when the receiver
 * takes the tensor in host memory: TensorFlow's _HostRecv). They load from
 * a file only because partition dumps are tgc/1 files too.
 *
 * A _Recv has no input to infer its output from, so it carries its output's
 * dtype and shape as its declared `out`, which its inference copies.
 *
 * _Unsupported stands for a node of an op tgc lacks in the graph the ONNX
 * importer checks a refused model with (onnx_import.c): every other node
 * is inferred, so that its attribute values and dtypes are checked too,
 * while this one fails, naming the op, and the nodes that read it are
 * skipped as after any failed node. */
#include "graph/ops.h"

static const tgc_attr_def send_recv_attrs[] = {
    {"tensor_name", TGC_ATTR_STRING, true}, /* the reference as written: "node" or "node:k" ("^node": control) */
    {"send_device", TGC_ATTR_STRING, true}, /* full names: "cpu0", "gpu0" */
    {"recv_device", TGC_ATTR_STRING, true},
    {"key", TGC_ATTR_STRING, true},         /* the rendezvous key */
    {"host_memory", TGC_ATTR_INT, false},   /* 1: this end holds the tensor in host memory */
    {NULL, 0, false},
};

/* _Send: one input of any dtype, no outputs; nothing to infer. */
static tgc_status infer_send(tgc_infer_ctx *c) {
    (void)c;
    return TGC_OK;
}

/* _Recv: the output is what `out` declares (dtype and shape). */
static tgc_status infer_recv(tgc_infer_ctx *c) {
    const tgc_node *n = c->node;
    if (n->declared == NULL || n->n_declared < 1 || n->declared[0].dtype == TGC_DTYPE_INVALID)
        return tgc_infer_fail(c, -1, "missing-out",
                              "a _Recv must declare its output's dtype and shape in 'out' (partition dumps write it)");
    tgc_shape shape = n->declared[0].shape;
    if (!n->declared_has_shape[0]) shape.rank = TGC_RANK_UNKNOWN;
    return tgc_infer_set_output(c, 0, n->declared[0].dtype, &shape);
}

const tgc_op_def tgc_op__Send = {"_Send", 1, 1, 0, 0, send_recv_attrs, infer_send};
const tgc_op_def tgc_op__Recv = {"_Recv", 0, 0, 1, 1, send_recv_attrs, infer_recv};

static const tgc_attr_def unsupported_attrs[] = {
    {"op", TGC_ATTR_STRING, true}, /* the op it stands for: "Foo", "com.example.Foo" */
    {NULL, 0, false},
};

static tgc_status infer_unsupported(tgc_infer_ctx *c) {
    const tgc_attr *op = tgc_node_attr(c->node, "op");
    return tgc_infer_fail(c, -1, "unsupported-op", "op '%s' is not supported", op != NULL ? op->s : "?");
}

const tgc_op_def tgc_op__Unsupported = {"_Unsupported", 0, -1, 0, -1, unsupported_attrs, infer_unsupported};
