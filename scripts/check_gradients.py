#!/usr/bin/python3
"""Checks mgs's training step against PyTorch on one batch.

    check_gradients.py MGSC MODEL WORKDIR [--steps K] [--lr LR] [--tol T] [--opset N]
                       [--vs-float32 F] [--float32-samples S] [--tensor-factor T]
                       [--tensor-vs-float32 F]
                       [--optimizer sgd|adamw] [--clip-grad-norm C] [--inject NAME:FACTOR]

Exports MODEL (lstmlm, gpt, decoder, seq2seq, llama (PyTorch 2.5+ only), hf_llama (Hugging Face's,
transformers 5, --batch 2): language models on
int64 token ids, a label per token; lstmlm_seq: lstmlm's logits as (N, T, vocab), mgsc
--class-axis -1; hfmask: the same under Hugging Face's padding mask; segnet: per-pixel scores
(N, 11, 8, 8) against labels (N, 8, 8), mgsc --class-axis 1; lraspp: torchvision's LR-ASPP
segmentation, (N, 5, 64, 64);
transformer, padattn, robertapos: classifiers of token ids; mlp, lenet, cnn, lstm, lngelu, gru, bilstm:
digits-shaped; resnet20, googlenet, mobilenetv3, shufflenetv2, vit, convnext, mnasnet,
swin, swin_v2 (PyTorch 2.x only), maxvit: CIFAR-shaped;
inception3: 75x75, mobilenetv2: 64x64, resnet50: 224x224, NumPy data) with torch,
compiles it with mgsc, writes one batch in the data format the executable
reads (digits CSV, CIFAR-10 binary or NumPy .npy: the same bytes torch sees, after the
same scaling), and runs the executable for K steps on that batch with plain
SGD. The trained parameters are read back from the ONNX model the
executable's --save writes. With K = 1 the gradient of every parameter is recovered exactly enough
as (w0 - w1) / lr (lr = 1000, so float32 rounding of w1 is negligible) and
compared with torch's autograd; with K > 1 the parameters after K steps, and
the BatchNorm running statistics, are compared with torch.optim.SGD's. The reference runs in float64: on ResNet-20
torch's own float32 run is up to 5e-3 away from it after a step (its BatchNorm
statistics are accumulated in float32), while mgs stays within ~1e-5. The
whole model's error (all tensors at once) must be within --tol or, with --vs-float32 F,
within F times PyTorch's own float32 whole-model error (the largest over --float32-samples
runs), and every tensor's within --tensor-factor times that, relative to the larger of its
norm and the norm it has at the model's scale: a bound that holds on any x86
machine (the reasons: compare()); with --tensor-vs-float32 F a tensor may instead be within F
times PyTorch float32's own error on it (chaotic runs). On GoogLeNet PyTorch's float32 gradients are 1.03e-3 from
float64 over the model and mgs's the same. --inject NAME:FACTOR scales one tensor of mgs's
before comparing (test/e2e/gradients-inject.test: the bound catches a 1% error).
With --optimizer adamw the executable runs K steps of AdamW (lr 0.01,
decoupled weight decay 0.01, torch's betas and eps) and what is compared, for
K = 1 too, is each tensor's displacement w_K - w0 against torch.optim.AdamW's
(the weights themselves would hide the update's error behind w0).
With --clip-grad-norm C, mgsc compiles the step with global gradient-norm
clipping and the reference calls torch.nn.utils.clip_grad_norm_(C) before each
update: with K = 1 and SGD, the gradient recovered is the clipped one.
--graph-loss rows|classes-second exports MODEL with its loss in the graph (forward(x, labels)
returns F.cross_entropy, with --class-weights as its weight buffer and --ignore-index): mgsc is
given no loss option and must train the graph's (the importer lifts it out). --graph-loss
nll-log returns F.nll_loss(torch.log(torch.sigmoid(scores) + 1e-3), labels) instead (the
negative log-likelihood of other than log-probabilities, not normalized over the classes: a
softmax cross-entropy of them would have another gradient), and the reference computes the same.
--onnx PATH compiles that export of MODEL instead of exporting it with this PyTorch (a model
only PyTorch 2.x exports; the reference starts from its initial weights, whose shapes must be
the build's).
--drop-path-masks (plain SGD): MODEL's torchvision StochasticDepth modules drop random
samples' branches, so the reference is computed for every choice of which samples each one
keeps, and mgs's gradient must match the closest within the bound; the next closest must be
clearly further (the mask is told apart), and the closest must keep some samples' branches and
drop others' (else the test shows nothing about the mask). With K > 1 the masks are identified
step by step: the executable is run for 1, 2, ..., K steps (a run repeats the steps of the
shorter ones: the same seed), step k's gradient is recovered from the parameters before and after
it, and the references of step k are every mask on top of steps 1 .. k-1's identified ones (K x
2^decisions references, not 2^(K x decisions)); the steps must not all draw the same masks. What
is compared in full is then step K's gradient. --inject-step chooses the step --inject scales.
--precision bf16 compiles with mgsc --precision bf16 (GEMMs, matmuls and convolutions on
bfloat16 operands, float32 accumulation) and measures against PyTorch's CPU autocast to bfloat16
(the forward under torch.autocast, the loss in float32) instead of its float32 run: --vs-float32 F
then bounds mgs's error by F times autocast's, and mgs's whole-model error must also be over 10
times PyTorch float32's (else nothing was computed in bfloat16).
--precision f16 compiles with mgsc --precision f16 (operands rounded to IEEE half) and
measures against PyTorch's CPU autocast to half where this PyTorch has one (2.x), else against
the bfloat16 one (Debian's PyTorch 1.13 has none to half): half keeps 11 significant bits to
bfloat16's 8, so there --vs-float32 F below 1 bounds mgs's error by a fraction of autocast's.
Either way it must also be over 10x PyTorch float32's. The executable
scales the loss as it does by default (dynamic, from 65536) unless --loss-scale says otherwise.
--augment SPEC runs the executable with --augment SPEC --seed 1: the reference trains step k
(epoch k) on the batch mgs_augment.py computes from the same draws (a segmentation's labels
moved alike, padded with the ignored label), so each transform is checked pixel by pixel
through the gradients. A model that draws random numbers in its graph (torch.randn_like, torch.rand:
a `draws` attribute, models_small.VAE's) gets the executable's draws in the reference, each row
at the sample the executable's shuffled step put it with (mgs_augment.py's RandomStream and
epoch_order), so the draws too are checked through the gradients.
Prints one line per parameter and exits 1 on a mismatch.
"""
import argparse
import itertools
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models  # noqa: E402
import mgs_augment  # noqa: E402
# (read_records and read_weights: also what other scripts import from here)
from gradcheck_data import (SEGMENTATION, make_batch, make_other_inputs, read_records,  # noqa: E402,F401
                            read_weights)


