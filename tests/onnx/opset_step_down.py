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
  - any other node goes alone through ONNX's converter (a one-node model
    holding its constant inputs as initializers, typed by ONNX's shape
    inference) and is replaced by what comes back;
  - an op with no version below v, or a subgraph node that would need an
    adapter, makes the model unconvertible (RuntimeError).
Relabeling checks signatures, not the type constraints: the caller checks
the result with onnx.checker.check_model(full_check=True), whose inference
rejects a type the older version does not take. It does not check the
values an older version takes (a negative axis before opset 11): a model
relabeled so is still valid ONNX at the newer opset's meaning.
"""
import onnx, copy
from onnx import helper, defs, shape_inference, version_converter

# Ops whose older version has the same signature but means something else
# when an attribute added later is left at its default.
NOT_RELABELED = {"RoiAlign"}

# The op types the last convert_stepwise call sent through ONNX's adapters
# and those it relabeled.
ADAPTED = set()
RELABELED = set()

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
    ins, inits = [], []
    for name in node.input:
        if not name:
            continue
        if name in consts:
            inits.append(consts[name])
        elif name in types:
            ins.append(types[name])
        else:
            raise RuntimeError("no type for %s" % name)
    outs = [types.get(o) or helper.make_empty_tensor_value_info(o) for o in node.output if o]
    g = helper.make_graph([node], "one", ins, outs, inits)
    return helper.make_model(g, opset_imports=[o for o in m.opset_import], ir_version=m.ir_version)

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
        ADAPTED.add(n.op_type)
        one = node_alone(m, n, types, consts)
        for o in one.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = v
        c = version_converter.convert_version(one, v - 1)
        new_nodes.extend(c.graph.node)
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
    while v > target:
        m = step_down(m, v)
        v -= 1
    return m
