"""Which of torch.nn.functional's losses a model can compute in its graph and mgs can compile:
each loss of a linear layer's scores (8 x 10) and a target (a second graph input) exported by
PyTorch 2.x's torch.export-based exporter (opset 20, training mode) and compiled by mgsc.
Prints one line a loss: ok, the exporter's failure, or mgsc's first error. Run with a PyTorch
2.x Python (the benches' venv): python scripts/probe_losses.py [BUILD_DIR] [LOSS ...]."""

import os
import subprocess
import sys
import tempfile
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore")
B = 8


def reg():
    return torch.randn(B, 10)


def cls():
    return torch.randint(0, 10, (B,))


def pos():
    return torch.rand(B, 10) + 0.1


def sign():
    return torch.randint(0, 2, (B, 10)).float() * 2 - 1


def prob():
    return torch.softmax(torch.randn(B, 10), 1)


def multi():
    return torch.randint(0, 2, (B, 10)).float()


def pair_sign():
    return torch.randint(0, 2, (B,)).float() * 2 - 1


def label_sets():
    return torch.cat([torch.randint(0, 10, (B, 3)), -torch.ones(B, 7, dtype=torch.long)], 1)


def focal(s, t):
    p = torch.softmax(s, 1).gather(1, t[:, None])
    return (-(1 - p) ** 2 * F.log_softmax(s, 1).gather(1, t[:, None])).mean()


LOSSES = {
    "huber": (lambda s, t: F.huber_loss(s, t, delta=0.5), reg),
    "smooth_l1": (lambda s, t: F.smooth_l1_loss(s, t, beta=0.5), reg),
    "l1": (lambda s, t: F.l1_loss(s, t), reg),
    "poisson_nll": (lambda s, t: F.poisson_nll_loss(s, t), pos),
    "gaussian_nll": (lambda s, t: F.gaussian_nll_loss(s, t, torch.ones_like(s)), reg),
    "kl_div": (lambda s, t: F.kl_div(F.log_softmax(s, 1), t, reduction="batchmean"), prob),
    "bce_logits": (lambda s, t: F.binary_cross_entropy_with_logits(s, t), multi),
    "bce": (lambda s, t: F.binary_cross_entropy(torch.sigmoid(s), t), multi),
    "soft_margin": (lambda s, t: F.soft_margin_loss(s, t), sign),
    "multilabel_soft_margin": (lambda s, t: F.multilabel_soft_margin_loss(s, t), multi),
    "hinge_embedding": (lambda s, t: F.hinge_embedding_loss(s, t), sign),
    "multi_margin": (lambda s, t: F.multi_margin_loss(s, t), cls),
    "multilabel_margin": (lambda s, t: F.multilabel_margin_loss(s, t), label_sets),
    "cosine_embedding": (lambda s, t: F.cosine_embedding_loss(s[:, :5], s[:, 5:], t), pair_sign),
    "margin_ranking": (lambda s, t: F.margin_ranking_loss(s[:, 0], s[:, 1], t, margin=0.1),
                       pair_sign),
    "triplet": (lambda s, t: F.triplet_margin_loss(s[:, :4], s[:, 4:8], t),
                lambda: torch.randn(B, 4)),
    "triplet_distance": (lambda s, t: F.triplet_margin_with_distance_loss(s[:, :4], s[:, 4:8], t),
                         lambda: torch.randn(B, 4)),
    "ce_smooth": (lambda s, t: F.cross_entropy(s, t, label_smoothing=0.1), cls),
    "focal": (focal, cls),
}


class Scored(nn.Module):
    def __init__(self, loss):
        super().__init__()
        self.fc = nn.Linear(16, 10)
        self.loss = loss

    def forward(self, x, t):
        return self.loss(self.fc(x), t)


def main(argv):
    build = argv[0] if argv and os.path.isdir(argv[0]) else "build"
    only = [a for a in argv if a != build]
    mgsc = os.path.join(build, "bin", "mgsc")
    work = tempfile.mkdtemp(prefix="mgs-losses-")
    for name, (loss, target) in LOSSES.items():
        if only and name not in only:
            continue
        path = os.path.join(work, name + ".onnx")
        try:
            torch.onnx.export(Scored(loss), (torch.randn(B, 16), target()), path, dynamo=True,
                              optimize=False, external_data=False, opset_version=20,
                              input_names=["input", "t"], output_names=["loss"],
                              training=torch.onnx.TrainingMode.TRAINING,
                              do_constant_folding=False)
        except Exception as e:  # the exporter's own failure
            print(f"{name}: export failed: {str(e).splitlines()[0][:150]}", flush=True)
            continue
        r = subprocess.run([mgsc, path, "--batch-size", str(B), "-o",
                            os.path.join(work, name), "--quiet"], capture_output=True, text=True)
        first = (r.stderr.strip().splitlines() or ["(no message)"])[0]
        print(f"{name}: {'ok' if r.returncode == 0 else first[:300]}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
