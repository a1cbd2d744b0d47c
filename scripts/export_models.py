#!/usr/bin/python3
"""Export the models mgs is tested and demonstrated on to ONNX.

Run with Debian's /usr/bin/python3 (torch 1.13, torchvision). Models are
exported in TRAINING mode with constant folding off, so every parameter is
kept as an initializer and BatchNorm keeps its training form.

    export_models.py OUT_DIR MODEL[:OPSET[:dynamo|default|eval]] ...   e.g.  build/models cnn lenet:13 resnet50:15

The file is OUT_DIR/MODEL-opsetOPSET.onnx (default opset 15); with `:dynamo` (PyTorch 2.5+)
PyTorch's torch.export-based exporter writes OUT_DIR/MODEL-dynamo-opsetOPSET.onnx, its graph
optimizer off, as it always does for the models only it can export (TORCH_EXPORT). With
`:default`, OUT_DIR/MODEL-default-opsetOPSET.onnx is what torch.onnx.export writes by default in
PyTorch 2.9+: that exporter with its optimizer on (the inference graph mgs refuses; its nodes'
FX node and rewrite-rule metadata kept, which mgs's error reads). With `:eval`,
OUT_DIR/MODEL-eval-opsetOPSET.onnx is what the TorchScript exporter writes with
torch.onnx.export's other defaults (evaluation mode, constant folding on: BatchNorm fused
into the convolutions, dropout gone), another graph mgs refuses to train. Nothing is
downloaded: torchvision models are built with random weights (seeded).
"""
import inspect
import os
import sys
import warnings

import numpy as np
import torch

# The model definitions, re-exported: the scripts, benches and tests use export_models.NAME.
from models_small import *  # noqa: E402,F401,F403
from models_sequence import *  # noqa: E402,F401,F403
from models_hf import *  # noqa: E402,F401,F403


