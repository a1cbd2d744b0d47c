"""Writes the models test/e2e/augment.test refuses --augment for, into the folder argv[1]:
flat.onnx (an input of one axis a sample, (N, 64)), coarse.onnx (scores per pixel at half the
input's height and width, for mgsc --class-axis 1) and rows.onnx (a float input (N, 4, 8) with a
label per row: its output (N * 4, 5))."""
import os
import sys

import torch
import torch.nn as nn


class Rows(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        return self.fc(x).reshape(-1, 5)


torch.manual_seed(0)
models = {"flat": (nn.Linear(64, 10), (2, 64)),
          "coarse": (nn.Conv2d(1, 3, 3, stride=2, padding=1), (2, 1, 8, 8)),
          "rows": (Rows(), (2, 4, 8))}
for name, (model, shape) in models.items():
    model.train()
    torch.onnx.export(model, torch.zeros(shape), os.path.join(sys.argv[1], name + ".onnx"),
                      input_names=["x"], output_names=["y"], opset_version=15,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
