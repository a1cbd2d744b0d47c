"""Writes the models of raw-data-size.test into the folder given: a graph
y = Reshape(x @ w, shape) whose Constant `shape` or initializer `w` has raw
data of the wrong size (ONNX's helpers always write the right size, so the
bytes are set by hand)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def model(w_raw=None, w_dims=None, shape_raw=None):
    w = numpy_helper.from_array(np.ones((2, 3), np.float32), "w")
    if w_raw is not None:
        w.raw_data = w_raw
    if w_dims is not None:
        del w.dims[:]
        w.dims.extend(w_dims)
    shape = numpy_helper.from_array(np.array([4, 3], np.int64), "shape_value")
    if shape_raw is not None:
        shape.raw_data = shape_raw
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
        helper.make_node("Constant", [], ["shape"], name="shape_const", value=shape),
        helper.make_node("Reshape", ["xw", "shape"], ["y"], name="reshape"),
    ]
    graph = helper.make_graph(nodes, "raw_data", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2])
    ], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


onnx.save(model(), f"{out}/good.onnx")
onnx.save(model(shape_raw=b"\x04\x00\x00\x00"), f"{out}/short-constant.onnx")
onnx.save(model(w_raw=b"\x00" * 28), f"{out}/long-initializer.onnx")
onnx.save(model(w_dims=[2, -3]), f"{out}/negative-dim.onnx")
