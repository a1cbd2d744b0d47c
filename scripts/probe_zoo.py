#!/usr/bin/python3
"""Probe what a new user exports today: every classification family of
torchvision (Debian's, torch 1.13), its video classifiers (R3D, MC3, R(2+1)D)
and semantic segmentation models (FCN, DeepLabV3, LR-ASPP: scores per pixel,
mgsc --class-axis 1), and PyTorch's own transformer and
recurrent blocks, each at the smallest configuration that keeps its
structure, through the whole path a user takes:

  torch.onnx.export (TRAINING mode, opset 15, constant folding off, a dynamic
  batch) -> mgs-import-onnx -> mgsc -> the training executable, a few epochs
  on synthetic NumPy data (images: ten noisy class patterns, as the e2e tests
  use; tokens: scripts/make_token_data.py's progressions)

and print a table: imports? compiles? trains (the last epoch's mean loss below
the first's)? and the first blocker (the first error line of the stage that
failed).

    probe_zoo.py [--build DIR] [--work DIR] [--only NAME,...] [--epochs N] [--markdown]
                 [--torch [--mgs-order]] [--opset N] [--lr LR]

Run with Debian's /usr/bin/python3 from the repository root after building
mgs-import-onnx and mgsc (or with a PyTorch 2.x, e.g. the benches' venv
~/.cache/mgs-torch2/bin/python, and --opset 20: its TorchScript exporter). Nothing is downloaded (random weights, seeded). One
OpenMP thread for training, so that the probe stays cheap on a shared machine.

With Hugging Face transformers installed (PyTorch 2.x), the "hf ..." rows are tiny BERT,
DistilBERT, T5, ViT, Wav2Vec2 and decoder LMs (export_models.py's hf_* builders), each exported
with a fixed batch at its own opset unless --opset is given: BERT, DistilBERT, T5, ViT and
Wav2Vec2 by the TorchScript exporter at opset 20; the decoders (Llama, Qwen2, Mistral, Phi,
GPT-NeoX) by the torch.export-based one, at opset 23, its optimizer off, their rotary inv_freq
frozen, and as "(TorchScript)" rows (also Phi-3, Falcon and GPT-2) by the TorchScript one at
opset 20, with an all-ones attention mask; "(torch.export)" rows: BERT, Wav2Vec2, GPT-2 and
Phi-3 by torch.export.
With timm installed, the "timm ..." rows are 52 of its classifiers (models_timm.py), exported
by the TorchScript exporter at opset 20 unless --opset is given ("(torch.export)": by the
torch.export-based one, a fixed batch).
scripts/check_hf_gradients.py checks these rows' one-step gradients (the "hf ..." and "timm ..."
rows).
"""
import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models_more  # noqa: E402  (the "more ..." rows)
import export_models  # noqa: E402  (its TokenDecoder, TokenSeq2Seq, PaddedAttention, MaxVit)
import mgs_augment  # noqa: E402  (the executable's sample order)
VOCAB, LENGTH = 50, 12
OPSET = None  # --opset (None: 15, and the "hf ..." rows' own: 20, or 23 for torch.export)


# --- PyTorch's own blocks, as a user wraps them -----------------------------

class Recurrent(nn.Module):
    """nn.GRU or nn.LSTM (16 -> 32, num_layers 2, batch_first) over embedded
    tokens, every step's output into a label per position (the next token)."""

    def __init__(self, cell):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.rnn = cell(16, 32, num_layers=2, batch_first=True)
        self.out = nn.Linear(32, VOCAB)

    def forward(self, tokens):
        y, _ = self.rnn(self.embed(tokens))
        return self.out(y).reshape(-1, VOCAB)


class BagClassifier(nn.Module):
    """nn.EmbeddingBag of each sequence's tokens (`mode` mean, sum or max: PyTorch's text
    classification tutorial's model), a linear map to the 4 classes of the token data."""

    def __init__(self, mode):
        super().__init__()
        self.bag = nn.EmbeddingBag(VOCAB, 32, mode=mode)
        self.out = nn.Linear(32, 4)

    def forward(self, tokens):
        return self.out(self.bag(tokens))


TABULAR_DENSE, TABULAR_TABLES, TABULAR_BAG = 13, (100, 50, 30), 3