MGSC_ARGS = {"gpt": ["--freeze", "mask"], "ddpm": ["--freeze", "abar"], "ddpm_t": ["--freeze", "abar"], "swin_v2": ["--freeze", "*.relative_coords_table"],
             "llama": ["--freeze", "inv_freq"], "llama_sdpa": ["--freeze", "inv_freq"],
             "llama_tied": ["--freeze", "inv_freq"],
             "hf_llama": ["--freeze", "*.rotary_emb.inv_freq"],
             # its graph inputs beside the ids, given their values as its forward makes them
             "hfinputs": ["--dim", "sequence=12", "--bind-input",
                          "attention_mask=input!=0,token_type_ids=0"],
             # the same model on sentence pairs: its token types are data (--input-data)
             "hfpairs": ["--dim", "sequence=12", "--bind-input", "attention_mask=input!=0"],
             # the cross-entropy over per-pixel scores (N, 11, 8, 8) and per-token logits
             # (N, 12, 50): their class axes
             "segnet": ["--class-axis", "1"], "lstmlm_seq": ["--class-axis", "-1"],
             "lraspp": ["--class-axis", "1"]}

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mgsc")
    ap.add_argument("model")
    ap.add_argument("workdir")
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--opset", type=int, default=15,
                    help="the ONNX opset the model is exported at (lngelu: 17 exports "
                         "LayerNormalization, 15 its decomposition)")
    ap.add_argument("--vs-float32", type=float, default=0.0,
                    help="the whole model's error may also be this multiple of PyTorch's own "
                         "float32 whole-model error (for models whose float32 result is "
                         "ill-conditioned)")
    ap.add_argument("--float32-samples", type=int, default=1,
                    help="PyTorch float32 runs whose largest whole-model error is its float32 "
                         "error: the first on the batch itself, the others on the batch with "
                         "each input moved by at most one float32 rounding")
    ap.add_argument("--tensor-factor", type=float, default=None,
                    help="a tensor's error may be this multiple of the whole model's bound, "
                         "relative to the larger of its norm and the norm it would have at the "
                         "model's root-mean-square value (see compare()); 4 with "
                         "--vs-float32, else 1")
    ap.add_argument("--tensor-vs-float32", type=float, default=0.0,
                    help="a tensor may also be within this multiple of PyTorch float32's own "
                         "error on that tensor (the largest over --float32-samples): for runs "
                         "whose float32 results are chaotic, where a tensor can be far from "
                         "float64 in any float32 run (see compare())")
    ap.add_argument("--inject", default="",
                    help="NAME:FACTOR: scale mgs's value of tensor NAME by FACTOR before "
                         "comparing (to show that the bound catches a real error)")
    ap.add_argument("--dump", default="", help="write the figures per tensor to this JSON file")
    ap.add_argument("--precision", choices=["f32", "bf16", "f16"], default="f32",
                    help="mgsc --precision; bf16 and f16: measured against PyTorch's bfloat16 "
                         "autocast")
    ap.add_argument("--loss-scale", default="",
                    help="the executable's --loss-scale (dynamic, none or a number)")
    ap.add_argument("--optimizer", choices=["sgd", "adamw"], default="sgd")
    ap.add_argument("--clip-grad-norm", type=float, default=0.0,
                    help="compile with mgsc --clip-grad-norm C; the reference clips with "
                         "torch.nn.utils.clip_grad_norm_ before each update")
    ap.add_argument("--loss", default="cross-entropy",
                    choices=["cross-entropy", "mse", "l1", "smooth-l1", "bce-with-logits",
                             "graph"],
                    help="compile with mgsc --loss L; against float targets (random, of the "
                         "first output's shape; 0/1 for bce-with-logits), fed as NumPy data, "
                         "the reference uses torch.nn.functional's loss; graph: the model's "
                         "forward returns its loss (mgsc's default for a scalar output: no "
                         "--loss given, no labels)")
    ap.add_argument("--smooth-l1-beta", type=float, default=1.0)
    ap.add_argument("--label-smoothing", type=float, default=0.0,
                    help="compile with mgsc --label-smoothing E; the reference's cross-entropy "
                         "smooths its labels alike")
    ap.add_argument("--class-weights", default="",
                    help="W0,W1,...: compile with mgsc --class-weights; the reference's "
                         "cross-entropy takes them as its weight=")
    ap.add_argument("--pos-weight", default="",
                    help="W0,W1,...: with --loss bce-with-logits, compile with mgsc --pos-weight; "
                         "the reference's loss takes them as its pos_weight=")
    ap.add_argument("--graph-loss", choices=["rows", "classes-second", "nll-log"], default=None,
                    help="export MODEL with its loss in the graph: forward(x, labels) returns "
                         "F.cross_entropy of its scores (weight= --class-weights, a buffer; "
                         "ignore_index= --ignore-index), on the scores' rows with the labels "
                         "reshaped to one a row (rows), or on (N, C, L) scores, the rows of a "
                         "label per token transposed (classes-second), or F.nll_loss of "
                         "torch.log(torch.sigmoid(scores) + 1e-3) on the rows (nll-log); mgsc is "
                         "given no loss option and trains the graph's")
    ap.add_argument("--reduction", choices=["mean", "sum"], default="mean",
                    help="the loss's reduction (mgsc --reduction, or with --graph-loss the "
                         "graph's); the reference's alike")
    ap.add_argument("--ignore-index", type=int, default=-100,
                    help="the label both losses ignore (with --graph-loss: the graph's)")
    ap.add_argument("--pad-labels", action="store_true",
                    help="NumPy labels of a token model: the last 1 to 5 labels of every other "
                         "sequence become -100, the label both losses ignore (padding)")
    ap.add_argument("--onnx", default="",
                    help="compile this export of MODEL instead of exporting it here")
    ap.add_argument("--drop-path-masks", action="store_true",
                    help="MODEL has stochastic depth: compare with the reference of the "
                         "closest per-sample keep masks, identified step by step (plain SGD)")
    ap.add_argument("--inject-step", type=int, default=0,
                    help="with --drop-path-masks: the step whose gradient --inject scales "
                         "(default the last)")
    ap.add_argument("--augment", default="",
                    help="train with the executable's --augment SPEC (--seed 1): the reference "
                         "trains step k (epoch k) on the batch mgs_augment.py transforms alike")
    ap.add_argument("--input-mean", default="",
                    help="the executable's --input-mean (with --input-std): the reference "
                         "normalizes its batches alike, per channel (axis 1)")
    ap.add_argument("--input-std", default="")
    args = ap.parse_args()
    adamw = args.optimizer == "adamw"
    if args.augment and args.drop_path_masks:
        sys.exit("--augment: not with --drop-path-masks")
    if args.drop_path_masks and (adamw or args.clip_grad_norm > 0):
        sys.exit("--drop-path-masks: plain SGD only")
    if not 0 <= args.inject_step <= args.steps or (args.inject_step and not args.drop_path_masks):
        sys.exit("--inject-step: a step of the run, with --drop-path-masks")
    # The gradient of each step is recovered from the parameters around it (plain SGD).
    step_gradients = args.steps == 1 and not adamw or args.drop_path_masks
    if args.tensor_factor is None:
        args.tensor_factor = 4.0 if args.vs_float32 else 1.0
    os.makedirs(args.workdir, exist_ok=True)
    torch.set_num_threads(1)

    if args.onnx:
        onnx_path = args.onnx
    elif args.graph_loss:
        onnx_path = export_with_loss(args)
    else:
        export_models.export(args.model, args.opset, args.workdir)
        onnx_path = os.path.join(args.workdir, f"{args.model}-opset{args.opset}.onnx")
    exe = os.path.join(args.workdir, f"train_{args.model}")
    clip_args = ["--clip-grad-norm", str(args.clip_grad_norm)] if args.clip_grad_norm > 0 else []
    if args.label_smoothing:
        clip_args += ["--label-smoothing", str(args.label_smoothing)]
    if args.class_weights and not args.graph_loss:
        clip_args += ["--class-weights", args.class_weights]
    if args.ignore_index != -100 and not args.graph_loss:
        clip_args += ["--ignore-index", str(args.ignore_index)]
    if args.reduction != "mean" and not args.graph_loss:
        clip_args += ["--reduction", args.reduction]
    if args.pos_weight:
        clip_args += ["--pos-weight", args.pos_weight]
    if args.loss not in ("cross-entropy", "graph"):
        clip_args += ["--loss", args.loss]
        if args.loss == "smooth-l1":
            clip_args += ["--smooth-l1-beta", str(args.smooth_l1_beta)]
    subprocess.run([args.mgsc, onnx_path, "--batch-size", str(args.batch), "-o", exe, "--quiet",
                    *clip_args, "--precision", args.precision, *MGSC_ARGS.get(args.model, [])],
                   check=True)

    # The same initial weights: the export's (the build with the same seed). An export by
    # another PyTorch (--onnx) may have drawn them otherwise (swin_v2's do, from PyTorch 2.15):
    # the reference starts from the export's anyway, so only the shapes must agree.
    torch.manual_seed(0)
    model, _ = export_models.build(args.model)
    model.train()
    w0 = read_weights(exe + ".weights")
    names = export_names(model, w0)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            pname = names.get(pname, pname)
            same = p.shape == w0[pname].shape if args.onnx else np.array_equal(p.numpy(), w0[pname])
            assert same, f"{pname}: initial weights differ"

    path, fmt, x, labels = make_batch(args.model, args.batch, args.workdir)
    # The model's other graph inputs (the executable's --input-data NAME=FILE.npy).
    others = make_other_inputs(args.model, args.batch, args.workdir)
    others_args = [a for name, file, _ in others for a in ("--input-data", f"{name}={file}")]
    if args.pad_labels:
        if fmt != "npy" or labels.size == args.batch:
            sys.exit("--pad-labels: a token model with a label per position (NumPy labels)")
        per_sample = labels.reshape(args.batch, -1)
        for i in range(0, args.batch, 2):
            per_sample[i, per_sample.shape[1] - 1 - (i // 2) % 5:] = -100
        labels = per_sample.reshape(-1)
        saved = path.replace("-batch.npy", "-labels.npy")  # in the shape make_batch gave them
        np.save(saved, per_sample.reshape(np.load(saved).shape).astype(np.int64))
    y = torch.tensor(labels, dtype=torch.long)
    if args.loss not in ("cross-entropy", "graph"):
        # Float targets of the first output's shape, the inputs as NumPy data.
        with torch.no_grad():
            shape = model(x, **{name: t for name, _, t in others}).shape
        rng = np.random.default_rng(99)
        targets = (rng.integers(0, 2, shape) if args.loss == "bce-with-logits"
                   else rng.standard_normal(shape)).astype(np.float32)
        if fmt != "npy":
            path, fmt = os.path.join(args.workdir, f"{args.model}-batch.npy"), "npy"
            np.save(path, x.numpy())
        np.save(path.replace("-batch.npy", "-labels.npy"), targets)
        y = torch.from_numpy(targets)
    # The batch of each step (one an epoch): as the executable's --augment transforms it, the
    # labels per pixel (a segmentation's) moved alike and padded with the ignored label, float
    # targets of the image's height and width (an autoencoder's) padded with 0.
    step_xs, step_ys = [x], [y]
    if args.augment:
        def each_step(values, fill=0):
            """`values` as the executable transforms them in epoch 1, 2, ... (--seed 1)."""
            return [torch.from_numpy(mgs_augment.augment(values, args.augment, 1, k, fill=fill))
                    for k in range(args.steps)]
        step_xs = each_step(x.numpy())
        if args.loss != "cross-entropy" and y.dim() >= 3 and y.shape[-2:] == x.shape[-2:]:
            step_ys = each_step(y.numpy())
        elif args.model in SEGMENTATION:
            per_pixel = y.numpy().reshape(args.batch, *SEGMENTATION[args.model][0][1:])
            step_ys = [s.reshape(-1) for s in each_step(per_pixel, args.ignore_index)]
        else:
            step_ys = [y] * args.steps
    if args.input_mean or args.input_std:
        # torchvision's Normalize, in float32 as the executable does it.
        def per_channel(text, default):
            v = [float(t) for t in text.split(",")] if text else [default]
            shape = [1] * x.dim()
            shape[1] = len(v) if len(v) > 1 else 1
            return torch.tensor(v, dtype=torch.float32).reshape(shape)
        mean, std = per_channel(args.input_mean, 0.0), per_channel(args.input_std, 1.0)
        step_xs = [(s.float() - mean) / std for s in step_xs]

    def loss_of(logits, y=y):
        """PyTorch's loss with the executable's options (ignore_index -100, the default of
        both); the model's own with --loss graph."""
        if args.loss == "graph":
            return logits
        if args.loss == "mse":
            return F.mse_loss(logits, y.to(logits.dtype), reduction=args.reduction)
        if args.loss == "l1":
            return F.l1_loss(logits, y.to(logits.dtype), reduction=args.reduction)
        if args.loss == "smooth-l1":
            return F.smooth_l1_loss(logits, y.to(logits.dtype), beta=args.smooth_l1_beta,
                                   reduction=args.reduction)
        if args.loss == "bce-with-logits":
            pos_weight = (torch.tensor([float(w) for w in args.pos_weight.split(",")],
                                       dtype=logits.dtype) if args.pos_weight else None)
            return F.binary_cross_entropy_with_logits(logits, y.to(logits.dtype),
                                                      pos_weight=pos_weight,
                                                      reduction=args.reduction)
        weight = (torch.tensor([float(w) for w in args.class_weights.split(",")],
                               dtype=logits.dtype) if args.class_weights else None)
        target = y
        if logits.dim() > 2:  # mgsc --class-axis: 1 as PyTorch takes it, -1 as rows
            flags = MGSC_ARGS.get(args.model, [])
            if "--class-axis" not in flags:
                sys.exit(f"{args.model}: an output of rank {logits.dim()} needs mgsc --class-axis "
                         "in MGSC_ARGS")
            if flags[flags.index("--class-axis") + 1] == "1":
                target = y.reshape(logits.shape[0], *logits.shape[2:])
            else:
                logits = logits.reshape(-1, logits.shape[-1])
        if args.graph_loss == "nll-log":
            return nll_of_log(logits, target, weight, args)
        return F.cross_entropy(logits, target, weight=weight, ignore_index=args.ignore_index,
                               label_smoothing=args.label_smoothing, reduction=args.reduction)
    # One step at lr 1000 recovers its gradient to float32's rounding. Several steps of plain
    # SGD (--drop-path-masks) take lr 0.1: on sdepth, after a first step at lr 1 or 10 some
    # masks of the second step are 1.5e-7 apart (a branch that no longer moves the loss), at 0.1
    # the next closest is 7.9e-2 away and the gradients are still recovered to 8e-7.
    lr = args.lr if args.lr is not None else (
        1000.0 if args.steps == 1 and not adamw else 0.1 if args.drop_path_masks else 0.01)
    if adamw:
        opt_args = ["--optimizer", "adamw", "--weight-decay", "0.01"]
    else:
        opt_args = ["--momentum", "0" if step_gradients else "0.9",
                    "--weight-decay", "0" if step_gradients else "1e-4"]
    labels_args = (["--labels", path.replace("-batch.npy", "-labels.npy")]
                   if fmt == "npy" and args.loss != "graph" else [])

    def train(steps):
        """The parameters after `steps` steps of the executable on the batch (one an epoch)."""
        trained = os.path.join(args.workdir, f"{args.model}-trained-{steps}.onnx")
        subprocess.run([exe, "--data", path, "--data-format", fmt, *labels_args, *others_args,
                        "--epochs", str(steps), "--holdout", "0", "--lr", str(lr), *opt_args,
                        "--progress-every", "0", "--save", trained,
                        *(["--augment", args.augment, "--seed", "1"] if args.augment else []),
                        *(["--input-mean", args.input_mean] if args.input_mean else []),
                        *(["--input-std", args.input_std] if args.input_std else []),
                        *(["--loss-scale", args.loss_scale] if args.loss_scale else [])],
                       check=True, stdout=subprocess.DEVNULL)
        saved = onnx.load(trained)
        if saved.ir_version <= onnx.IR_VERSION:  # (a PyTorch 2.x export's is newer than Debian's)
            onnx.checker.check_model(saved)
        return {t.name: onnx.numpy_helper.to_array(t) for t in saved.graph.initializer}

    # The parameters after each step (--drop-path-masks: runs of 1 .. K steps), or after K.
    ws = [w0] + ([train(k) for k in range(1, args.steps + 1)] if args.drop_path_masks
                 else [train(args.steps)])
    w1 = ws[-1]

    def start(dtype, perturb=None):
        """torch's model in `dtype` from the export's initializers, and the batch in `dtype`;
        `perturb`: a seed for moving each float input by up to one float32 rounding."""
        torch.manual_seed(0)
        ref, _ = export_models.build(args.model)
        ref.train()
        # Start from exactly what mgs starts from: the exported initializers.
        # (torch.onnx.export traces a training-mode forward, which moves the
        # BatchNorm running statistics away from the fresh model's 0 and 1.) Buffers outside
        # the state dict too (the Llama's inv_freq, as another PyTorch computed it).
        with torch.no_grad():
            for n, t in list(ref.state_dict().items()) + list(ref.named_buffers()):
                if n in w0:
                    t.copy_(torch.from_numpy(w0[n].copy()))
        ref.to(dtype)
        if hasattr(ref, "draws"):  # a model drawing random numbers: the executable's draws
            ref.draws = ExecutableDraws(args.batch)

        def convert(x):
            xs = x if not x.is_floating_point() else x.to(dtype)
            if perturb is not None and x.is_floating_point():
                g = torch.Generator().manual_seed(perturb)
                u = (torch.rand(x.shape, generator=g, dtype=torch.float64) * 2 - 1) * 2.0**-24
                xs = (x.double() * (1 + u)).to(dtype)
            return xs
        extra = {name: convert(t) for name, _, t in others}
        return ref, [(convert(x), extra) if extra else convert(x) for x in step_xs]

    def call(ref, xs):
        """The model on its batch: the first input, or it and the others by name (one step: a
        model drawing random numbers takes the executable's draws of the next step)."""
        if getattr(ref, "draws", None) is not None:
            ref.draws.step()
        return ref(xs[0], **xs[1]) if isinstance(xs, tuple) else ref(xs)

    def forward(ref, xs, autocast):
        """The model's output, under PyTorch's CPU autocast (to autocast_dtype) when `autocast` (then
        as float32: the loss is float32, as mgs's)."""
        if not autocast:
            return call(ref, xs)
        with torch.autocast("cpu", dtype=autocast_dtype):
            out = call(ref, xs)
        return out.float()

    def drop_path_gradient(ref, xs, masks):
        """The gradient of one step of `ref` with the per-sample keep `masks` (in .grad, and
        returned as float64 arrays of their own)."""
        ref.zero_grad()
        set_drop_path_masks(ref, masks)
        loss_of(call(ref, xs)).backward()
        return {names.get(n, n): p.grad.double().numpy().copy()
                for n, p in ref.named_parameters()}

    def drop_path_reference(keep, dtype=torch.float64, perturb=None):
        """torch's gradient in `dtype` of step k = len(keep) + 1 as a function of its masks:
        steps 1 .. k-1 (plain SGD, their masks `keep`) are replayed once, and every call starts
        from the state they leave (parameters, buffers, the random generator)."""
        ref, (xs,) = start(dtype, perturb)
        for masks in keep:
            drop_path_gradient(ref, xs, masks)
            with torch.no_grad():
                for p in ref.parameters():
                    p -= lr * p.grad
        state = {n: t.detach().clone() for n, t in ref.state_dict().items()}
        rng = torch.get_rng_state()

        def gradient(masks):
            ref.load_state_dict(state)
            torch.set_rng_state(rng)
            return drop_path_gradient(ref, xs, masks)
        return gradient

    def reference(dtype, perturb=None, keep=None, autocast=False):
        """torch's result in `dtype`: gradients (1 step) or parameters after K steps;
        `perturb`: as start()'s; `keep` (--drop-path-masks): for each step, the per-sample keep
        masks of the StochasticDepth modules, in module order: the gradient of the last of
        those plain SGD steps."""
        if keep is not None:
            return drop_path_reference(keep[:-1], dtype, perturb)(keep[-1])
        ref, xs = start(dtype, perturb)
        def clip():
            if args.clip_grad_norm > 0:
                norms.append(float(torch.nn.utils.clip_grad_norm_(ref.parameters(),
                                                                  args.clip_grad_norm)))
        if args.steps == 1 and not adamw:
            loss_of(forward(ref, xs[0], autocast), step_ys[0]).backward()
            clip()
            return {names.get(n, n): p.grad.double().numpy() for n, p in ref.named_parameters()}
        if adamw:
            opt = torch.optim.AdamW(ref.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8,
                                    weight_decay=0.01)
        else:
            opt = torch.optim.SGD(ref.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
        for k in range(args.steps):
            opt.zero_grad()
            at = min(k, len(xs) - 1)
            loss_of(forward(ref, xs[at], autocast), step_ys[at]).backward()
            clip()
            opt.step()
        if adamw:  # the displacement from the start
            return {n: t.detach().double().numpy() - w0[n].astype(np.float64)
                    for n, t in ref.state_dict().items() if n in w0 and t.is_floating_point()}
        # (Integer buffers, BatchNorm's step count or position ids, are not
        # the step's.)
        return {n: t.detach().double().numpy() for n, t in ref.state_dict().items()
                if t.is_floating_point() and n not in names}

    norms = []
    keep = None
    if step_gradients:
        grads = [ours_gradient(a, b, lr) for a, b in zip(ws, ws[1:])]
    if args.drop_path_masks:
        if args.inject:  # (before the masks are identified: every step's gradient is checked)
            at = (args.inject_step or args.steps) - 1
            inject(grads[at], f"gradient of step {at + 1}", args.inject)
        keep = identify_drop_path_masks(grads, drop_path_reference, args.model, args.batch,
                                        args.tol)
    exact = reference(torch.float64, keep=keep)
    if args.clip_grad_norm > 0:
        # The test means something only if the clipping changed the update.
        shown = ", ".join(f"{n:.4g}" for n in norms[:args.steps])
        print(f"gradient norms before clipping (float64), step by step: {shown}")
        if norms[0] <= args.clip_grad_norm:
            print(f"MISMATCH: the first gradient norm {norms[0]:.4g} is within --clip-grad-norm "
                  f"{args.clip_grad_norm:g}: nothing was clipped")
            sys.exit(1)
    bf16 = args.precision in ("bf16", "f16")  # both measured against an autocast
    autocast_dtype = torch.bfloat16
    if args.precision == "f16" and cpu_autocasts_to_half():
        autocast_dtype = torch.float16
    if bf16 and args.drop_path_masks:
        sys.exit(f"--precision {args.precision}: not with --drop-path-masks")
    # The low-precision runs the bound is relative to: PyTorch's float32, or its autocast.
    samples32 = [reference(torch.float32, keep=keep, autocast=bf16)] + [
        reference(torch.float32, perturb=s, keep=keep, autocast=bf16)
        for s in range(1, args.float32_samples)]
    args.low_name = ((f"PyTorch {'f16' if autocast_dtype == torch.float16 else 'bf16'} autocast")
                     if bf16 else "PyTorch float32")
    float32_run = reference(torch.float32) if bf16 else None
    if adamw:
        ours = {n: w1[n].astype(np.float64) - w0[n].astype(np.float64) for n in exact}
        what = f"AdamW displacement (w{args.steps} - w0) after {args.steps} step(s)"
    elif step_gradients:
        ours = {n: v for n, v in grads[-1].items() if n in exact}
        what = "gradient" if args.steps == 1 else f"gradient of step {args.steps}"
    else:
        ours = {n: w1[n].astype(np.float64) for n in exact}
        what = f"parameters and running statistics after {args.steps} steps"
    if args.inject and not args.drop_path_masks:
        inject(ours, what, args.inject)
    finite = {n for n, t in exact.items() if np.isfinite(t).all()}
    result = compare(ours, exact, samples32, finite, args)
    if args.augment:
        # The check sees the transforms only if they move samples, and if the batch as stored
        # gives another result.
        moved = [sum(mgs_augment.draw(args.augment, 1, k, i) != (0, 0, False, False)
                     for i in range(args.batch)) for k in range(args.steps)]
        step_xs[:], step_ys[:] = [x], [y]
        away = whole_model_error(ours, reference(torch.float64), finite)
        print(f"--augment {args.augment}: samples moved in step 1..{args.steps}: {moved} of "
              f"{args.batch}; the batch as stored gives a reference {away:.2e} away from mgs's")
        if not away > 100 * result["model"]:
            result["bad"].append("the transforms do not change the result: the check shows "
                                 "nothing")

    bound = f"tolerance {args.tol:g}"
    if args.vs_float32:
        bound += f" or {args.vs_float32:g}x {args.low_name}'s whole-model error"
    if args.clip_grad_norm > 0:
        what += f", gradient norm clipped to {args.clip_grad_norm:g}"
    low = "bfloat16" if args.precision == "bf16" else "half"
    if bf16:
        what += f" (mgsc --precision {args.precision})"
        # Rounded to bfloat16 (half) at all: the error is far above float32's.
        model_f32 = whole_model_error(float32_run, exact, finite)
        result["model_float32"] = model_f32
        if not result["model"] > 10 * model_f32:
            result["bad"].append(f"the whole model's error {result['model']:.2e} is not over 10x "
                                 f"PyTorch float32's {model_f32:.2e}: no {low} arithmetic")
    per_tensor = (f" or {args.tensor_vs_float32:g}x {args.low_name}'s error on it"
                  if args.tensor_vs_float32 > 0 else "")
    summary = (f"{args.model}: {what} of {len(exact)} tensors vs PyTorch (float64): max rel err "
               f"{result['worst']:.2e} (whole model {result['model']:.2e}, {args.low_name}'s "
               f"{result['model32']:.2e}; {bound}; a tensor within {args.tensor_factor:g}x "
               f"that{per_tensor}; {args.low_name}'s own run: max rel err {result['worst32']:.2e})\n"
               f"slack: whole model at {result['model_ratio']:.3f} of its bound, worst tensor "
               f"at {result['tensor_ratio']:.3f} of its bound ({result['tensor_worst']})")
    if bf16:
        summary += (f"\n{low}: the whole model's error is {result['model'] / model_f32:.0f}x "
                    f"PyTorch float32's ({model_f32:.2e}; it must be over 10x)")
    print(summary)
    # Kept beside the run's files (a test's FileCheck swallows the output).
    with open(os.path.join(args.workdir, "check_gradients.log"), "a") as f:
        f.write(summary + "\n")
    if args.dump:
        with open(args.dump, "w") as f:
            json.dump(result, f, indent=1)
    if result["bad"]:
        print("MISMATCH: " + ", ".join(result["bad"]))
        sys.exit(1)


class ExecutableDraws:
    """A model's `draws` (models_small.VAE's, DiffusionLoss's): the training executable's random
    draws (--seed 1) in the order its steps make them (mgs_augment.RandomStream), one step an
    epoch, each draw's row r for the r-th sample the shuffled step takes: sample
    epoch_order[r] of the batch. step() moves on to the next step's order."""

    def __init__(self, batch):
        self.stream, self.batch, self.order = mgs_augment.RandomStream(1), batch, None
        self.epoch = -1

    def step(self):
        self.epoch += 1
        self.order = mgs_augment.epoch_order(self.batch, 1, self.epoch)

    def _by_sample(self, rows):
        ordered = np.empty_like(rows)
        ordered[self.order] = rows
        return torch.from_numpy(ordered)

    def normal(self, shape):
        return self._by_sample(self.stream.normal(shape))

    def uniform(self, shape, low=0.0, high=1.0):
        return self._by_sample(self.stream.uniform(shape, low, high))


def cpu_autocasts_to_half():
    """Whether this PyTorch's CPU autocast computes a matmul in float16 (2.x; 1.13 warns that
    it supports bfloat16 alone and leaves the matmul in float32)."""
    import warnings
    a = torch.ones(2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with torch.autocast("cpu", dtype=torch.float16):
                return (a @ a).dtype == torch.float16
        except (RuntimeError, TypeError):
            return False


def nll_of_log(scores, y, weight, args):
    """--graph-loss nll-log's loss: the negative log-likelihood of values that are not a
    softmax's log-probabilities (log-sigmoids, an epsilon added before the log, as models write
    it; not normalized over the classes, so a softmax cross-entropy of them differs)."""
    return F.nll_loss(torch.log(torch.sigmoid(scores) + 1e-3), y, weight=weight,
                      ignore_index=args.ignore_index, reduction=args.reduction)


def export_with_loss(args):
    """Exports MODEL as forward(input, labels) -> its cross-entropy (--graph-loss); returns
    the path. The parameters keep their names (the loss is added to the model's own forward)."""
    torch.manual_seed(0)
    model, example = export_models.build(args.model)
    model.train()
    if args.class_weights:
        model.register_buffer("class_weight",
                              torch.tensor([float(w) for w in args.class_weights.split(",")]))
    forward = model.forward
    with torch.no_grad():
        rows, classes = forward(example).shape
    labels = torch.randint(0, classes, (example.shape[0], rows // example.shape[0]))
    if labels.shape[1] == 1:
        labels = labels.reshape(-1)

    def with_loss(x, y):
        scores = forward(x)
        if args.graph_loss == "classes-second":
            scores = scores.reshape(y.shape[0], -1, scores.shape[-1]).transpose(1, 2)
        else:
            y = y.reshape(-1)
        if args.graph_loss == "nll-log":
            return nll_of_log(scores, y, getattr(model, "class_weight", None), args)
        return F.cross_entropy(scores, y, weight=getattr(model, "class_weight", None),
                               ignore_index=args.ignore_index, reduction=args.reduction)
    model.forward = with_loss
    path = os.path.join(args.workdir, f"{args.model}-loss-{args.graph_loss}.onnx")
    torch.onnx.export(model, (example, labels), path, opset_version=args.opset,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["input", "labels"], output_names=["loss"],
                      **export_models.exporter_args(args.model))
    return path


def export_names(model, w0):
    """{PyTorch parameter name: its initializer's name} where they differ: a parameter shared
    by two modules (the Llama's LM head tied to its embedding) is named once by PyTorch (the
    first module's) and once by the export, which may choose the other."""
    state = model.state_dict(keep_vars=True)
    names = {}
    for pname, p in model.named_parameters():
        if pname not in w0:
            names.update({pname: n for n, t in state.items() if t is p and n in w0})
    return names


def inject(ours, what, spec):
    """A deliberate error (the tests' proof that the bound catches one): mgs's value of one
    tensor, as compared, scaled (`spec`: NAME:FACTOR)."""
    name, factor = spec.rsplit(":", 1)
    if name not in ours:
        sys.exit(f"--inject: no tensor {name!r}")
    ours[name] = ours[name] * float(factor)
    print(f"injected: {what} of {name} scaled by {factor}")


def ours_gradient(w0, w1, lr):
    """mgs's gradient after one SGD step at lr without momentum or weight decay."""
    return {n: (w0[n].astype(np.float64) - w1[n]) / lr for n in w1 if n in w0}


def drop_path_modules(model):
    from torchvision.ops import StochasticDepth
    return [m for m in model.modules() if isinstance(m, StochasticDepth)]


def set_drop_path_masks(model, keep):
    """Each StochasticDepth module of `model` keeps the samples its row of `keep` (0/1 per
    sample) says and scales them by 1 / (1 - p), as torchvision's does with its random draw."""
    mods = drop_path_modules(model)
    assert len(mods) == len(keep), f"{len(mods)} StochasticDepth modules, {len(keep)} masks"
    for mod, row in zip(mods, keep):
        def forward(x, mod=mod, row=row):
            noise = torch.tensor(row, dtype=x.dtype).view([x.shape[0]] + [1] * (x.dim() - 1))
            return x * (noise / (1.0 - mod.p))
        mod.forward = forward


def identify_drop_path_masks(grads, candidates, model_name, batch, tol):
    """The per-sample keep masks of each step whose float64 reference gradient is closest to
    mgs's gradient of that step (`grads`, step by step; step k's references: every mask on top of
    the masks identified for steps 1 .. k-1: `candidates(keep)` is the function of step k's masks
    giving its reference gradient after the steps of the masks `keep`). Exits 1 unless each
    step's closest is within `tol`, told apart from its next closest, and keeps some samples and
    drops others, and unless the steps drew different masks."""
    torch.manual_seed(0)
    model, _ = export_models.build(model_name)
    count = len(drop_path_modules(model))
    if count == 0 or count * batch > 16:
        sys.exit(f"--drop-path-masks: {count} StochasticDepth modules x batch {batch}: "
                 "1 to 16 keep decisions are tried exhaustively")
    keep = []
    for step, ours in enumerate(grads, 1):
        scored = []
        gradient = candidates(keep)
        for bits in itertools.product((0, 1), repeat=count * batch):
            masks = [bits[i * batch:(i + 1) * batch] for i in range(count)]
            ref = gradient(masks)
            names = [n for n in ref if n in ours]
            diff = np.sqrt(sum(np.sum((ours[n] - ref[n]) ** 2) for n in names))
            norm = np.sqrt(sum(np.sum(ref[n] ** 2) for n in names))
            scored.append((diff / max(norm, 1e-300), masks))
        scored.sort(key=lambda t: t[0])
        (best, masks), (second, _) = scored[0], scored[1]
        flat = [b for row in masks for b in row]
        print(f"drop path, step {step}: closest keep masks "
              f"{[''.join(map(str, row)) for row in masks]} (relative distance {best:.2e}; "
              f"next closest {second:.2e})")
        if not best <= tol:
            print(f"MISMATCH: step {step}'s gradient is {best:.2e} from the closest mask's "
                  f"(tolerance {tol:g})")
            sys.exit(1)
        if not second > 100 * best:
            print(f"MISMATCH: step {step}'s closest keep mask is not told apart from the next "
                  "closest")
            sys.exit(1)
        if all(flat) or not any(flat):
            print(f"MISMATCH: step {step} kept every branch or dropped every one: it shows "
                  "nothing about the per-sample mask")
            sys.exit(1)
        keep.append(masks)
    # The executable shuffles the batch each epoch, so a generator that repeated its draws would
    # give each step the same samples' masks in another order: the same multiset of per-sample
    # (module 1, module 2, ...) decisions.
    drawn = [sorted(zip(*masks)) for masks in keep]
    if len(keep) > 1 and all(d == drawn[0] for d in drawn):
        print("MISMATCH: every step drew the same masks (up to the order of the samples)")
        sys.exit(1)
    return keep


def whole_model_error(ours, exact, finite):
    """||ours - exact|| / ||exact|| over every finite tensor of `exact` at once."""
    names = [n for n in exact if n in finite]
    diff = np.sqrt(sum(np.sum((np.asarray(ours[n], np.float64) - exact[n]) ** 2) for n in names))
    norm = np.sqrt(sum(np.sum(np.asarray(exact[n], np.float64) ** 2) for n in names))
    return float(diff / norm)


def compare(ours, exact, samples32, finite, args):
    """Checks mgs's tensors `ours` against the float64 reference `exact` (`samples32`: PyTorch
    float32 runs' tensors). Returns the figures, with the names of the tensors that fail.

    Why the bound holds on any x86 machine of this kind. A float32 result is off float64 by
    roundings whose sizes follow the summation order of the CPU's kernels (oneDNN's and the
    BLAS's blocking differ by ISA and library). On a tensor whose gradient is a sum that nearly
    cancels (a BatchNorm bias behind another BatchNorm, an Inception branch's 1x7 convolution)
    the error relative to that tensor's own norm is ill-conditioned: the rounding of large terms
    over a small sum, which moves by 10x between kernels, so "F times PyTorch float32's error on
    this tensor" flips with the CPU (it did, on inception3 with OpenBLAS's Haswell kernel).
    What is bounded instead:
    - the whole model's error E = ||mgs - float64|| / ||float64|| over all tensors at once: a
      sum of squares over millions of roundings, dominated by the large well-conditioned
      tensors, which no kernel choice moves by much. E <= R = max(--tol, --vs-float32 x
      PyTorch float32's E) (without --vs-float32 R = --tol: no float32 figure is used at all);
    - each tensor's error in absolute terms: ||mgs_t - float64_t|| <= T x R x max(||float64_t||,
      scale x sqrt(n_t)), T = --tensor-factor, scale = ||float64|| / sqrt(N) the model's
      root-mean-square value (N values in all, n_t in the tensor), so scale x sqrt(n_t) is the
      norm a tensor of its size has at the model's scale. A rounding error is relative to the
      terms summed, not to how far they cancel: a tensor below the model's scale (one that
      cancels to 0 in exact arithmetic, a BatchNorm bias that starts at 0) is allowed the error
      the model's scale gives, any other is held to T x R of itself. Both
      come from the float64 reference and R, not from a float32 tensor's luck; T allows for
      errors that gather on some tensors (on GoogLeNet mgs's and PyTorch float32's errors are
      the same per tensor, up to 2x the model's).
    - with --tensor-vs-float32 F, a tensor may instead be within F x PyTorch float32's own error
      on it (the largest over the samples). Only for chaotic runs (several steps of an
      ill-conditioned model), where a float32 run can be half a tensor's norm away on one
      tensor whichever kernels compute it: there "no further than float32 arithmetic gets"
      is what can be asked. It only adds a way to pass, so a tensor that float32 computes
      well is still held to the bound above.
    A tensor that holds infinities (a mask) must be equal; NaN anywhere fails."""
    names = [n for n in exact if n in finite]
    bad = [n for n in exact if n not in finite and not np.array_equal(ours[n], exact[n])]

    def flat(d):
        return np.concatenate([np.asarray(d[n], np.float64).ravel() for n in names])

    def finite_or_inf(v):
        return float(v) if np.isfinite(v) else float("inf")

    ref_all = flat(exact)
    ref_norm = float(np.linalg.norm(ref_all))
    scale = ref_norm / np.sqrt(ref_all.size)
    model = finite_or_inf(np.linalg.norm(flat(ours) - ref_all) / ref_norm)
    model32 = max(float(np.linalg.norm(flat(t) - ref_all) / ref_norm) for t in samples32)
    bound = max(args.tol, args.vs_float32 * model32)
    if model > bound:
        bad.append(f"the whole model ({model:.2e} > {bound:.2e})")
    result = {"model": model, "model32": model32, "bound": bound, "scale": scale,
              "model_ratio": model / bound, "tensors": {}}
    worst = worst32 = tensor_ratio = 0.0
    tensor_worst = ""
    for n in exact:
        ref = exact[n]
        if n not in finite:
            equal = np.array_equal(ours[n], ref)
            print(f"  {n:40s} rel err {0.0 if equal else float('inf'):.2e} (holds infinities: "
                  f"compared for equality)")
            continue
        norm = float(np.linalg.norm(ref))
        # The norm the tensor is measured against: its own, or the model's scale at its size.
        against = max(norm, scale * np.sqrt(ref.size))
        diff = finite_or_inf(np.linalg.norm(ours[n] - ref))
        diff32 = max(float(np.linalg.norm(t[n] - ref)) for t in samples32)
        err, err32 = diff / against, diff32 / against
        ratio = err / (args.tensor_factor * bound)
        if args.tensor_vs_float32 > 0 and err32 > 0:
            ratio = min(ratio, err / (args.tensor_vs_float32 * err32))
        worst, worst32 = max(worst, err), max(worst32, err32)
        if ratio >= tensor_ratio:
            tensor_ratio, tensor_worst = ratio, n
        small = " (below the model's scale: relative to it)" if norm < against else ""
        print(f"  {n:40s} rel err {err:.2e} ({args.low_name}: {err32:.2e}), "
              f"{ratio:.3f} of its bound{small}")
        result["tensors"][n] = {"n": int(ref.size), "norm": norm, "diff": diff,
                                "diff32": diff32, "ratio": ratio}
        if not ratio <= 1:
            bad.append(n)
    result.update(worst=worst, worst32=worst32, tensor_ratio=tensor_ratio,
                  tensor_worst=tensor_worst, bad=bad)
    return result


if __name__ == "__main__":
    main()