def build(name):
    """Returns (model, example input) for a model name."""
    import torchvision.models as tvm
    digits = torch.randn(1, 1, 8, 8)
    imagenet = torch.randn(1, 3, 224, 224)
    table = {
        "mlp": (MLP, digits),
        "lenet": (LeNet, digits),
        # 28x28 images (Fashion-MNIST); zeros, as widemlp's
        "fashionmlp": (lambda: MLP(inputs=784), torch.zeros(1, 1, 28, 28)),
        "cnn": (SmallCNN, digits),
        "fashioncnn": (FashionCNN, torch.zeros(1, 1, 28, 28)),
        "resizenet": (ResizeNet, digits),
        "convtnet": (ConvTransposeNet, digits),
        "autoencoder": (Autoencoder, digits),
        "softplusmlp": (SoftplusMLP, digits),
        "moemlp": (MoEMLP, digits),
        "scatternet": (ScatterNet, digits),
        # torch.export only (the TorchScript exporter has no fft)
        "fnetmix": (FNetMixer, digits),
        # torch.export only (the TorchScript exporter fails on col2im's computed size)
        "foldmix": (FoldMixer, digits),
        "graphmix": (GraphMixer, digits),
        # three graph inputs (x_t, t, c: OTHER_INPUTS), trained with --input-data
        "denoiser": (Denoiser, digits),
        # its training objective: the noise drawn in the graph (torch.randn_like), t and c inputs
        "ddpm": (DiffusionLoss, digits),
        # and its time steps drawn in the graph too (torch.rand: RandomUniformLike), c an input
        "ddpm_t": (DiffusionLossSampledT, digits),
        # its loss computed in its graph (a scalar output), of x and a target input
        "graphloss": (GraphLossNet, digits),
        # cross-entropies inside the graph's loss: CLIP's two directions at constant labels,
        # and one plus a penalty at labels fed as data
        "contrastive": (ContrastivePair, digits),
        "penalized": (PenalizedMLP, digits),
        # a label per position and each position's loss (reduction "none"), masked in the graph
        "rowtagger": (MaskedRowTagger, digits),
        # negative log-likelihoods of log-probabilities: log_softmax over the last axis viewed
        # as rows, and torch.log of a softmax
        "logprobtagger": (LogProbTagger, digits),
        # negative log-likelihoods of anything else: the log of a mixture of softmaxes (plus
        # an epsilon, class weights) and a log-sigmoid of per-row scores
        "nllmixture": (NllMixture, digits),
        # masking noise drawn in the graph: (torch.rand_like(x) < 0.8) times the input, unscaled
        "maskingdae": (MaskingDenoiser, digits),
        # cross-entropies against probabilities (soft targets), with class weights, (N, C, L)
        "softtargets": (SoftTargets, digits),
        # torch.gather at indices fed as data: a DQN's q.gather(1, a[:, None]), a hand-written CE
        "gatherq": (GatherAtData, digits),
        # labels read as numbers: F.one_hot, multi_margin_loss, scatter_, y.float() (2.x only)
        "labelmath": (LabelsAsNumbers, digits),
        # the same, drawn as torch.bernoulli(torch.full_like(x, 0.8)), exported at a fixed batch
        "maskingdae_full": (MaskingDenoiserFull, torch.zeros(2, 1, 8, 8)),
        # a VAE: its loss in its graph, its code drawn with torch.randn_like (RandomNormalLike)
        "vae": (VAE, digits),
        # pixels as categorical values: nn.Embedding and nn.EmbeddingBag at x.long()
        "catmlp": (CategoricalMLP, torch.zeros(1, 1, 8, 8)),
        "lstm": (DigitsLSTM, digits),
        "lngelu": (LayerNormGeluMLP, digits),
        "gru": (DigitsGRU, digits),
        # stochastic depth on two residual branches (PyTorch 2.x exports it only)
        "sdepth": (StochasticDepthNet, digits),
        # detach in forward (torch.export writes it; TorchScript drops it)
        "detach": (DetachMLP, digits),
        # ELU, SELU, CELU, Softsign, Mish, LogSigmoid, Abs, Log
        "activations": (ActivationsMLP, digits),
        # torch.std (unbiased): ReduceProd of the shape
        "stdnorm": (StdNormMLP, digits),
        # nn.PReLU, a slope a channel and one slope (ONNX PRelu)
        "prelu": (PReluNet, digits),
        # torch.maximum and clamp with tensor bounds (ONNX Max and Min)
        "maxmin": (MaxMinMLP, digits),
        # reflect/replicate/circular padding, flip, pixel (un)shuffle
        "layout": (LayoutNet, digits),
        # F.grid_sample: an affine grid (bilinear, zeros), a flow (bilinear, border; nearest)
        "gridwarp": (GridWarp, digits),
        # F.gumbel_softmax: torch.export's exponential_ (a draw compared and logged; 2.x only)
        "gumbel": (GumbelMLP, digits),
        # torchvision's DeformConv2d (DCNv2's mask; two offset groups): torch.export only
        "deform": (DeformNet, digits),
        # amax, amin, max(dim), logsumexp, L1 norm, argmax (computed data)
        "reductions": (ReductionsMLP, digits),
        # comparisons of computed data, And, Sign, IsNaN, Where by them
        "truths": (TruthsMLP, digits),
        # torch.einsum of three operands, of one, with an implicit output
        "einsums": (EinsumMLP, digits),
        # a router's top 2 as scatter, one_hot and scatter_add weights (run-time indices)
        "routing": (RoutingMLP, digits),
        # ceil-mode pools that drop a last window starting in the end padding
        "ceilpool": (CeilPoolCNN, digits),
        # scripted loops (ONNX Loop: a carried value, a list built by append)
        "loops": (LoopMLP, digits),
        "bilstm": (DigitsBiLSTM, digits),
        # nn.RNN: bidirectional tanh, then relu with a learned initial state (ONNX RNN)
        "rnn": (DigitsRNN, digits),
        # an LSTM encoder's last state as its decoder's initial state; a GRU's learned one
        "rnnstate": (DigitsEncoderDecoder, digits),
        # 12 tokens a sequence (the export's example fixes T; N is --batch-size)
        "lstmlm": (TokenLSTM, torch.zeros(1, 12, dtype=torch.long)),
        # the same with logits [N, 12, 50] (classes last: mgsc --class-axis -1)
        "lstmlm_seq": (lambda: TokenLSTM(rows=False), torch.zeros(1, 12, dtype=torch.long)),
        # one-hot tokens (F.one_hot: ONNX OneHot of the ids) into a GRU, a label per token
        "onehotgru": (OneHotGRU, torch.zeros(1, 12, dtype=torch.long)),
        # nn.EmbeddingBag (mean, sum, max) of the 12 tokens, one of 4 classes a sequence
        "embbag": (TokenBags, torch.zeros(1, 12, dtype=torch.long)),
        "segnet": (SegNet, digits),
        # a larger one for the benchmarks: 2,000 tokens, 200 wide, 20 a sequence
        # (1.4 M parameters: communication matters on a 1 Gbit/s network)
        "lstmlm_medium": (lambda: TokenLSTM(vocab=2000, embed=200, hidden=200),
                          torch.zeros(1, 20, dtype=torch.long)),
        "resnet20": (ResNet20, torch.randn(1, 3, 32, 32)),
        # zeros: an example drawn here would move the random stream every
        # other model's initial weights (and the tests' batches) come from
        "widemlp": (WideMLP, torch.zeros(1, 3, 32, 32)),
        "resnet50": (lambda: tvm.resnet50(weights=None), imagenet),
        "vgg16": (lambda: tvm.vgg16(weights=None), imagenet),
        "alexnet": (lambda: tvm.alexnet(weights=None), imagenet),
        # The paper's GoogLeNet on CIFAR-shaped input (its 5 max pools round
        # up: 32 -> 16 -> 8 -> 4 -> 2 -> 1), without the auxiliary heads;
        # dropout 0 so that a training step is deterministic; PyTorch's
        # default initialization (torchvision's, a normal of std 0.01, leaves
        # float32 gradients 2% from float64 in any implementation). A batch
        # of 2: BatchNorm needs more than one value per channel at 1x1.
        "googlenet": (lambda: tvm.googlenet(weights=None, aux_logits=False, init_weights=False,
                                            transform_input=False, num_classes=10, dropout=0.0),
                      torch.zeros(2, 3, 32, 32)),
        # Inception-v3 (the paper trains v4, which torchvision lacks) at its
        # smallest input, 75x75 (NumPy data in the tests), likewise without the
        # auxiliary head or dropout and with PyTorch's default initialization.
        "inception3": (lambda: tvm.inception_v3(weights=None, aux_logits=False, init_weights=False,
                                                transform_input=False, num_classes=10,
                                                dropout=0.0),
                       torch.zeros(2, 3, 75, 75)),
        # MobileNetV3-small (HardSwish, squeeze-excitation's HardSigmoid and
        # GlobalAveragePool) on CIFAR-shaped input (its five stride-2 stages:
        # 32 -> 1), ten classes, dropout 0 so that a training step is
        # deterministic; torchvision's initialization. A batch of 2: BatchNorm
        # needs more than one value per channel at 1x1.
        "mobilenetv3": (lambda: tvm.mobilenet_v3_small(weights=None, num_classes=10, dropout=0.0),
                        torch.zeros(2, 3, 32, 32)),
        # torchvision's R(2+1)D video classifier (3-D convolutions factored into 1x3x3 spatial
        # and 3x1x1 temporal ones, BatchNorm3d between them), one block a stage, on clips of 8
        # frames of 32x32 (NumPy data).
        "r2plus1d": (lambda: tvm.video.VideoResNet(
                         tvm.video.resnet.BasicBlock, [tvm.video.resnet.Conv2Plus1D] * 4,
                         [1, 1, 1, 1], tvm.video.resnet.R2Plus1dStem, num_classes=10),
                     torch.zeros(2, 3, 8, 32, 32)),
        # torchvision's S3D video classifier (separable 3-D convolutions, inception blocks,
        # 3-D max pools), its final 2x7x7 average pool adaptive, without dropout, on clips of
        # 16 frames of 64x64 (NumPy data).
        "s3d": (lambda: AdaptiveVideoPool(tvm.video.s3d(num_classes=10, dropout=0.0)),
                torch.zeros(2, 3, 16, 64, 64)),
        # torchvision's LR-ASPP semantic segmentation (MobileNetV3-Large backbone, its
        # bilinear upsampling to the input's size), 5 classes per pixel of 64x64 images.
        "lraspp": (lambda: SegmentationScores(tvm.segmentation.lraspp_mobilenet_v3_large(
                       weights=None, weights_backbone=None, num_classes=5)),
                   torch.zeros(2, 3, 64, 64)),
        # A reduced ShuffleNetV2 (torchvision's class, x0.5 widths, two blocks a
        # stage instead of 4, 8, 4; 10 classes) on CIFAR-shaped input (32 -> 1
        # over its five stride-2 stages). Its channel shuffle (a 5-D view and
        # transpose) and chunk are shape arithmetic on x.size(), which mgs
        # folds at import (exported with a dynamic batch, DYNAMIC_BATCH). A
        # batch of 2: BatchNorm needs more than one value per channel at 1x1.
        "shufflenetv2": (shufflenet_small, torch.zeros(2, 3, 32, 32)),
        # Transformers (12 tokens a sequence, as lstmlm's): a TransformerEncoder
        # classifier, a GPT-style language model with a label per token.
        "transformer": (TokenTransformer, torch.zeros(1, 12, dtype=torch.long)),
        "gpt": (TokenGPT, torch.zeros(1, 12, dtype=torch.long)),
        "decoder": (TokenDecoder, torch.zeros(1, 12, dtype=torch.long)),
        "padattn": (PaddedAttention, torch.ones(1, 12, dtype=torch.long)),
        "robertapos": (RobertaPositions, torch.zeros(1, 12, dtype=torch.long)),
        "hfmask": (HFMaskedAttention, torch.zeros(2, 12, dtype=torch.long)),
        "hfinputs": (HFMaskedInputs, torch.zeros(2, 12, dtype=torch.long)),
        # the same on sentence pairs: token types 0 then 1 (OTHER_INPUTS), fed as data
        "hfpairs": (HFMaskedInputs, torch.zeros(2, 12, dtype=torch.long)),
        "seq2seq": (TokenSeq2Seq, torch.ones(1, 12, dtype=torch.long)),
        # Llama-style language models (16 tokens a sequence): grouped-query attention as
        # repeat_interleave and an explicit causal mask; as F.scaled_dot_product_attention
        # (is_causal, enable_gqa: PyTorch 2.5+); the LM head tied to the embedding.
        "llama": (TokenLlama, torch.zeros(1, 16, dtype=torch.long)),
        "llama_sdpa": (lambda: TokenLlama(sdpa=True), torch.zeros(1, 16, dtype=torch.long)),
        # its rotary embeddings and attention as ONNX ops (opset 23: RotaryEmbedding, Attention)
        "llama_onnxops": (lambda: TokenLlama(onnx_ops=True), torch.zeros(1, 16, dtype=torch.long)),
        "llama_tied": (lambda: TokenLlama(tied=True), torch.zeros(1, 16, dtype=torch.long)),
        # Hugging Face's LlamaForCausalLM (transformers 5), as the Llamas above: 16 tokens of
        # 64, its batch fixed by the export (2: check_gradients.py --batch 2)
        "hf_llama": (lambda: hf_decoder("llama", 64), torch.zeros(1, 16, dtype=torch.long)),
        # torchvision's VisionTransformer on CIFAR-shaped input: patches of 4
        # (64 of them and the class token), 2 layers, width 64, 4 heads, MLP
        # 128, 10 classes, dropout 0.
        "vit": (lambda: tvm.VisionTransformer(image_size=32, patch_size=4, num_layers=2, num_heads=4,
                                              hidden_dim=64, mlp_dim=128, num_classes=10),
                torch.zeros(1, 3, 32, 32)),
        # A small ConvNeXt (torchvision's class: a 4x4 stride-4 stem, one block
        # of 16 channels, a LayerNorm2d and 2x2 stride-2 downsampling, one
        # block of 32; each block a 7x7 depthwise convolution, a permute to
        # NHWC, LayerNorm, Linear, GELU, Linear, a permute back and the layer
        # scale) on CIFAR-shaped input, 10 classes, no stochastic depth. Layer
        # scales start at 1: at torchvision's 1e-6 a block's gradients are
        # ~1e-6 of the others', its parameters barely move in the tests' steps,
        # and check_gradients.py's (w0 - w1) / lr loses them to float32
        # rounding (3.7e-2 off on a LayerNorm scale, measured).
        "convnext": (lambda: tvm.convnext.ConvNeXt(
            [tvm.convnext.CNBlockConfig(16, 32, 1), tvm.convnext.CNBlockConfig(32, None, 1)],
            stochastic_depth_prob=0.0, layer_scale=1.0, num_classes=10),
            torch.zeros(1, 3, 32, 32)),
        # torchvision's MobileNetV2 at 0.5 width (ReLU6, a Clip; inverted
        # residuals with depthwise convolutions), 10 classes, dropout 0, on
        # 64x64 input (NumPy data in the tests): its five stride-2 stages end
        # at 2x2. At 32x32 they end at 1x1, where a BatchNorm over a channel
        # that a ReLU6 zeroed for the whole batch puts values within float32
        # rounding of the next ReLU6's kink: PyTorch's own float32 gradient is
        # then ~1e-2 from float64 (measured: 9.8e-3; mgs's 2.2e-3).
        "mobilenetv2": (lambda: tvm.MobileNetV2(num_classes=10, width_mult=0.5, dropout=0.0),
                        torch.zeros(2, 3, 64, 64)),
        # torchvision's MNASNet at 0.5 width on CIFAR-shaped input (its five
        # stride-2 stages: 32 -> 1; the head is a mean over H and W, a
        # ReduceMean), 10 classes, dropout 0. A batch of 2: BatchNorm needs
        # more than one value per channel at 1x1.
        "mnasnet": (lambda: tvm.MNASNet(0.5, num_classes=10, dropout=0.0),
                    torch.zeros(2, 3, 32, 32)),
        # Larger ones for bench/transformer_step.py (not in the tests): a
        # ViT-small-sized VisionTransformer (6 layers, width 192, 3 heads, MLP
        # 768, patches of 4 on CIFAR-shaped input) and the GPT at 6 blocks,
        # width 256, 4 heads, 128 tokens a sequence, 2,000 tokens.
        "vit_small": (lambda: tvm.VisionTransformer(image_size=32, patch_size=4, num_layers=6,
                                                    num_heads=3, hidden_dim=192, mlp_dim=768,
                                                    num_classes=10),
                      torch.zeros(1, 3, 32, 32)),
        # (Its causal mask holds -inf, as the test GPT's: a frozen buffer may.)
        "gpt_medium": (lambda: TokenGPT(vocab=2000, width=256, heads=4, layers=6, length=128),
                       torch.zeros(1, 128, dtype=torch.long)),
        # torchvision's SwinTransformer on CIFAR-shaped input: patches of 4 (8x8),
        # width 32, two stages of 2 blocks (2 then 4 heads), windows of 4x4
        # (the second block of each stage shifted: torch.roll, an attention
        # mask), one patch merging (strided slices), 10 classes, no stochastic
        # depth. Its relative position bias gathers a trainable table at
        # constant indices.
        "swin": (lambda: tvm.swin_transformer.SwinTransformer(
                     patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                     window_size=[4, 4], stochastic_depth_prob=0.0, num_classes=10),
                 torch.zeros(1, 3, 32, 32)),
        # The same Swin with V2's blocks and patch merging (post-norm, cosine
        # attention with a clipped logit scale: Exp; a continuous position bias
        # MLP; its qkv bias's key part zeroed: ScatterND on a trained tensor).
        # Only PyTorch 2.x exports it (torch 1.13 refuses zero_()).
        "swin_v2": (lambda: tvm.swin_transformer.SwinTransformer(
                        patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
                        window_size=[4, 4], stochastic_depth_prob=0.0, num_classes=10,
                        block=tvm.swin_transformer.SwinTransformerBlockV2,
                        downsample_layer=tvm.swin_transformer.PatchMergingV2),
                    torch.zeros(1, 3, 32, 32)),
        # torchvision's MaxVit on CIFAR-shaped input: a stem of 16 channels,
        # two stages of one block (16 and 32 channels; an MBConv with
        # squeeze-excitation, then window and grid attention with partitions
        # of 2 and heads of 8), 10 classes, no stochastic depth. Its attention
        # is torch.einsum: Einsums rewritten at import into MatMul and
        # Transposes.
        "maxvit": (lambda: tvm.MaxVit(input_size=(32, 32), stem_channels=16, partition_size=2,
                                      block_channels=[16, 32], block_layers=[1, 1], head_dim=8,
                                      stochastic_depth_prob=0.0, num_classes=10),
                   torch.zeros(1, 3, 32, 32)),
    }
    if name not in table:
        sys.exit(f"export_models.py: unknown model '{name}'; known: {', '.join(sorted(table))}")
    ctor, example = table[name]
    return ctor(), example


