"""Converting an ONNX model down one opset at a time, node by node.

ONNX 1.12's version converter (onnx.version_converter) refuses a whole model
when any of its ops lacks a downward adapter, and it lacks them for most ops
whose newer version only widened the types (Shape 15 -> 14, Cast 13 -> 12,
Max 13 -> 12, ...). This steps from opset v to v - 1 node by node instead:
  - a node whose op did not change at v stays as it is;
  - a node whose op changed at v but whose version at v - 1 has the same
    inputs and outputs (count and optionality) and the same attributes with
    the same defaults, apart from attributes added at v that the node leaves
    out, is relabeled (stays as it is; RoiAlign, whose added attribute's
    default is not the old behaviour, is never relabeled);
  - a node with a step of its own here (CUSTOM: Resize 13 -> 12 with empty
    roi/scales, Softmax/LogSoftmax/Hardmax 13 -> 12 along the last axis,
    Dropout 12 -> 11, Clip 11 -> 10, Pad 11 -> 10, Slice 10 -> 9, each
    needing its extra inputs constant) is rewritten by it, following the
    two versions' definitions in ONNX's changelog;
  - any other node goes alone through ONNX's converter (a one-node model
    whose constant inputs are Constant nodes, typed by ONNX's shape
    inference) and is replaced by what comes back;
  - an op with no version below v, or a subgraph node that would need an
    adapter, makes the model unconvertible (RuntimeError).
Relabeling checks signatures, not the type constraints: the caller checks
the result with onnx.checker.check_model(full_check=True), whose inference
rejects a type the older version does not take. It does not check the
values an older version takes: a relabeled node may keep a value only the
newer version allows (a negative axis before opset 11), which tgc reads as
the newer version does.

Example usage:
    import opset_step_down
    m9 = opset_step_down.convert_stepwise(onnx.load("model.onnx"), 9)
    onnx.checker.check_model(m9, full_check=True)
"""
import copy

import numpy as np
import onnx
from onnx import defs, helper, numpy_helper, shape_inference, version_converter

# Ops whose older version has the same signature but means something else
# when an attribute added later is left at its default.
NOT_RELABELED = {"RoiAlign"}

# The op types the last convert_stepwise call sent through ONNX's adapters
# and those it relabeled.
ADAPTED = set()
RELABELED = set()
CUSTOM_ADAPTED = set()

def schema(op, v):
    try:
        return defs.get_schema(op, v, "")
    except Exception:
        return None

def attrs_of(s):
    return {k: (a.type, a.required, a.default_value.SerializeToString()) for k, a in s.attributes.items()}

def io_of(params):
    return [(p.option,) for p in params]

def relabel_ok(node, new, old):
    """The node means the same at old's version: same inputs and outputs
    (count and optionality), same attributes with the same defaults, except
    attributes new in `new` that the node leaves out."""
    if node.op_type in NOT_RELABELED:
        return False
    if io_of(new.inputs) != io_of(old.inputs) or io_of(new.outputs) != io_of(old.outputs):
        return False
    if (new.min_input, new.max_input, new.min_output, new.max_output) != \
       (old.min_input, old.max_input, old.min_output, old.max_output):
        return False
    an, ao = attrs_of(new), attrs_of(old)
    set_ = {a.name for a in node.attribute}
    for k, d in an.items():
        if k in ao:
            if ao[k] != d:
                return False
        elif k in set_:
            return False
    return all(k in an for k in ao)

def node_alone(m, node, types, consts):
    """A model of `node` alone: its constant inputs made by Constant nodes
    (ONNX 1.12's axes adapters mishandle initializers), the others graph
    inputs typed by `types`."""
    ins, made = [], []
    for name in node.input:
        if not name or name in {n.output[0] for n in made}:
            continue
        if name in consts:
            made.append(helper.make_node("Constant", [], [name], value=consts[name]))
        elif name in types:
            ins.append(types[name])
        else:
            raise RuntimeError("no type for %s" % name)
    outs = [types.get(o) or helper.make_empty_tensor_value_info(o) for o in node.output if o]
    g = helper.make_graph(made + [node], "one", ins, outs)
    return helper.make_model(g, opset_imports=[o for o in m.opset_import], ir_version=m.ir_version)


