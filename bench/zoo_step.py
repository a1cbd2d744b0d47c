#!/usr/bin/python3
"""CPU training-step time of today's torchvision CNN families: mgs against
PyTorch eager on the same model, batch, data and thread count, in one run.

    bench/zoo_step.py [BUILD_DIR] [--threads T] [--iters N] [--repeats R]
                      [--models NAME,...] [--python PY1,PY2] [--against-env VAR=VALUE]

Models (torchvision, random weights, 10 classes; the sizes of a small-image
task, so that a run takes minutes on 2 cores): resnet18, resnext50_32x4d,
googlenet, squeezenet1_1, densenet (growth 16, blocks 4, 4, 4), shufflenet_v2_x1_0,
mobilenet_v2, mobilenet_v3_small (96x96), efficientnet_b0 (stochastic depth
0: Debian's torch 1.13 cannot export it in training mode), regnet_y_400mf, a
ConvNeXt (stages of 48, 96, 192 channels, 2 blocks each) and a Swin
transformer (width 48, depths 2, 2, 2, windows of 4); 64x64 images unless
said, batch 32 (16 for the two largest); and two video classifiers,
r2plus1d_18 and mc3_18 (3-D convolutions), on clips of 8 frames of 64x64,
batch 8; and two semantic segmentation models, lraspp_mobilenet_v3_large and
deeplabv3_mobilenet_v3_large (10 classes a pixel: mgsc --class-axis 1, labels
(N, 64, 64)), batch 16.

mgs: Debian's torch 1.13 exports each (training mode, opset 15, constant
folding off), mgsc compiles it for the batch, and the executable trains on N +
8 batches of synthetic images (SGD, lr 0.01, momentum 0.9) printing a progress
line every 4 steps: its step time is the median over those windows after the
first (which includes oneDNN's primitive creation). PyTorch: the same model
and batches, SGD with momentum, 3 warm-up steps then N timed steps, under each
interpreter of --python (by default Debian's torch 1.13 and the PyTorch 2.x
venv that scripts/setup.sh --bench makes, when there is one). Each of the R
repeats runs every side once, one after the other; the table gives each
side's median over the repeats and the median of the per-repeat ratios
mgs/PyTorch (goal: <= 1.0).

--against-env VAR=VALUE also runs the same executable with VAR=VALUE in its
environment right after each of mgs's runs (a runtime switch's A/B on one
machine in one run: MGSRT_CONV_DEPTHWISE=onednn puts depthwise convolutions
back on oneDNN) and prints mgs's time over that one's, the median of the
per-repeat ratios. --python '' leaves PyTorch out.
"""
import argparse
import os
import statistics
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import benchlib  # noqa: E402

EVERY = 4  # the executable's progress interval, in steps


# name -> (input shape, batch); build() makes the model.
IMG = (3, 64, 64)
ZOO = {
    "resnet18": (IMG, 32), "resnext50_32x4d": (IMG, 16), "googlenet": (IMG, 32),
    "squeezenet1_1": (IMG, 32), "densenet": (IMG, 32), "shufflenet_v2_x1_0": (IMG, 32),
    "mobilenet_v2": (IMG, 32), "mobilenet_v3_small": ((3, 96, 96), 32),
    "efficientnet_b0": (IMG, 16), "regnet_y_400mf": (IMG, 32), "convnext": (IMG, 32),
    "swin": (IMG, 32), "r2plus1d_18": ((3, 8, 64, 64), 8), "mc3_18": ((3, 8, 64, 64), 8),
    "lraspp_mobilenet_v3_large": (IMG, 16), "deeplabv3_mobilenet_v3_large": (IMG, 16),
}
# Semantic segmentation: scores per pixel (N, 10, 64, 64), a label per pixel (mgsc --class-axis 1).
SEGMENTATION = {"lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large"}


def segmentation_scores(model):
    """A torchvision segmentation model's "out" (its forward returns a dict); torch is
    imported by the child processes only."""
    import torch

    class Scores(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, x):
            return self.model(x)["out"]
    return Scores()


def build(name):
    """ZOO's model `name` (imports torchvision: in a child process)."""
    import torchvision.models as tvm
    from torchvision.models import convnext, swin_transformer as swin
    if name == "googlenet":
        return tvm.googlenet(aux_logits=False, init_weights=False, transform_input=False,
                             num_classes=10)
    if name == "densenet":
        return tvm.DenseNet(growth_rate=16, block_config=(4, 4, 4), num_init_features=32,
                            num_classes=10)
    if name == "efficientnet_b0":
        return tvm.efficientnet_b0(num_classes=10, stochastic_depth_prob=0.0)
    if name == "convnext":
        return convnext.ConvNeXt([convnext.CNBlockConfig(48, 96, 2),
                                  convnext.CNBlockConfig(96, 192, 2),
                                  convnext.CNBlockConfig(192, None, 2)], num_classes=10)
    if name == "swin":
        return swin.SwinTransformer(patch_size=[4, 4], embed_dim=48, depths=[2, 2, 2],
                                    num_heads=[2, 4, 8], window_size=[4, 4],
                                    stochastic_depth_prob=0.0, num_classes=10)
    if name in SEGMENTATION:
        extra = {"aux_loss": False} if name.startswith("deeplabv3") else {}
        return segmentation_scores(getattr(tvm.segmentation, name)(
            weights=None, weights_backbone=None, num_classes=10, **extra))
    if name in ("r2plus1d_18", "mc3_18"):
        return getattr(tvm.video, name)(num_classes=10)
    return getattr(tvm, name)(num_classes=10)