# Models exported with a symbolic batch dimension: their shape arithmetic reads
# the batch from x.size(), which torch would otherwise fold into constants
# holding the example's batch size (mgs evaluates it at import for the batch
# size it compiles for). Attention's head split does so too.
DYNAMIC_BATCH = {"shufflenetv2", "scatternet", "fnetmix", "foldmix", "graphmix", "embbag", "catmlp", "transformer", "gpt", "vit", "gpt_medium", "vit_small",
                 "swin", "swin_v2", "decoder", "maxvit", "padattn", "seq2seq", "llama",
                 "llama_sdpa", "llama_tied", "llama_onnxops", "hfmask", "hfinputs", "hfpairs", "detach",
                 "activations", "stdnorm", "prelu",
                 "maxmin", "layout", "reductions", "truths", "rnn", "rnnstate",
                 "einsums", "routing", "gridwarp", "gumbel", "deform", "labelmath"}
# Language models: their logits have a row per token (a symbol of their own).
TOKEN_ROWS = {"gpt", "gpt_medium", "decoder", "seq2seq", "llama", "llama_sdpa", "llama_tied",
              "llama_onnxops", "hfmask", "hfinputs", "hfpairs"}
# Models exported with more graph inputs than the ids ("input"), batch and sequence dynamic
# (the data give the ids; the others are made from them as forward makes them when not given).
MULTI_INPUT = {"hfinputs": ["attention_mask", "token_type_ids"],
               "hfpairs": ["attention_mask", "token_type_ids"]}


