"""The onnxruntime reference: the parsed network as an ONNX model (initializers from the same
.bin files), checked by onnx.checker and shape inference against the parse's own shapes, and
an onnxruntime session of it."""
import os
import time

import numpy as np

from .data import input_batch
from .program import CheckError

ONNX_OPSET = 17
ONNX_IR_VERSION = 8


class Initializers:
    """The model's initializers, each made once: constants by name, weights from their files
    by name and shape."""

    def __init__(self, prog, data_dir):
        self.prog, self.data_dir = prog, data_dir
        self.inits, self.made = [], set()

    def init(self, name, arr):
        from onnx import numpy_helper
        if name not in self.made:
            self.made.add(name)
            self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def weight(self, name, shape):
        w = self.prog.weights[name]
        key = f"{name}__{'x'.join(map(str, shape))}"
        if key in self.made:
            return key
        arr = np.fromfile(os.path.join(self.data_dir, w.file), dtype="<f4")
        if arr.size != w.count:
            raise CheckError(f"{w.file} has {arr.size} floats, expected {w.count}")
        return self.init(key, arr.astype(np.float32).reshape(shape))


def onnx_nodes(prog, node, ini):
    """The ONNX nodes of one node of the program."""
    from onnx import helper
    op, c, out = node.op, node.consts, node.name
    a = [("input" if k == "input" else s) for k, s in node.sources]
    if op in ("convolution", "group_convolution"):
        # The release lowers both to cross-correlation whatever conv_mode says.
        f = prog.weights[a[1]].dims
        return [helper.make_node(
            "Conv", [a[0], ini.weight(a[1], f)], [out], name=out, kernel_shape=[f[2], f[3]],
            pads=[c[0], c[1], c[0], c[1]], strides=[c[2], c[3]], dilations=[1, 1],
            group=c[5] if op == "group_convolution" else 1)]
    if op == "add":
        b = [ini.weight(x, prog.weights[x].dims) if k == "weight" else x
             for (k, _), x in zip(node.sources, a)]
        return [helper.make_node("Add", b, [out], name=out)]
    if op == "mul":
        d = prog.weights[a[1]].dims
        return [
            helper.make_node("Flatten", [a[0]], [out + "_flat"], name=out + "_flat", axis=1),
            helper.make_node("MatMul", [out + "_flat", ini.weight(a[1], (d[2], d[3]))],
                             [out + "_mm"], name=out + "_mm"),
            helper.make_node("Reshape", [out + "_mm", ini.init(f"shape_{d[3]}", np.array(
                [prog.batch_size, d[3], 1, 1], dtype=np.int64))], [out], name=out)]
    if op in ("relu", "tanh"):
        return [helper.make_node(op.capitalize(), a, [out], name=out)]
    if op == "clipped_relu":
        return [helper.make_node(
            "Clip", [a[0], ini.init("clip_lo", np.array(0, np.float32)),
                     ini.init("clip_hi", np.array(6, np.float32))], [out], name=out)]
    if op == "softmax":
        return [helper.make_node("Softmax", a, [out], name=out, axis=1)]
    if op == "batchnorm":
        ch = prog.shapes[out][1]
        return [helper.make_node(
            "BatchNormalization", [a[0]] + [ini.weight(x, (ch,)) for x in a[1:]], [out],
            name=out, epsilon=float(c[0]))]
    if op in ("pool_max", "pool_mean"):
        attrs = dict(kernel_shape=[c[0], c[1]], pads=[c[2], c[3], c[2], c[3]],
                     strides=[c[4], c[5]])
        if op == "pool_mean":
            attrs["count_include_pad"] = 1
        return [helper.make_node("MaxPool" if op == "pool_max" else "AveragePool",
                                 a, [out], name=out, **attrs)]
    return []


def build_onnx(prog, data_dir):
    """The network as an ONNX model, initializers from the .bin files; checked by onnx."""
    from onnx import TensorProto, helper
    ini = Initializers(prog, data_dir)
    onodes = []
    for node in prog.nodes:
        onodes += onnx_nodes(prog, node, ini)
    B = prog.batch_size
    onodes.append(helper.make_node("Reshape", [prog.result, ini.init("shape_out", np.array(
        [B, prog.classes], dtype=np.int64))], ["output"], name="output"))
    outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, [B, prog.classes])]
    last = next(n for n in prog.nodes if n.name == prog.result)
    if last.op == "softmax" and last.sources[0][0] == "node":
        # The softmax's input too (output_stats: how saturated the softmax is).
        onodes.append(helper.make_node("Reshape", [last.sources[0][1], "shape_out"], ["logits"],
                                       name="logits"))
        outputs.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                                     [B, prog.classes]))
    graph = helper.make_graph(
        onodes, prog.name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [B, *prog.input_chw])],
        outputs, ini.inits)
    model = helper.make_model(graph, producer_name="hpvm dnn-check",
                              opset_imports=[helper.make_opsetid("", ONNX_OPSET)])
    model.ir_version = ONNX_IR_VERSION
    check_onnx(prog, model)
    return model


def check_onnx(prog, model):
    """onnx.checker, and ONNX shape inference against the parse's shapes of every node."""
    import onnx
    try:
        onnx.checker.check_model(model)
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as e:  # onnx raises several exception types
        raise CheckError(f"the ONNX model of the parsed network is not valid: {e}")
    # Our shape propagation (the parse) and ONNX's shape inference must agree on every node.
    onnx_shapes = {vi.name: tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
                   for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for node in prog.nodes:
        if onnx_shapes.get(node.name) != prog.shapes[node.name]:
            raise CheckError(f"node {node.name} ({node.op}): shape {prog.shapes[node.name]} by "
                             f"the parse, {onnx_shapes.get(node.name)} by ONNX shape inference")


class Reference:
    """An onnxruntime session of the model; run(i) -> (output of batch i, seconds)."""

    def __init__(self, prog, model, input_path, threads):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.log_severity_level = 3
        self.session = ort.InferenceSession(model.SerializeToString(), so,
                                            providers=["CPUExecutionProvider"])
        self.prog, self.input_path = prog, input_path
        self.names = [o.name for o in self.session.get_outputs()]
        self.logits = {}   # batch -> the softmax's input, when the model gives it

    def run(self, i):
        x = input_batch(self.prog, self.input_path, i)
        t0 = time.perf_counter()
        ys = self.session.run(self.names, {"input": x})
        secs = time.perf_counter() - t0
        if len(ys) > 1:
            self.logits[i] = ys[1]
        return ys[0], secs
