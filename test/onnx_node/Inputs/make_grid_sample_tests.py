"""Writes ONNX node tests of GridSample (OUT_DIR/test_grid_sample_*/: model.onnx and
test_data_set_0) whose references are PyTorch's F.grid_sample, computed in float64: every mode
(bilinear, nearest, bicubic) with every padding (zeros, border, reflection), corners aligned or
not, on images (2, 3, 5, 6) and a volume (2, 2, 3, 4, 5), the grid's points spread past the
edges (several reflections). ONNX's own node tests have no bicubic with border or reflection
padding."""

import itertools
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper


def write(out, name, x, g, mode, padding, align):
    y = F.grid_sample(torch.from_numpy(x).double(), torch.from_numpy(g).double(), mode=mode,
                      padding_mode=padding, align_corners=align).float().numpy()
    node = helper.make_node("GridSample", ["X", "G"], ["Y"], mode=mode, padding_mode=padding,
                            align_corners=int(align))
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("G", TensorProto.FLOAT, g.shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, y.shape)])
    # opset 16's modes ("bilinear", "bicubic") on images; opset 20 for a volume
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16 if x.ndim == 4
                                                                          else 20)])
    model.ir_version = 8
    data = os.path.join(out, name, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))
    for i, (n, a) in enumerate([("X", x), ("G", g), ("Y", y)]):
        kind = "output_0" if n == "Y" else f"input_{i}"
        with open(os.path.join(data, kind + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


def main(out):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    g = (rng.standard_normal((2, 4, 7, 2)) * 1.3).astype(np.float32)
    for mode, padding, align in itertools.product(["bilinear", "nearest", "bicubic"],
                                                  ["zeros", "border", "reflection"], [0, 1]):
        write(out, f"test_grid_sample_{mode}_{padding}_{align}", x, g, mode, padding, bool(align))
    v = rng.standard_normal((2, 2, 3, 4, 5)).astype(np.float32)
    gv = (rng.standard_normal((2, 3, 2, 4, 3)) * 1.3).astype(np.float32)
    for mode, padding, align in itertools.product(["bilinear", "nearest"],
                                                  ["zeros", "border", "reflection"], [0, 1]):
        write(out, f"test_grid_sample_volume_{mode}_{padding}_{align}", v, gv, mode, padding,
              bool(align))


if __name__ == "__main__":
    main(sys.argv[1])