def _time_steps(n, rng):
    return rng.integers(0, Denoiser.steps, n).astype(np.int64)


def _conditions(n, rng):
    return rng.standard_normal((n, Denoiser.conditions)).astype(np.float32)


def _segments(n, rng, length=12):
    """Sentence pairs' token types: 0 for the first sentence, 1 from a split in [3, 10)."""
    return (np.arange(length) >= rng.integers(3, 10, (n, 1))).astype(np.int64)


# Models whose forward returns their loss, a scalar (mgsc trains it as it is: --loss graph).
GRAPH_LOSS = {"graphloss", "contrastive", "penalized", "rowtagger", "logprobtagger", "nllmixture",
              "softtargets", "gatherq", "labelmath",
              "maskingdae", "maskingdae_full", "vae", "ddpm", "ddpm_t"}

# Models whose forward takes more graph inputs than the first, each fed by the training
# executable's --input-data NAME=FILE.npy: per model, each further input's name and a function
# of (samples n, a NumPy generator) giving n samples of it (its example in the export: 2 of them).
def _targets4(n, rng):
    return rng.standard_normal((n, 4)).astype(np.float32)


def _captions(n, rng):
    """4 token ids a sample (of 8): a caption; distinct captions keep the batch's pairs apart."""
    return rng.integers(0, 8, (n, 4)).astype(np.int64)