def torch_child(name, iters, x_path, y_path, batch):
    """Runs in a child process (any PyTorch): the step time of `name`."""
    import torch
    torch.manual_seed(0)
    model = build(name)
    xs, ys = torch.tensor(np.load(x_path)), torch.tensor(np.load(y_path))
    batches = [(xs[i:i + batch], ys[i:i + batch]) for i in range(0, len(ys) - batch + 1, batch)]
    ms, _ = benchlib.torch_sgd_step_ms(model, batches, iters)
    benchlib.print_torch_side(f"{ms:.3f}")


def export(name, path):
    """The torch 1.13 export of `name` (this script under /usr/bin/python3)."""
    cmd = ["/usr/bin/python3", os.path.abspath(__file__), "--export", name, path]
    benchlib.run_checked(cmd, f"exporting {name}", timeout=600)


def export_child(name, path):
    import torch
    torch.manual_seed(0)
    model = build(name)
    model.train()
    torch.onnx.export(model, (torch.zeros(2, *ZOO[name][0]),), path, opset_version=15,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=12, help="timed steps per side (default 12)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--models", default="", help="comma-separated names (default: all)")
    ap.add_argument("--python", default=benchlib.default_pythons(),
                    help="interpreters to run the PyTorch side under, comma-separated")
    ap.add_argument("--against-env", default="", metavar="VAR=VALUE",
                    help="also time mgs with VAR=VALUE in its environment, interleaved")
    ap.add_argument("--export", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--torch-child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    against = None
    if args.against_env:
        var, eq, value = args.against_env.partition("=")
        if not var or not eq:
            sys.exit(f"zoo_step.py: --against-env wants VAR=VALUE, not '{args.against_env}'")
        against = (var, value)
    if args.export:
        export_child(*args.export)
        return
    if args.torch_child:
        name, iters, x, y, batch = args.torch_child
        torch_child(name, int(iters), x, y, int(batch))
        return

    names = [n for n in args.models.split(",") if n] or ZOO
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        sys.exit(f"zoo_step.py: unknown model(s) {', '.join(unknown)}; known: {', '.join(ZOO)}")
    pythons = [p for p in args.python.split(",") if p]
    mgsc = os.path.join(args.build, "bin", "mgsc")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    print(f"Training step on the CPU, {args.threads} threads, {args.iters} timed steps, "
          f"{args.repeats} repeat(s); SGD with momentum, synthetic images", flush=True)
    for name in names:
        work = os.path.join(args.build, "bench", "zoo", name)
        os.makedirs(work, exist_ok=True)
        onnx = os.path.join(work, "model.onnx")
        if not os.path.exists(onnx):
            export(name, onnx)
        shape, batch = ZOO[name]
        exe = os.path.join(work, "train")
        axis = ["--class-axis", "1"] if name in SEGMENTATION else []
        benchlib.run_checked([mgsc, onnx, "--batch-size", str(batch), "-o", exe, "--quiet", *axis],
                             f"mgsc on {name}", timeout=1200)
        n = batch * (args.iters + 8)
        rng = np.random.default_rng(0)
        x, y = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
        np.save(x, rng.standard_normal((n, *shape)).astype(np.float32))
        np.save(y, rng.integers(0, 10, (n, *shape[1:]) if name in SEGMENTATION else n)
                .astype(np.int64))
        mgs_ms, torch_ms, ratios = [], {}, {}
        env_ms, env_ratios = [], []

        def mgs_step_ms(run_env):
            out = benchlib.run_checked(
                [exe, "--data", x, "--labels", y, "--epochs", "1", "--holdout", "0", "--lr",
                 "0.01", "--seed", "1", "--progress-every", str(EVERY)], f"mgs on {name}",
                timeout=1800, env=run_env)
            return statistics.median(benchlib.window_ms(out, batch))

        for _ in range(args.repeats):
            ms = mgs_step_ms(env)
            mgs_ms.append(ms)
            if against:
                env_ms.append(mgs_step_ms(dict(env, **{against[0]: against[1]})))
                env_ratios.append(ms / env_ms[-1])
            for python in pythons:
                (t,), version = benchlib.torch_side(
                    python, [os.path.abspath(__file__), "--torch-child", name, str(args.iters),
                             x, y, str(batch)], env=env, timeout=1800)
                torch_ms.setdefault(version, []).append(float(t))
                ratios.setdefault(version, []).append(ms / float(t))
        mgs = statistics.median(mgs_ms)
        size = "x".join(map(str, shape[1:]))
        line = f"  {name:<20} {size:>5} batch {batch:>2}  mgs {mgs:7.1f} ms"
        if against:
            line += (f"  with {against[0]}={against[1]} {statistics.median(env_ms):7.1f} ms"
                     f" (mgs/that {statistics.median(env_ratios):.3f})")
        for version in torch_ms:
            line += (f"  {version} {statistics.median(torch_ms[version]):7.1f} ms"
                     f" (mgs/that {statistics.median(ratios[version]):.3f})")
        print(line, flush=True)
    if pythons:
        print("  goal: mgs/PyTorch <= 1.0")



if __name__ == "__main__":
    main()