class DLRM(nn.Module):
    """A DLRM-style recommendation model on one float input: 13 dense features (a bottom MLP)
    and 3 categorical features of 3 ids each, stored as floats and cast back (`x.long()`), each
    an nn.EmbeddingBag (sum); the pairwise dot products of the 4 vectors (the interaction: a
    batched matmul read at the constant lower-triangle indices) beside the dense vector into a
    top MLP, 2 classes (click or not)."""

    def __init__(self, dim=16):
        super().__init__()
        self.bottom = nn.Sequential(nn.Linear(TABULAR_DENSE, 32), nn.ReLU(), nn.Linear(32, dim),
                                    nn.ReLU())
        self.bags = nn.ModuleList([nn.EmbeddingBag(n, dim, mode="sum") for n in TABULAR_TABLES])
        f = len(TABULAR_TABLES) + 1
        rows, cols = torch.tril_indices(f, f, offset=-1)
        self.register_buffer("rows", rows)
        self.register_buffer("cols", cols)
        self.top = nn.Sequential(nn.Linear(dim + f * (f - 1) // 2, 32), nn.ReLU(),
                                 nn.Linear(32, 2))

    def forward(self, x):
        dense = self.bottom(x[:, :TABULAR_DENSE])
        ids = x[:, TABULAR_DENSE:].long()
        z = torch.stack([dense] + [bag(ids[:, i * TABULAR_BAG:(i + 1) * TABULAR_BAG])
                                   for i, bag in enumerate(self.bags)], dim=1)
        pairs = torch.bmm(z, z.transpose(1, 2))[:, self.rows, self.cols]
        return self.top(torch.cat([dense, pairs], dim=1))


# --- Hugging Face transformers models (when `transformers` imports) ---------
# export_models.py's tiny configurations (random weights, nothing downloaded, every dropout 0
# unless the name says otherwise; 2-D logits). BERT, DistilBERT, T5, ViT and Wav2Vec2 export with
# the TorchScript exporter (opset 20: --opset 20); the decoders with the torch.export-based one,
# at opset 23 (--opset 23), its graph optimizer off: on, it merges initializers of equal value
# (the RMSNorm weights, all ones, become one tensor, which then trains as one) and renames the
# weights. Both exports fix the batch (transformers' mask code computes from the shapes).
# The TorchScript exporter takes the decoders with an attention mask (all ones, built inside
# forward: HFLogits' mask_ones); its exports hold the rotary angles as Constant nodes, no
# inv_freq initializer: nothing to freeze.
# With the optimizer off, GPT-NeoX's and GPT-2's qkv chunk/split and Phi-3's gate_up chunk are a
# SplitToSequence read by SequenceAt at constant positions (the importer makes it a split); with it
# on, GPT-2's graph holds 18 float initializers for PyTorch's 29 parameters: every zero bias one
# tensor, every LayerNorm weight one, the LM head transposed as val_266, the position embedding's
# first T rows folded into a [1, T, 32] constant, and tanh-GELU's constants (0.5, 3, 0.044715,
# sqrt(2/pi)) as scalars, all of which would train. GPT-2 has no rotary inv_freq to freeze.
# BERT's and DistilBERT's embeddings have a padding_idx (pad_token_id, 0 by default), whose row
# PyTorch never updates (its gradient is zero); ONNX's Gather has no such attribute, so mgs
# trains it like any other row. Their rows put the pad id outside the data (VOCAB, one more
# row), except "(pad id 0)": the default, with id 0 in the data.

def hf_models():
    """The "hf ..." rows (as models()'s), with the decoders exported by torch.export."""
    if not export_models.transformers_available():
        return {}
    em = export_models
    img32, tokens = (3, 32, 32), (LENGTH,)
    return {
        "hf bert": (lambda: em.hf_bert(VOCAB, pad=VOCAB), tokens, "class", 16, 256, 0.05),
        "hf bert (dropout 0.1)": (lambda: em.hf_bert(VOCAB, dropout=0.1, pad=VOCAB), tokens,
                                  "class", 16, 256, 0.05),
        "hf distilbert": (lambda: em.hf_distilbert(VOCAB, pad=VOCAB), tokens, "class", 16, 256,
                          0.05),
        "hf distilbert (pad id 0)": (lambda: em.hf_distilbert(VOCAB, pad=0), tokens, "class", 16,
                                     256, 0.05),
        # pad id 1, which the data hold: the position ids computed at run time vary by row
        "hf roberta": (lambda: em.hf_roberta(VOCAB), tokens, "class", 16, 256, 0.05),
        "hf roberta (torch.export)": (lambda: em.hf_roberta(VOCAB), tokens, "class", 16, 256,
                                      0.05),
        # encoders classifying the ids, every padding_idx cleared (the data hold pad id 1)
        **{f"hf {family}": ((lambda f=family: em.hf_classifier(f, VOCAB)), tokens, "class", 16,
                            256, 0.05) for family in em.HF_CLASSIFIERS},
        "hf bart": (lambda: em.hf_bart(VOCAB), tokens, "token", 16, 128, 0.1),
        **{f"hf funnel{exporter}": (lambda: em.hf_funnel(VOCAB), tokens, "class", 16, 256, 0.05)
           for exporter in ("", " (torch.export)")},
        # FNet's Fourier mixing (DFT): torch.export only
        "hf fnet (torch.export)": (lambda: em.hf_fnet(VOCAB), tokens, "class", 16, 256, 0.05),
        **{f"hf xlnet{exporter}": (lambda: em.hf_xlnet(VOCAB), tokens, "class", 16, 256, 0.05)
           for exporter in ("", " (torch.export)")},
        # padded batches with Hugging Face's attention_mask = (ids != 0), built inside forward
        **{f"hf {family} (padding mask{exporter})": (
            (lambda f=family: em.hf_padded(f, VOCAB)), tokens, "padded", 16, 128, 0.1)
           for family in ("bert", "roberta", "llama", "gpt2")
           for exporter in ("", "; torch.export")},
        # exported as users export them: input_ids, attention_mask (BERT: token_type_ids) graph
        # inputs with a dynamic batch and sequence (mgsc --dim, --bind-input: INPUT_ARGS)
        **{f"hf {family} ({n} inputs; dynamic axes{exporter})": (
            (lambda f=family: em.hf_inputs(f, VOCAB)), tokens, "padded", 16, 128, 0.1)
           for family, n in (("bert", 3), ("llama", 2))
           for exporter in ("", "; torch.export")},
        "hf convnext": (lambda: em.hf_vision("convnext"), img32, "image", 16, 64, 0.05),
        "hf segformer": (lambda: em.hf_vision("segformer"), img32, "image", 16, 64, 0.05),
        "hf clip": (lambda: em.hf_vision("clip"), img32, "image", 16, 64, 0.05),
        # DINOv2's position embeddings (4x4 patches) bicubically resized to the image's: the
        # identity at 32x32, 6x6 patches at 48x48
        "hf dinov2": (lambda: em.hf_vision("dinov2"), img32, "image", 16, 64, 0.05),
        # BatchNorm nets by each exporter (torch.export's BatchNorms: mgsc --train-batchnorm)
        **{f"hf {family}{exporter}": ((lambda f=family: em.hf_vision(f)), img32, "image", 16, 64,
                                      0.05)
           for family in ("regnet", "mobilevit", "levit") for exporter in ("", " (torch.export)")},
        # BEiT's relative position index is computed in forward (a ReduceSum of constants)
        "hf beit": (lambda: em.hf_vision("beit"), img32, "image", 16, 64, 0.05),
        **{f"hf dinov2 (48x48 images{exporter})": (
            (lambda: em.hf_vision("dinov2")), (3, 48, 48), "image", 16, 64, 0.05)
           for exporter in ("", "; torch.export")},
        # log-mel-shaped features (8 bins x 16 frames), one of ten noisy patterns a sample
        "hf whisper": (lambda: em.hf_whisper(10), (8, 16), "image", 16, 64, 0.05),
        "hf hubert": (lambda: em.hf_wav2vec2(AUDIO_CLASSES, family="Hubert"),
                      (8 * AUDIO_FRAMES,), "audio", 16, 128, 0.05),
        "hf t5": (lambda: em.hf_t5(VOCAB), tokens, "token", 16, 128, 0.1),
        "hf vit": (em.hf_vit, img32, "image", 16, 64, 0.05),
        "hf llama": (lambda: em.hf_decoder("llama", VOCAB), tokens, "token", 16, 128, 0.1),
        "hf qwen2": (lambda: em.hf_decoder("qwen2", VOCAB), tokens, "token", 16, 128, 0.1),
        "hf mistral": (lambda: em.hf_decoder("mistral", VOCAB, sliding_window=None), tokens,
                       "token", 16, 128, 0.1),
        "hf phi": (lambda: em.hf_decoder("phi", VOCAB, resid_pdrop=0.0, embd_pdrop=0.0), tokens,
                   "token", 16, 128, 0.1),
        "hf gpt-neox": (lambda: em.hf_decoder("gptneox", VOCAB, hidden_dropout=0.0), tokens,
                        "token", 16, 128, 0.1),
        "hf gpt2 (torch.export)": (lambda: em.hf_decoder("gpt2", VOCAB), tokens, "token", 16,
                                   128, 0.1),
        "hf phi3 (torch.export)": (lambda: em.hf_decoder("phi3", VOCAB, resid_pdrop=0.0,
                                                         embd_pdrop=0.0), tokens, "token", 16,
                                   128, 0.1),
        # the decoders by the TorchScript exporter (opset 20), with an all-ones attention mask
        # built inside forward (without one, transformers 5's mask code calls torch.diff)
        **{f"hf {name} (TorchScript)": (
            (lambda f=family, k=kw: em.hf_decoder(f, VOCAB, mask_ones=True, **k)), tokens,
            "token", 16, 128, 0.1) for name, family, kw in [
                ("llama", "llama", {}), ("qwen2", "qwen2", {}),
                ("mistral", "mistral", {"sliding_window": None}),
                ("phi", "phi", {"resid_pdrop": 0.0, "embd_pdrop": 0.0}),
                ("phi3", "phi3", {"resid_pdrop": 0.0, "embd_pdrop": 0.0}),
                ("falcon", "falcon", {"hidden_dropout": 0.0}),
                ("gpt-neox", "gptneox", {"hidden_dropout": 0.0}), ("gpt2", "gpt2", {}),
                ("opt", "opt", {}), ("bloom", "bloom", {}), ("gpt-j", "gptj", {}),
                ("gemma", "gemma", {"head_dim": 8}),
                # sliding window 8 < 12 tokens on alternate layers, logit softcapping
                ("gemma2", "gemma2", {"head_dim": 8, "sliding_window": 8,
                                      "query_pre_attn_scalar": 8}),
                ("stablelm", "stablelm", {"partial_rotary_factor": 0.25,
                                          "hidden_dropout": 0.0}),
                ("mixtral", "mixtral", {}), ("qwen2-moe", "qwen2moe", {}),
                # 2025's: per-head RMSNorm of queries and keys (Qwen3, Gemma 3, OLMo 2's
                # whole-width one), Gemma 3's local and global layers, SmolLM3's layers
                # without rotary embeddings, Granite's multipliers
                ("qwen3", "qwen3", {"head_dim": 8}),
                ("gemma3", "gemma3", {"head_dim": 8, "sliding_window": 8,
                                      "query_pre_attn_scalar": 8}),
                ("olmo2", "olmo2", {}), ("smollm3", "smollm3", {}), ("granite", "granite", {}),
                ("qwen3-moe", "qwen3moe", {"head_dim": 8}),
                ("gpt-oss", "gptoss", {"head_dim": 8}), ("glm4", "glm4", {"head_dim": 8}),
                ("cohere2", "cohere2", {"head_dim": 8}), ("ernie4.5", "ernie45", {"head_dim": 8}),
                ("exaone4", "exaone4", {"head_dim": 8}), ("olmo3", "olmo3", {}),
                ("apertus", "apertus", {"head_dim": 8}), ("seed-oss", "seedoss", {"head_dim": 8}),
                ("lfm2", "lfm2", {})]},
        # mixtures of experts by torch.export (TopK routing, experts gathered at its indices)
        **{f"hf {name} (torch.export)": ((lambda f=family: em.hf_decoder(f, VOCAB)), tokens,
                                         "token", 16, 128, 0.1)
           for name, family in (("mixtral", "mixtral"), ("qwen2-moe", "qwen2moe"),
                                ("qwen3", "qwen3"), ("gemma3", "gemma3"), ("olmo2", "olmo2"),
                                ("smollm3", "smollm3"), ("granite", "granite"),
                                ("qwen3-moe", "qwen3moe"), ("gpt-oss", "gptoss"),
                                ("glm4", "glm4"), ("cohere2", "cohere2"), ("ernie4.5", "ernie45"),
                                ("exaone4", "exaone4"), ("olmo3", "olmo3"),
                                ("apertus", "apertus"), ("seed-oss", "seedoss"),
                                ("lfm2", "lfm2"))},
        # Mamba by each exporter (no attention mask: it has none)
        **{f"hf mamba ({exporter})": ((lambda: em.hf_decoder("mamba", VOCAB)), tokens, "token",
                                      16, 128, 0.1) for exporter in ("TorchScript", "torch.export")},
        # Wav2Vec2ForCTC as a per-frame classifier: 16 frames of 8 samples, each one of 8 noisy
        # patterns, its label (make_data's "audio")
        "hf wav2vec2": (lambda: em.hf_wav2vec2(AUDIO_CLASSES), (8 * AUDIO_FRAMES,), "audio", 16,
                        128, 0.05),
        "hf wav2vec2 (torch.export)": (lambda: em.hf_wav2vec2(AUDIO_CLASSES),
                                       (8 * AUDIO_FRAMES,), "audio", 16, 128, 0.05),
        "hf bert (torch.export)": (lambda: em.hf_bert(VOCAB, pad=VOCAB), tokens, "class", 16,
                                   256, 0.05),
    }


AUDIO_CLASSES, AUDIO_FRAMES = 8, 16
HF_TORCH_EXPORT = {"hf llama", "hf qwen2", "hf mistral", "hf phi", "hf gpt-neox",
                   "hf gpt2 (torch.export)", "hf phi3 (torch.export)",
                   "hf wav2vec2 (torch.export)", "hf bert (torch.export)",
                   "hf roberta (torch.export)",
                   *(f"hf {family} (padding mask; torch.export)"
                     for family in ("bert", "roberta", "llama", "gpt2")),
                   "hf bert (3 inputs; dynamic axes; torch.export)",
                   "hf llama (2 inputs; dynamic axes; torch.export)",
                   "hf dinov2 (48x48 images; torch.export)", "hf xlnet (torch.export)",
                   "hf mamba (torch.export)", "hf mixtral (torch.export)", "hf funnel (torch.export)", "hf fnet (torch.export)",
                   "hf regnet (torch.export)", "hf mobilevit (torch.export)",
                   "hf levit (torch.export)",
                   "hf qwen2-moe (torch.export)",
                   *(f"hf {name} (torch.export)" for name in
                     ("qwen3", "gemma3", "olmo2", "smollm3", "granite", "qwen3-moe", "gpt-oss",
                      "glm4", "cohere2", "ernie4.5", "exaone4", "olmo3", "apertus", "seed-oss",
                      "lfm2"))}


# --- the table: name -> (constructor, input shape, kind, batch, samples, lr) --
# kind: "image" (float NCHW, 10 classes), "class" (tokens, 4 classes),
# "token" (tokens, a label per position), "padded" (as "token", the ids 1-49
# and every other sequence padded with id 0 after 9 tokens).

def efficientnet_v2(stochastic_depth):
    from torchvision.models import EfficientNet, efficientnet as eff
    return EfficientNet(
        [eff.FusedMBConvConfig(1, 3, 1, 16, 16, 2), eff.FusedMBConvConfig(4, 3, 2, 16, 32, 2),
         eff.MBConvConfig(4, 3, 2, 32, 48, 2)], dropout=0.2, last_channel=128,
        stochastic_depth_prob=stochastic_depth, num_classes=10)


def video_pooled(build):
    """A torchvision video classifier whose fixed final average pool (S3D's 2x7x7: 16
    frames of 224x224) is adaptive, so that small clips reach its classifier."""
    def make():
        model = build()
        model.avgpool = nn.AdaptiveAvgPool3d(1)
        return model
    return make


def newer_video_models(tvm):
    """torchvision's video transformers (0.15 on: MViT V2, Swin3D), when it has them."""
    if not hasattr(tvm.video, "swin3d_t"):
        return {}
    return {
        # clips of 16 frames of 32x32, Swin3D's patches 2x4x4, windows 8x7x7 (cut to the
        # 8x8x8 tokens), one block a stage
        "swin3d": (lambda: tvm.video.SwinTransformer3d(
            patch_size=[2, 4, 4], embed_dim=16, depths=[1, 1, 1, 1], num_heads=[1, 2, 2, 4],
            window_size=[8, 7, 7], stochastic_depth_prob=0.0, num_classes=10),
                   (3, 16, 32, 32), "image", 4, 16, 0.01),
        # MViT V2, 3 blocks of 16 and 32 channels (pooled attention, relative positions), on
        # clips of 8 frames of 32x32; the torch.export-based exporter
        "mvit": (mvit_small, (3, 8, 32, 32), "image", 4, 16, 0.01),
        # the same by the TorchScript exporter: its pooling's loop an ONNX Loop (unrolled), its
        # skip connection's pooling an If of a constant condition (inlined)
        "mvit-torchscript": (mvit_small, (3, 8, 32, 32), "image", 4, 16, 0.01),
    }


def mvit_small():
    import torchvision.models as tvm
    from torchvision.models.video.mvit import MSBlockConfig
    blocks = [MSBlockConfig(1, 16, 16, [3, 3, 3], [3, 3, 3], [1, 1, 1], [1, 4, 4]),
              MSBlockConfig(2, 16, 32, [3, 3, 3], [3, 3, 3], [1, 2, 2], [1, 2, 2]),
              MSBlockConfig(2, 32, 32, [3, 3, 3], [3, 3, 3], [1, 1, 1], [1, 2, 2])]
    return tvm.video.MViT(spatial_size=(32, 32), temporal_size=8, block_setting=blocks,
                          residual_pool=True, residual_with_cls_embed=False, rel_pos_embed=True,
                          proj_after_attn=True, dropout=0.0, num_classes=10)


def models():
    import torchvision.models as tvm
    from torchvision.models import regnet, swin_transformer as swin
    img32, img64 = (3, 32, 32), (3, 64, 64)
    tokens = (LENGTH,)
    return {
        # AlexNet's adaptive pool to 6x6 exports only when the features are a
        # multiple of 6 wide: 224x224 gives 6x6. Its classifier is fixed (4096).
        "alexnet": (lambda: tvm.AlexNet(num_classes=10), (3, 224, 224), "image", 4, 16, 0.01),
        "convnext": (lambda: tvm.convnext.ConvNeXt(
            [tvm.convnext.CNBlockConfig(16, 32, 1), tvm.convnext.CNBlockConfig(32, None, 1)],
            num_classes=10), img32, "image", 16, 64, 0.05),
        "densenet": (lambda: tvm.DenseNet(growth_rate=8, block_config=(2, 2), num_init_features=16,
                                          bn_size=2, num_classes=10), img32, "image", 16, 64, 0.05),
        # Stochastic depth in training mode is a random op torch 1.13 cannot
        # export (Bernoulli); the "sd 0" rows are the same models without it.
        "efficientnet_b0": (lambda: tvm.efficientnet_b0(num_classes=10), img32, "image", 16, 64,
                            0.05),
        "efficientnet_b0 (sd 0)": (lambda: tvm.efficientnet_b0(num_classes=10,
                                                               stochastic_depth_prob=0.0),
                                   img32, "image", 16, 64, 0.05),
        # V2-S's block kinds (fused and unfused MBConv, each with a residual
        # block), narrower and shallower.
        "efficientnet_v2": (lambda: efficientnet_v2(0.2), img32, "image", 16, 64, 0.05),
        "efficientnet_v2 (sd 0)": (lambda: efficientnet_v2(0.0), img32, "image", 16, 64, 0.05),
        "googlenet": (lambda: tvm.googlenet(aux_logits=False, init_weights=False,
                                            transform_input=False, num_classes=10), img32, "image",
                      16, 64, 0.05),
        "inception_v3": (lambda: tvm.inception_v3(aux_logits=False, init_weights=False,
                                                  transform_input=False, num_classes=10),
                         (3, 75, 75), "image", 4, 16, 0.001),
        # (export_models.py's "maxvit": stochastic depth 0 there too)
        "maxvit": (lambda: export_models.build("maxvit")[0], img32, "image", 16, 64, 0.05),
        "mnasnet": (lambda: tvm.MNASNet(0.5, num_classes=10), img32, "image", 16, 64, 0.001),
        # 64x64: at 32x32 its last stages are 1x1, where a BatchNorm over a
        # channel that a ReLU6 zeroed for the whole batch makes the step
        # ill-conditioned in float32 (PyTorch's own float32 gradient is 1e-2
        # from float64 there: check_gradients.py mobilenetv2).
        "mobilenet_v2": (lambda: tvm.MobileNetV2(num_classes=10, width_mult=0.5, dropout=0.0),
                         img64, "image", 16, 64, 0.01),
        "mobilenet_v3": (lambda: tvm.mobilenet_v3_small(num_classes=10), img32, "image", 16, 64,
                         0.05),
        "regnet": (lambda: tvm.RegNet(regnet.BlockParams.from_init_params(
            depth=2, w_0=16, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25), stem_width=16,
            num_classes=10), img32, "image", 16, 64, 0.05),
        "resnet": (lambda: tvm.ResNet(tvm.resnet.BasicBlock, [1, 1, 1, 1], num_classes=10), img32,
                   "image", 16, 64, 0.05),
        "resnext": (lambda: tvm.ResNet(tvm.resnet.Bottleneck, [1, 1, 1, 1], groups=32,
                                       width_per_group=4, num_classes=10), img32, "image", 16, 64,
                    0.01),
        "shufflenet_v2": (lambda: tvm.shufflenet_v2_x0_5(num_classes=10), img32, "image", 16, 64,
                          0.01),
        "squeezenet": (lambda: tvm.squeezenet1_1(num_classes=10), img64, "image", 16, 64, 0.01),
        "swin": (lambda: swin.SwinTransformer(
            patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
            num_classes=10), img32, "image", 16, 64, 0.05),
        "swin (sd 0)": (lambda: swin.SwinTransformer(
            patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
            stochastic_depth_prob=0.0, num_classes=10), img32, "image", 16, 64, 0.05),
        "swin_v2": (lambda: swin.SwinTransformer(
            patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
            num_classes=10, block=swin.SwinTransformerBlockV2,
            downsample_layer=swin.PatchMergingV2), img32, "image", 16, 64, 0.05),
        "swin_v2 (sd 0)": (lambda: swin.SwinTransformer(
            patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
            stochastic_depth_prob=0.0, num_classes=10, block=swin.SwinTransformerBlockV2,
            downsample_layer=swin.PatchMergingV2), img32, "image", 16, 64, 0.05),
        # VGG's adaptive pool to 7x7 likewise: 224x224 (the smallest VGG, 11).
        "vgg": (lambda: tvm.vgg11(num_classes=10), (3, 224, 224), "image", 2, 8, 0.01),
        "vit": (lambda: tvm.VisionTransformer(image_size=32, patch_size=4, num_layers=2,
                                              num_heads=4, hidden_dim=64, mlp_dim=128,
                                              num_classes=10), img32, "image", 16, 64, 0.05),
        "wide_resnet": (lambda: tvm.ResNet(tvm.resnet.Bottleneck, [1, 1, 1, 1],
                                           width_per_group=128, num_classes=10), img32, "image",
                        16, 64, 0.01),
        # export_models.py's "seq2seq": causal src_, tgt_ and memory_mask and
        # key-padding masks tokens == 0 (a first id 0 would leave a row no key)
        "nn.Transformer": (export_models.TokenSeq2Seq, tokens, "padded", 16, 128, 0.1),
        "nn.TransformerDecoder": (export_models.TokenDecoder, tokens, "token", 16, 128, 0.1),
        # export_models.py's "padattn": key_padding_mask=tokens == 0
        "nn.MultiheadAttention": (export_models.PaddedAttention, tokens, "class", 16, 256, 0.05),
        # export_models.py's Llama-style decoders (16 tokens of 64; PyTorch 2.5+, its default
        # exporter): grouped-query attention by repeat_interleave, by
        # F.scaled_dot_product_attention, and the LM head tied to the embedding.
        "llama": (export_models.TokenLlama, (16,), "token", 16, 128, 0.1),
        "llama (sdpa)": (lambda: export_models.TokenLlama(sdpa=True), (16,), "token", 16, 128, 0.1),
        "llama (tied)": (lambda: export_models.TokenLlama(tied=True), (16,), "token", 16, 128,
                         0.1),
        # torchvision's video classifiers (3-D convolutions; R(2+1)D's factored into 1x3x3 and
        # 3x1x1) on clips of 8 frames of 32x32.
        "r3d": (lambda: tvm.video.r3d_18(num_classes=10), (3, 8, 32, 32), "image", 4, 16, 0.01),
        "mc3": (lambda: tvm.video.mc3_18(num_classes=10), (3, 8, 32, 32), "image", 4, 16, 0.01),
        "r2plus1d": (lambda: tvm.video.r2plus1d_18(num_classes=10), (3, 8, 32, 32), "image", 4,
                     16, 0.01),
        # S3D (separable 3-D convolutions, inception blocks, 3-D max pools) on clips of 16
        # frames of 64x64, its final 2x7x7 average pool adaptive.
        "s3d": (video_pooled(lambda: tvm.video.s3d(num_classes=10)), (3, 16, 64, 64), "image",
                4, 16, 0.005),
        "s3d (dropout 0)": (video_pooled(lambda: tvm.video.s3d(num_classes=10, dropout=0.0)),
                            (3, 16, 64, 64), "image", 4, 16, 0.005),
        **newer_video_models(tvm),
        # torchvision's semantic segmentation (its dict's "out": scores (N, 5, 64, 64), trained
        # per pixel with mgsc --class-axis 1), no auxiliary head, random backbones.
        "fcn": (lambda: export_models.SegmentationScores(tvm.segmentation.fcn_resnet50(
            weights=None, weights_backbone=None, num_classes=5, aux_loss=False)), img64,
                "segment", 4, 16, 0.01),
        "deeplabv3": (lambda: export_models.SegmentationScores(
            tvm.segmentation.deeplabv3_mobilenet_v3_large(
                weights=None, weights_backbone=None, num_classes=5, aux_loss=False)), img64,
                      "segment", 8, 32, 0.01),
        "lraspp": (lambda: export_models.build("lraspp")[0], img64, "segment", 8, 32, 0.01),
        "nn.GRU": (lambda: Recurrent(nn.GRU), tokens, "token", 16, 128, 0.5),
        "DLRM (EmbeddingBag at x.long())": (DLRM, (TABULAR_DENSE + TABULAR_BAG * 3,),
                                             "tabular", 16, 256, 0.01),
        "DLRM (EmbeddingBag at x.long(); torch.export)": (
            DLRM, (TABULAR_DENSE + TABULAR_BAG * 3,), "tabular", 16, 256, 0.01),
        # (a sum of 12 embeddings: a tenth of the learning rate)
        **{f"nn.EmbeddingBag ({mode}{exporter})": (lambda mode=mode: BagClassifier(mode), tokens,
                                                   "class", 16, 256, lr)
           for mode, lr in (("mean", 0.05), ("sum", 0.005), ("max", 0.05))
           for exporter in ("", "; torch.export")},
        "nn.LSTM": (lambda: Recurrent(nn.LSTM), tokens, "token", 16, 128, 0.5),
        **hf_models(),
        **timm_models(),
        **pyg_models(),
        **models_more.builders(),
    }


def timm_models():
    """The "timm ..." rows (models_timm.py): TorchScript exporter, opset 20 unless --opset."""
    import models_timm
    if not models_timm.timm_available():
        return {}
    return {f"timm {name}": (ctor, (3, size, size), "image", 16, 64, 0.01)
            for name, (ctor, size) in models_timm.BUILDERS.items()}


def pyg_models():
    """The "pyg ..." rows (models_pyg.py): graph classification on a fixed topology, a fixed batch
    (the disjoint union's edge list is a buffer), TorchScript exporter, opset 20 unless --opset."""
    import models_pyg
    graphs = {f"pyg {name}": (ctor, (models_pyg.NODES, models_pyg.FEATURES), "image",
                              models_pyg.BATCH, 64, 0.05)
              for name, ctor in models_pyg.builders().items()}
    # node classification: the one graph a sample (4 draws of its features), a label a node
    nodes = {f"pyg {name}": (ctor, (models_pyg.GRAPH_NODES, models_pyg.GRAPH_FEATURES), "nodes",
                             1, 4, 0.05)
             for name, ctor in models_pyg.node_builders().items()}
    return {**graphs, **nodes}


def export(name, ctor, shape, kind, path, batch):
    torch.manual_seed(0)
    model = ctor()
    model.train()
    if name.startswith("hf "):  # a fixed batch; the exporter as the row says
        example = torch.zeros(batch, *shape,
                              dtype=torch.float32 if kind in ("image", "audio") else torch.long)
        exporter = ({"dynamo": True, "optimize": False, "external_data": False}
                    if name in HF_TORCH_EXPORT else {"dynamo": False})
        opset = OPSET or (23 if name in HF_TORCH_EXPORT else 20)
        inputs, names, dynamic = (example,), ["input"], None
        if getattr(model, "extra_inputs", None):  # input_ids and the others, batch and sequence dynamic
            ids = torch.randint(1, VOCAB, (batch, *shape))
            inputs = (ids, (ids != 0).long(), torch.zeros_like(ids))[:1 + len(model.extra_inputs)]
            names = ["input_ids", *model.extra_inputs]
            dynamic = {n: {0: "batch", 1: "sequence"} for n in names}
            dynamic["logits"] = {0: "rows"}
        torch.onnx.export(model, inputs, path, opset_version=opset,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                          input_names=names, output_names=["logits"], dynamic_axes=dynamic,
                          **exporter)
        return
    if name.startswith("pyg ") and not name.endswith("torch.export)"):  # a fixed batch
        torch.onnx.export(model, (torch.zeros(batch, *shape),), path, opset_version=OPSET or 20,
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                          input_names=["input"], output_names=["logits"], dynamo=False)
        return
    if name.endswith("torch.export)"):  # a fixed batch
        dtype = (torch.float32 if kind in ("image", "segment", "audio", "tabular", "nodes")
                 else torch.long)
        with contextlib.redirect_stdout(io.StringIO()):  # (the exporter's steps)
            torch.onnx.export(model, (torch.zeros(batch, *shape, dtype=dtype),), path,
                              opset_version=OPSET or 20, training=torch.onnx.TrainingMode.TRAINING,
                              do_constant_folding=False, input_names=["input"],
                              output_names=["logits"], dynamo=True, optimize=False,
                              external_data=False)
        return
    example = torch.zeros(2, *shape,
                          dtype=torch.float32 if kind in ("image", "segment", "tabular")
                          else torch.long)
    rows = "rows" if kind in ("token", "padded") else "N"
    # PyTorch 2.x: the TorchScript exporter (the default one writes the inference graph), but
    # for the models only the default one exports (export_models.py's TORCH_EXPORT).
    torch.onnx.export(model, (example,), path,
                      opset_version=OPSET or (20 if name.startswith("timm ") else 15),
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "N"}, "logits": {0: rows}},
                      **export_models.exporter_args(name.split(" ")[0]))