def _classes(n, rng):
    return rng.integers(0, 10, n).astype(np.int64)


def _row_classes(n, rng):
    """A class a pixel row (8 a sample), one in eight of them -100 (ignored)."""
    y = rng.integers(0, 10, (n, 8)).astype(np.int64)
    y[rng.random((n, 8)) < 0.125] = -100
    return y


def _soft_classes(n, rng, *positions):
    """Probabilities over 10 classes (axis 1), for each of `positions`: soft targets."""
    z = rng.standard_normal((n, 10, *positions))
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    return p.astype(np.float32)


def _actions(n, rng):
    return rng.integers(0, 4, n).astype(np.int64)


def _returns(n, rng):
    return rng.standard_normal(n).astype(np.float32)


def _row_mask(n, rng):
    """Which rows count in the masked loss (1) and which not (0); at least one a sample."""
    m = (rng.random((n, 8)) < 0.75).astype(np.float32)
    m[:, 0] = 1.0
    return m


OTHER_INPUTS = {"denoiser": [("t", _time_steps), ("c", _conditions)],
                "ddpm": [("t", _time_steps), ("c", _conditions)], "ddpm_t": [("c", _conditions)],
                "contrastive": [("tokens", _captions)], "penalized": [("y", _classes)],
                "rowtagger": [("y", _row_classes), ("m", _row_mask)],
                "logprobtagger": [("y", _row_classes), ("z", _classes)],
                "nllmixture": [("y", _row_classes), ("z", _classes)],
                "gatherq": [("a", _actions), ("r", _returns), ("y", _classes)],
                "labelmath": [("y", _classes)],
                "softtargets": [("t", _soft_classes), ("u", lambda n, rng: _soft_classes(n, rng, 8))],
                "graphloss": [("target", _targets4)],
                "hfpairs": [("token_type_ids", _segments)]}


