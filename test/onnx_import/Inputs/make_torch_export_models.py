"""Writes the small models of torch-export-signature.test into the folder given (committed in
Inputs/torch-export/; rerun with an onnx of 1.16 or later, which has the graph's and nodes'
metadata_props: the Python of scripts/setup.sh --bench's venv has one):

    ~/.cache/mgs-torch2/bin/python make_torch_export_models.py Inputs/torch-export

Each is y = LayerNorm(x @ fc.weight + fc.bias) * s with the graph signature that PyTorch's
torch.export-based exporter records (pkg.torch.export.ExportedProgram.graph_signature) and no
node metadata, as scripts/export_models.py leaves such exports:
  - lifted.onnx: the optimizer's graph: ln.weight merged into fc.bias's initializer and the
    scale s lifted to the constant initializer val_3 (written as a Constant node without the
    optimizer);
  - tied.onnx: a graph without the optimizer whose signature also names a parameter tied to
    fc.weight (head.weight) and an unused one, neither an initializer;
  - constant.onnx: every parameter an initializer, and the lifted scale val_3 beside them;
  - unsigned.onnx: the same without the signature;
  - malformed.onnx: the same with a signature of another format (targets not quoted);
  - mutation.onnx: constant.onnx whose signature also has a buffer the forward updates
    (sn._u: BUFFER_MUTATION, as spectral normalization's power iteration is; a BatchNorm's
    running statistics, which mgs updates itself, are test/e2e/Inputs/torch2/cnn-dynamo's).
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def signature(params, quote="'", mutated=()):
    lines = ["", "# inputs"] + [f"p_{p.replace('.', '_')}: PARAMETER target={quote}{p}{quote}"
                                for p in params]
    lines += [f"b_{b.replace('.', '_')}: BUFFER target='{b}' persistent=True" for b in mutated]
    lines += ["x: USER_INPUT", "", "# outputs"]
    lines += [f"new_{b.replace('.', '_')}: BUFFER_MUTATION target='{b}'" for b in mutated]
    lines += ["mul: USER_OUTPUT", ""]
    return "\n".join(lines)


def model(name, params, ln_weight, scale_initializer, signed=True, quote="'", mutated=()):
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "fc.weight"),
             numpy_helper.from_array(np.ones(3, np.float32), "fc.bias"),
             numpy_helper.from_array(np.zeros(3, np.float32), "ln.bias")]
    if ln_weight == "ln.weight":
        inits.append(numpy_helper.from_array(np.ones(3, np.float32), "ln.weight"))
    scale = numpy_helper.from_array(np.array(0.5, np.float32), "val_3")
    nodes = [helper.make_node("MatMul", ["x", "fc.weight"], ["xw"], name="node_matmul"),
             helper.make_node("Add", ["xw", "fc.bias"], ["linear"], name="node_linear"),
             helper.make_node("LayerNormalization", ["linear", ln_weight, "ln.bias"], ["ln"],
                              name="node_layer_norm")]
    if scale_initializer:
        inits.append(scale)
    else:
        nodes.append(helper.make_node("Constant", [], ["val_3"], name="node_val_3", value=scale))
    nodes.append(helper.make_node("Mul", ["ln", "val_3"], ["mul"], name="node_mul"))
    graph = helper.make_graph(nodes, "main_graph",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                              [helper.make_tensor_value_info("mul", TensorProto.FLOAT, ["N", 3])],
                              inits)
    if signed:
        graph.metadata_props.add(key="pkg.torch.export.ExportedProgram.graph_signature",
                                 value=signature(params, quote, mutated))
    m = helper.make_model(graph, producer_name="pytorch", producer_version="2.15.0",
                          opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    onnx.save(m, f"{out}/{name}.onnx")


params = ["fc.weight", "fc.bias", "ln.weight", "ln.bias"]
model("lifted", params, "fc.bias", True)
model("tied", params + ["head.weight", "unused.weight"], "ln.weight", False)
model("constant", params, "ln.weight", True)
model("unsigned", params, "ln.weight", True, signed=False)
model("malformed", params, "ln.weight", True, quote="")
model("mutation", params, "ln.weight", True, mutated=["sn._u"])