def make_data(kind, shape, samples, work):
    rng = np.random.default_rng(0)
    x, y = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    if kind == "segment":  # a square of class 1..4 on background 0, its pattern in the image
        labels = np.zeros((samples, *shape[1:]), np.int64)
        images = 0.5 * rng.standard_normal((samples, *shape))
        patterns = rng.standard_normal((5, shape[0], 1, 1))
        side = shape[1] // 2
        for i in range(samples):
            c, (r0, c0) = rng.integers(1, 5), rng.integers(0, shape[1] - side, 2)
            labels[i, r0:r0 + side, c0:c0 + side] = c
            images[i, :, r0:r0 + side, c0:c0 + side] += patterns[c]
        np.save(x, images.astype(np.float32))
        np.save(y, labels)
    elif kind == "image":
        labels = rng.integers(0, 10, samples)
        patterns = rng.standard_normal((10, *shape))
        np.save(x, (patterns[labels] + 0.5 * rng.standard_normal((samples, *shape)))
                .astype(np.float32))
        np.save(y, labels.astype(np.int64))
    elif kind == "nodes":  # models_pyg.py's graph: a sample's features, a label a node
        import models_pyg
        features, labels = models_pyg.node_data(samples, rng)
        np.save(x, features)
        np.save(y, labels)
    elif kind == "tabular":  # dense normals, then ids (as floats); clicks from both
        dense = rng.standard_normal((samples, TABULAR_DENSE))
        ids = np.concatenate([rng.integers(0, n, (samples, TABULAR_BAG)) for n in TABULAR_TABLES],
                             axis=1)
        labels = ((dense[:, 0] + (ids[:, 0] % 2) - 0.5) > 0).astype(np.int64)
        np.save(x, np.concatenate([dense, ids], axis=1).astype(np.float32))
        np.save(y, labels)
    elif kind == "audio":  # AUDIO_FRAMES frames a sample, each one of the noisy patterns
        labels = rng.integers(0, AUDIO_CLASSES, (samples, AUDIO_FRAMES))
        patterns = rng.standard_normal((AUDIO_CLASSES, shape[0] // AUDIO_FRAMES))
        np.save(x, (patterns[labels].reshape(samples, -1)
                    + 0.5 * rng.standard_normal((samples, *shape))).astype(np.float32))
        np.save(y, labels.astype(np.int64))
    else:
        padded = kind == "padded"
        subprocess.run([sys.executable, os.path.join(HERE, "make_token_data.py"), work,
                        "--samples", str(samples), "--length", str(shape[0]),
                        "--vocab", str(VOCAB - 1 if padded else VOCAB)], check=True)
        x = os.path.join(work, "tokens.npy")
        y = os.path.join(work, "next.npy" if kind in ("token", "padded") else "steps.npy")
        if padded:
            tokens = np.load(x) + 1
            tokens[::2, 9:] = 0
            np.save(x, tokens)
            np.save(y, np.load(y) + 1)
    return x, y


def mgs_epoch_order(n, seed, epoch):
    """The training executable's sample order in `epoch` (0-based), as a tensor."""
    return torch.tensor(mgs_augment.epoch_order(n, seed, epoch))


def torch_losses(ctor, x, y, kind, batch, epochs, lr, mgs_order=False):
    """PyTorch's own epoch losses on the same data, initial weights, batch, SGD
    (momentum 0.9, the training executable's default) and epochs: the
    reference for whether mgs's loss should fall at this learning rate. With
    mgs_order, the batches come in the executable's order (--seed 1), so the
    two runs see the same batches."""
    torch.manual_seed(0)
    model = ctor()
    model.train()
    xs, ys = torch.from_numpy(np.load(x)), torch.from_numpy(np.load(y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    gen = torch.Generator().manual_seed(1)
    losses = []
    for epoch in range(epochs):
        order = (mgs_epoch_order(len(xs), 1, epoch) if mgs_order else
                 torch.randperm(len(xs), generator=gen))
        total, steps = 0.0, len(xs) // batch
        for i in range(steps):
            idx = order[i * batch:(i + 1) * batch]
            target = ys[idx] if kind == "segment" else ys[idx].reshape(-1)
            loss = F.cross_entropy(model(xs[idx]), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        losses.append(total / steps)
    return losses


def first_error(text):
    """The first line that says what went wrong, shortened for a table cell."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for line in lines:
        if re.search(r"error|unsupported|not supported|cannot|failed", line, re.I):
            return line[:160]
    return (lines[-1] if lines else "(no output)")[:160]


def run(cmd, timeout, env=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout} s"
    except OSError as e:  # e.g. a tool being rebuilt meanwhile
        return 126, f"error: cannot run {cmd[0]}: {e}"


# mgsc's options per model (the first word of its name): buffers that the loss reaches through
# differentiable ops, which PyTorch never updates, frozen (Swin V2's table of relative
# coordinates, the input of its position bias MLP; the Llamas' rotary inv_freq, whose angles' Cos
# and Sin are computed).
# The Hugging Face decoders' rotary inv_freq likewise (by the row's full name).
MGSC_ARGS = {"swin_v2": ["--freeze", "*.relative_coords_table"], "llama": ["--freeze", "inv_freq"],
             # per-pixel scores (N, C, H, W)
             **{name: ["--class-axis", "1"] for name in ("fcn", "deeplabv3", "lraspp", "more unet",
                                                         "more unet (torch.export)")},
             # BART's final_logits_bias, a float buffer (not among named_parameters)
             "hf bart": ["--freeze", "*.final_logits_bias"],
             # Whisper's sinusoidal position table: a parameter PyTorch does not train
             "hf whisper": ["--freeze", "*.embed_positions.weight"],
             **{f"hf {family} (torch.export)": ["--train-batchnorm"]
                for family in ("regnet", "mobilevit", "levit")},
             # (Gemma 3's: sliding_attention_inv_freq beside the global layers')
             **{name: ["--freeze", "*.rotary_emb.*inv_freq"] for name in HF_TORCH_EXPORT
                if not any(k in name for k in ("bert", "wav2vec2", "gpt2", "dinov2", "xlnet", "mamba",
                                               "funnel", "fnet", "regnet", "mobilevit",
                                               "levit"))}}


# mgs-import-onnx's and mgsc's options for the rows whose exports take more inputs than the ids:
# the sequence length, the mask from the ids (pad id 0), BERT's token types of one segment.
INPUT_ARGS = {f"hf {family} ({n} inputs; dynamic axes{exporter})":
              ["--dim", f"sequence={LENGTH}", "--bind-input",
               "attention_mask=input_ids!=0" + (",token_type_ids=0" if family == "bert" else "")]
              for family, n in (("bert", 3), ("llama", 2)) for exporter in ("", "; torch.export")}


def probe(name, spec, args):
    ctor, shape, kind, batch, samples, lr = spec
    lr = args.lr or lr
    work = os.path.join(args.work, re.sub(r"[^A-Za-z0-9_]", "_", name))
    os.makedirs(work, exist_ok=True)
    onnx_path = os.path.join(work, "model.onnx")
    row = {"model": name, "imports": "-", "compiles": "-", "trains": "-", "blocker": "",
           "torch": ""}
    try:
        export(name, ctor, shape, kind, onnx_path, batch)
    except Exception as e:  # the exporter's own failure: nothing mgs can do
        row["blocker"] = f"torch.onnx.export: {str(e).splitlines()[0][:140]}"
        return row
    bsz = ["--batch-size", str(batch), *INPUT_ARGS.get(name, [])]
    rc, out = run([os.path.join(args.build, "bin", "mgs-import-onnx"), onnx_path, *bsz,
                   "-o", os.path.join(work, "model.mlir")], 300)
    row["imports"] = "yes" if rc == 0 else "no"
    if rc != 0:
        row["blocker"] = first_error(out)
        return row
    exe = os.path.join(work, "train")
    rc, out = run([os.path.join(args.build, "bin", "mgsc"), onnx_path, *bsz, "--quiet",
                   *MGSC_ARGS.get(name, MGSC_ARGS.get(name.split(" ")[0], [])), "-o", exe], 900)
    row["compiles"] = "yes" if rc == 0 else "no"
    if rc != 0:
        row["blocker"] = first_error(out)
        return row
    x, y = make_data(kind, shape, samples, work)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    rc, out = run([exe, "--data", x, "--labels", y, "--epochs", str(args.epochs), "--lr", str(lr),
                   "--seed", "1", "--holdout", "0", "--progress-every", "0"], 900, env)
    losses = [float(v) for v in re.findall(r"^epoch \d+: train loss (\S+)", out, re.M)]
    if rc != 0 or len(losses) < args.epochs:
        row["trains"] = "no"
        row["blocker"] = first_error(out)
    else:
        falls = losses[-1] < losses[0]
        row["trains"] = "yes" if falls else "no (loss rises)"
        row["blocker"] = "epoch losses " + ", ".join(f"{l:.3g}" for l in losses)
    if args.torch:
        torch.set_num_threads(1)
        row["torch"] = ", ".join(f"{l:.3g}" for l in
                                 torch_losses(ctor, x, y, kind, batch, args.epochs, lr,
                                              args.mgs_order))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="the mgs build tree (default build)")
    ap.add_argument("--work", default="build/probe-zoo", help="scratch directory")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--mgs-order", action="store_true",
                    help="PyTorch's batches in the training executable's order (same batches)")
    ap.add_argument("--torch", action="store_true",
                    help="also train the model in PyTorch on the same data (its epoch losses)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--lr", type=float, default=0.0,
                    help="the learning rate of every model (default: each model's own)")
    ap.add_argument("--opset", type=int, default=None,
                    help="the opset to export at (default 15; PyTorch 2.x: 20, its default; the "
                         "\"hf ...\" rows default to 20, or 23 for the decoders)")
    args = ap.parse_args()
    global OPSET
    OPSET = args.opset
    warnings.filterwarnings("ignore")
    table = models()
    names = [n for n in args.only.split(",") if n] or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        if any(n.startswith("hf ") for n in unknown) and not export_models.transformers_available():
            sys.exit("probe_zoo.py: the \"hf ...\" rows need Hugging Face transformers (and "
                     "PyTorch 2.x): run with a Python that has them")
        if any(n.startswith("pyg ") for n in unknown):
            sys.exit("probe_zoo.py: the \"pyg ...\" rows need torch_geometric (and PyTorch "
                     "2.x): run with a Python that has them")
        if any(n.startswith("timm ") for n in unknown):
            sys.exit("probe_zoo.py: the \"timm ...\" rows need timm (and PyTorch 2.x): run with "
                     "a Python that has them")
        sys.exit(f"probe_zoo.py: unknown model(s) {', '.join(unknown)}; known: {', '.join(table)}")
    rows = []
    for name in names:
        start = time.time()
        row = probe(name, table[name], args)
        rows.append(row)
        print(f"# {name}: {row['imports']}/{row['compiles']}/{row['trains']} "
              f"({time.time() - start:.0f} s) {row['blocker']}"
              + (f"; torch {row['torch']}" if row["torch"] else ""), file=sys.stderr, flush=True)
    head = ["model", "imports", "compiles", "trains", "blocker"] + (["torch"] if args.torch else [])
    if args.markdown:
        print("| model | imports | compiles | trains (loss falls) | first blocker / epoch losses |"
              + (" PyTorch's epoch losses |" if args.torch else ""))
        print("|---|---|---|---|---|" + ("---|" if args.torch else ""))
        for r in rows:
            print("| " + " | ".join(r[h].replace("|", "\\|") for h in head) + " |")
    else:
        width = max(len(r["model"]) for r in rows)
        for r in rows:
            print(f"{r['model']:<{width}}  {r['imports']:<3}  {r['compiles']:<3}  "
                  f"{r['trains']:<15}  {r['blocker']}"
                  + (f"  (PyTorch: {r['torch']})" if r["torch"] else ""))


if __name__ == "__main__":
    main()