# Models the TorchScript exporter cannot export (it has no symbolic for aten::rms_norm, torch.nn.RMSNorm):
# exported with PyTorch 2.x's default, torch.export-based exporter. Without BatchNorm or
# dropout its graph is the training graph; its optimizer is off (optimize=False), since it
# merges initializers of equal value (every RMSNorm weight starts at ones: one tensor shared by
# all five, which then train as one) and folds each weight's Transpose into an unnamed
# constant (the trained tensors lose their names).
TORCH_EXPORT = {"llama", "llama_sdpa", "llama_tied", "llama_onnxops", "hf_llama",
                "mvit"}  # (probe_zoo.py's MViT: the TorchScript exporter writes a Loop)


def exporter_args(name, dynamo=False, optimize=False):
    """torch.onnx.export's arguments that choose the exporter for model `name`. PyTorch 2.9+
    defaults to the torch.export-based exporter, which exports the inference graph (BatchNorm
    folded, dropout gone); the TorchScript one keeps the training graph."""
    if "dynamo" not in inspect.signature(torch.onnx.export).parameters:
        if name in TORCH_EXPORT or dynamo:
            sys.exit(f"export_models.py: {name} needs PyTorch 2.5+ (torch.nn.RMSNorm, "
                     "its torch.export-based ONNX exporter)")
        return {}
    if name in TORCH_EXPORT or dynamo:
        return {"dynamo": True, "optimize": optimize, "external_data": False}
    return {"dynamo": False}