# ---- Downward steps ONNX 1.12 lacks, each from the two versions' definitions
# in ONNX's changelog. Each takes (node, consts, types, new_inits) and returns
# the nodes replacing `node` at the lower opset, or raises.

def const_values(node, k, consts):
    """Input k's constant value as a numpy array, None when omitted."""
    if k >= len(node.input) or not node.input[k]:
        return None
    if node.input[k] not in consts:
        raise RuntimeError("%s: input %d is not a constant" % (node.op_type, k))
    return numpy_helper.to_array(consts[node.input[k]])


def attrs_of_node(node, drop=()):
    return [a for a in node.attribute if a.name not in drop]


def rank_of(name, types):
    t = types.get(name)
    if t is None or not t.type.tensor_type.HasField("shape"):
        raise RuntimeError("the rank of %s is not known" % name)
    return len(t.type.tensor_type.shape.dim)


def remake(node, op_inputs, attrs):
    n = helper.make_node(node.op_type, op_inputs, list(node.output), name=node.name)
    n.attribute.extend(attrs)
    return n


def resize_13_to_12(node, consts, types, new_inits):
    # Resize-11 takes roi and scales always (empty tensors when unused).
    ins = list(node.input) + [""] * (4 - len(node.input))
    for k, what in ((1, "roi"), (2, "scales")):
        if not ins[k]:
            name = "%s_empty_%s" % (node.output[0], what)
            new_inits.append(numpy_helper.from_array(np.zeros(0, np.float32), name))
            ins[k] = name
    while ins and not ins[-1]:
        ins.pop()
    return [remake(node, ins, attrs_of_node(node))]


def softmax_13_to_12(node, consts, types, new_inits):
    # Before 13 the input is coerced to 2-D at `axis`: the same as
    # normalizing along one axis only when that axis is the last.
    r = rank_of(node.input[0], types)
    axis = next((a.i for a in node.attribute if a.name == "axis"), -1)
    if axis % r != r - 1:
        raise RuntimeError("%s-13 along axis %d of rank %d has no 2-D coerced form" % (node.op_type, axis, r))
    return [remake(node, [node.input[0]], [helper.make_attribute("axis", r - 1)])]


def dropout_12_to_11(node, consts, types, new_inits):
    ratio = const_values(node, 1, consts)
    training = const_values(node, 2, consts)
    if training is not None and bool(training):
        raise RuntimeError("Dropout in training mode has no form before opset 12")
    attrs = attrs_of_node(node, ("seed",))
    if ratio is not None:
        attrs.append(helper.make_attribute("ratio", float(ratio)))
    return [remake(node, [node.input[0]], attrs)]


def clip_11_to_10(node, consts, types, new_inits):
    attrs = []
    for k, name in ((1, "min"), (2, "max")):
        v = const_values(node, k, consts)
        if v is not None:
            attrs.append(helper.make_attribute(name, float(v)))
    return [remake(node, [node.input[0]], attrs)]


def slice_10_to_9(node, consts, types, new_inits):
    starts, ends = const_values(node, 1, consts), const_values(node, 2, consts)
    axes, steps = const_values(node, 3, consts), const_values(node, 4, consts)
    if steps is not None and np.any(steps != 1):
        raise RuntimeError("Slice steps other than 1 have no form before opset 10")
    attrs = [helper.make_attribute("starts", [int(v) for v in starts]),
             helper.make_attribute("ends", [int(v) for v in ends])]
    if axes is not None:
        attrs.append(helper.make_attribute("axes", [int(v) for v in axes]))
    return [remake(node, [node.input[0]], attrs)]


def pad_11_to_10(node, consts, types, new_inits):
    pads, value = const_values(node, 1, consts), const_values(node, 2, consts)
    attrs = attrs_of_node(node) + [helper.make_attribute("pads", [int(v) for v in pads])]
    if value is not None:
        attrs.append(helper.make_attribute("value", float(value)))
    return [remake(node, [node.input[0]], attrs)]


CUSTOM = {("Resize", 13): resize_13_to_12, ("Softmax", 13): softmax_13_to_12,
          ("LogSoftmax", 13): softmax_13_to_12, ("Hardmax", 13): softmax_13_to_12,
          ("Dropout", 12): dropout_12_to_11, ("Clip", 11): clip_11_to_10, ("Slice", 10): slice_10_to_9,
          ("Pad", 11): pad_11_to_10}


def step_down(m, v):
    """m at opset v becomes a model at v - 1 (raises when it cannot)."""
    mi = shape_inference.infer_shapes(m)
    types = {vi.name: vi for vi in list(mi.graph.input) + list(mi.graph.value_info) + list(mi.graph.output)}
    consts = {t.name: t for t in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "Constant" and n.output:
            for a in n.attribute:
                if a.name == "value":
                    t = copy.deepcopy(a.t); t.name = n.output[0]; consts[n.output[0]] = t
    new_nodes = []
    for n in m.graph.node:
        new, old = schema(n.op_type, v), schema(n.op_type, v - 1)
        if n.domain not in ("", "ai.onnx") or new is None or new.since_version < v:
            new_nodes.append(n)
            continue
        if old is None:
            raise RuntimeError("No Previous Version of %s exists" % n.op_type)
        for a in n.attribute:  # subgraph nodes: relabel only
            if a.type == onnx.AttributeProto.GRAPH:
                check_subgraph(a.g, v)
        if relabel_ok(n, new, old):
            RELABELED.add(n.op_type)
            new_nodes.append(n)
            continue
        if (n.op_type, v) in CUSTOM:
            CUSTOM_ADAPTED.add(n.op_type)
            new_inits = []
            new_nodes.extend(CUSTOM[(n.op_type, v)](n, consts, types, new_inits))
            m.graph.initializer.extend(new_inits)
            continue
        ADAPTED.add(n.op_type)
        one = node_alone(m, n, types, consts)
        for o in one.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = v
        c = version_converter.convert_version(one, v - 1)
        for cn in c.graph.node:  # the constants stand in for values the graph has
            if not (cn.op_type == "Constant" and len(cn.output) == 1 and cn.output[0] in n.input):
                new_nodes.append(cn)
        have = {t.name for t in m.graph.initializer}
        for t in c.graph.initializer:
            if t.name not in have and t.name not in n.input:
                m.graph.initializer.append(t)
    del m.graph.node[:]
    m.graph.node.extend(new_nodes)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = v - 1
    return m


def check_subgraph(g, v):
    for n in g.node:
        new, old = schema(n.op_type, v), schema(n.op_type, v - 1)
        if n.domain not in ("", "ai.onnx") or new is None or new.since_version < v:
            continue
        if old is None or not relabel_ok(n, new, old):
            raise RuntimeError("%s inside a subgraph changes at opset %d" % (n.op_type, v))
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                check_subgraph(a.g, v)

def convert_stepwise(m, target):
    v = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")][0]
    m = copy.deepcopy(m)
    ADAPTED.clear()
    RELABELED.clear()
    CUSTOM_ADAPTED.clear()
    while v > target:
        m = step_down(m, v)
        v -= 1
    return m


# Ops whose downward adapters need their non-data inputs as constants
# (axes, split, starts/ends, pads, k, scales).
CONSTANT_INPUT_OPS = {"Squeeze", "Unsqueeze", "Split", "Slice", "Pad", "TopK", "Clip", "Upsample", "Resize",
                      "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                      "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}


def bakeable_inputs(m):
    """The fed graph inputs (indices among them) that only CONSTANT_INPUT_OPS
    read, and only as an input other than their first."""
    inits = {t.name for t in m.graph.initializer}
    fed = [vi.name for vi in m.graph.input if vi.name not in inits]
    ok = {}
    for n in m.graph.node:
        for k, name in enumerate(n.input):
            if name in fed:
                good = n.op_type in CONSTANT_INPUT_OPS and k >= 1
                ok[name] = ok.get(name, True) and good
    return [i for i, name in enumerate(fed) if ok.get(name)]


def bake_inputs(m, values):
    """A copy of m whose graph inputs named in `values` ({name: TensorProto})
    are initializers holding those values."""
    m = copy.deepcopy(m)
    keep = [vi for vi in m.graph.input if vi.name not in values]
    del m.graph.input[:]
    m.graph.input.extend(keep)
    for name, t in values.items():
        t = copy.deepcopy(t)
        t.name = name
        m.graph.initializer.append(t)
    return m