def export(name, opset, out_dir, dynamo=False, optimize=False, eval_mode=False):
    torch.manual_seed(0)
    model, example = build(name)
    model.train()
    dynamo = dynamo or optimize or name in TORCH_EXPORT
    variant = "default-" if optimize else "dynamo-" if name not in TORCH_EXPORT and dynamo \
        else "eval-" if eval_mode else ""
    path = os.path.join(out_dir, f"{name}-{variant}opset{opset}.onnx")
    tmp = path + ".tmp"
    dynamic = {"input": {0: "N"}, "logits": {0: "rows" if name in TOKEN_ROWS else "N"}} \
        if name in DYNAMIC_BATCH else None
    if dynamo:  # (a batch of 1 would be specialized, not symbolic)
        example = torch.zeros(2, *example.shape[1:], dtype=example.dtype)
    inputs, names = (example,), ["input"]
    if name in OTHER_INPUTS and name not in MULTI_INPUT:
        rng = np.random.default_rng(0)
        example = torch.zeros(2, *example.shape[1:], dtype=example.dtype)
        names += [n for n, _ in OTHER_INPUTS[name]]
        inputs = (example, *(torch.from_numpy(make(2, rng)) for _, make in OTHER_INPUTS[name]))
        dynamic = {n: {0: "N"} for n in names}
        if name not in GRAPH_LOSS:  # (a scalar has no batch axis)
            dynamic["logits"] = {0: "N"}
    if name in MULTI_INPUT:
        names += MULTI_INPUT[name]
        inputs = (example, (example != 0).long(), torch.zeros_like(example))[:len(names)]
        dynamic = {n: {0: "N", 1: "sequence"} for n in names}
        dynamic["logits"] = {0: "rows"}
    mode = {} if eval_mode else {"training": torch.onnx.TrainingMode.TRAINING,
                                 "do_constant_folding": False}
    torch.onnx.export(model, inputs, tmp, opset_version=opset, **mode,
                      input_names=names, output_names=["logits"], dynamic_axes=dynamic,
                      **exporter_args(name, dynamo, optimize))
    if dynamo:
        # Its nodes' metadata (the FX node, module path and Python stack trace of each, with
        # this machine's file paths) is 70% of the file: dropped, the graph unchanged, but for
        # what mgs reads: the FX node (a BatchNorm's training flag) and, with the optimizer on,
        # the rewrite rule that made the node.
        import onnx
        saved = onnx.load(tmp)
        keep = {"pkg.torch.onnx.fx_node"}
        if optimize:
            keep.add("pkg.onnxscript.rewriter.rule_name")
        for node in saved.graph.node:
            kept = [(p.key, p.value) for p in node.metadata_props if p.key in keep]
            del node.metadata_props[:]
            for key, value in kept:
                node.metadata_props.add(key=key, value=value)
        onnx.save(saved, tmp)
    os.replace(tmp, path)  # never leave a half-written model behind
    count = sum(p.numel() for p in model.parameters())
    print(f"exported {path} ({count:,} parameters)")


def main(argv):
    # torch 1.13's exporter warns about training-mode export on every model.
    warnings.filterwarnings("ignore")
    if len(argv) < 3:
        sys.exit(__doc__)
    out_dir = argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for spec in argv[2:]:
        name, _, rest = spec.partition(":")
        opset, _, exporter = rest.partition(":")
        if exporter not in ("", "dynamo", "default", "eval"):
            sys.exit(f"export_models.py: unknown exporter '{exporter}' in '{spec}' "
                     "('dynamo', 'default' or 'eval')")
        export(name, int(opset or 15), out_dir, dynamo=exporter == "dynamo",
               optimize=exporter == "default", eval_mode=exporter == "eval")


if __name__ == "__main__":
    main(sys.argv)
