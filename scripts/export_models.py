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
import math
import os
import sys
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    """Digits MLP: 64 -> 128 -> 64 -> 10; with inputs=784, the Fashion-MNIST (and
    MNIST) one."""

    def __init__(self, inputs=64):
        super().__init__()
        self.fc1 = nn.Linear(inputs, 128)
        self.fc2 = nn.Linear(128, 64)
        self.fc3 = nn.Linear(64, 10)

    def forward(self, x):
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class LeNet(nn.Module):
    """LeNet-5 shaped for 1x8x8 digits."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 2 * 2, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class ResizeNet(nn.Module):
    """Resizes of computed data for 1x8x8 digits, as decoders and DINOv2's position embeddings
    use F.interpolate: a convolution, bilinear upsampling x2 (16x16), a stride-2 convolution,
    bicubic resizing to 6x6 and nearest upsampling x2 (12x12, averaged 3x3), a linear layer."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, stride=2, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 10)

    def forward(self, x):
        x = F.interpolate(torch.relu(self.conv1(x)), scale_factor=2, mode="bilinear",
                          align_corners=False)
        x = F.interpolate(torch.relu(self.conv2(x)), size=(6, 6), mode="bicubic",
                          align_corners=False)
        x = F.avg_pool2d(F.interpolate(x, scale_factor=2, mode="nearest"), 3)
        return self.fc(x.flatten(1))


class ConvTransposeNet(nn.Module):
    """Transposed convolutions (decoders, UNets, GAN generators) for 1x8x8 digits: a stride-2
    convolution to 4x4, a stride-2 transposed convolution back to 8x8 (padding 1, output_padding
    1, 2 groups), a dilated one without bias to 10x10, average pooling, a linear layer."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.wide = nn.ConvTranspose2d(4, 2, 2, dilation=2, bias=False)
        self.fc = nn.Linear(2 * 5 * 5, 10)

    def forward(self, x):
        x = torch.relu(self.up(torch.relu(self.conv(x))))
        return self.fc(F.avg_pool2d(self.wide(x), 2).flatten(1))


class Autoencoder(nn.Module):
    """A convolutional autoencoder for 1x8x8 digits (denoising; trained with a regression loss,
    mgsc --loss mse): two stride-2 convolutions to 16x2x2, two stride-2 transposed convolutions
    back to 1x8x8, the output the reconstruction itself (N, 1, 8, 8)."""

    def __init__(self):
        super().__init__()
        self.enc1 = nn.Conv2d(1, 8, 3, stride=2, padding=1)
        self.enc2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.dec1 = nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)
        self.dec2 = nn.ConvTranspose2d(8, 1, 4, stride=2, padding=1)

    def forward(self, x):
        h = torch.relu(self.enc2(torch.relu(self.enc1(x))))
        return self.dec2(torch.relu(self.dec1(h)))


class SegNet(nn.Module):
    """Semantic segmentation of 1x8x8 digits, U-Net-shaped: per-pixel scores (N, 11, 8, 8), the
    digit's class on its strokes and 10 on the background (test/e2e/segmentation.test). A
    convolution at 8x8, a stride-2 one and another at 4x4 (which sees the whole digit), a
    transposed convolution back to 8x8 joined with the first's output, a 1x1 convolution to the
    classes. Trained with PyTorch's CrossEntropyLoss on the output as it is: mgsc --class-axis
    1, labels (N, 8, 8)."""

    def __init__(self, classes=11):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.down = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16),
                                  nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.head = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        e = self.enc(x)
        return self.head(torch.cat([e, torch.relu(self.up(self.down(e)))], 1))


class SegmentationScores(nn.Module):
    """A torchvision segmentation model's scores (N, C, H, W): its forward returns a dict, whose
    "out" the user trains with CrossEntropyLoss (mgsc --class-axis 1)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class SoftplusMLP(nn.Module):
    """Softplus (Mamba's time steps) for digits: a linear layer whose outputs, times 24, reach
    past 20 and below -20 (where log(1 + e^x) is x, or e^x), softplus, a linear layer."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(F.softplus(24 * self.fc1(x.flatten(1))))


class MoEMLP(nn.Module):
    """A mixture of experts for digits, routed as Mixtral routes tokens: a router's softmax, each
    sample's 2 of 4 experts by topk, their weights renormalized (the probabilities read again by
    torch.gather at the indices); each expert a two-layer MLP whose stacked weights are indexed
    at the routed experts, one batched product for all (transformers' batched_mm experts)."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(64, 4)
        self.w1 = nn.Parameter(torch.randn(4, 64, 32) / 8)
        self.w2 = nn.Parameter(torch.randn(4, 32, 10) / 6)

    def forward(self, x):
        h = x.flatten(1)
        probs = torch.softmax(self.router(h), dim=-1)
        top, experts = torch.topk(probs, 2, dim=-1)
        weights = torch.gather(probs, 1, experts) / top.sum(-1, keepdim=True)
        hidden = torch.relu(torch.matmul(h[:, None, None, :], self.w1[experts]))  # N x 2 x 1 x 32
        out = torch.matmul(hidden, self.w2[experts]).squeeze(2)  # N x 2 x 10
        return (out * weights.unsqueeze(-1)).sum(1)


class ScatterNet(nn.Module):
    """Slice assignment of computed values for digits (Funnel's, as torch.export writes it:
    ScatterND with computed updates): the first 8 of a linear layer's 32 outputs overwritten
    by the tanh of the next 8, one more by the square of another, then a linear layer."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        h = self.fc1(x.flatten(1))
        h[:, 0:8] = torch.tanh(h[:, 8:16])
        v = h[:, 17].clone()  # (autograd: the product saves v, which the writes leave alone)
        h[:, 16] = v * v
        return self.fc2(torch.relu(h))


class FNetMixer(nn.Module):
    """FNet's token mixing for digits: each image's 8 rows as tokens, a linear layer to 16
    features, the real part of their 2-D Fourier transform over tokens and features
    (torch.fft.fftn(h, dim=(1, 2)).real: two ONNX DFTs, which only PyTorch 2.x's torch.export
    exports) added back, ReLU, a linear classifier."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        h = self.fc1(x.reshape(-1, 8, 8))
        mixed = torch.fft.fftn(h, dim=(1, 2)).real
        return self.fc2(torch.relu(h + mixed / 8).flatten(1))


class SmallCNN(nn.Module):
    """The default model of ./run.sh: a small CNN with BatchNorm and dropout for 1x8x8 digits."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = self.dropout(torch.flatten(x, 1))
        return self.fc(x)


class FashionCNN(nn.Module):
    """A CNN for 1x28x28 images (Fashion-MNIST) with more parameters (421 K) than a few thousand
    images need: it overfits them, which augmentation is for (bench/augment_accuracy.py)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(64)
        self.fc1 = nn.Linear(64 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.shortcut is None else self.shortcut(x)))


class ResNet20(nn.Module):
    """CIFAR-style ResNet-20 (He et al. 2016, 3 stages of 3 basic blocks), 3x32x32 input."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        layers, cin = [], 16
        for cout, stride in [(16, 1), (32, 2), (64, 2)]:
            for i in range(3):
                layers.append(BasicBlock(cin, cout, stride if i == 0 else 1))
                cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layers(x)
        x = F.adaptive_avg_pool2d(x, 1)
        return self.fc(torch.flatten(x, 1))


class WideMLP(nn.Module):
    """3072 -> 2048 -> 2048 -> 10 on CIFAR-shaped input (10.5 M parameters,
    42 MB of fp32 gradients): a model where communication matters as in the
    paper, used by the benchmarks."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3072, 2048)
        self.fc2 = nn.Linear(2048, 2048)
        self.fc3 = nn.Linear(2048, 10)

    def forward(self, x):
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class DigitsLSTM(nn.Module):
    """The digits as sequences: an image's 8 rows, one per step, into an LSTM
    (8 -> 32, sequence first), its last hidden state into a linear classifier.
    A recurrent model mgs trains; lstmlm (TokenLSTM) is the language model,
    with an embedding and token data."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        seq = x.reshape(-1, 8, 8).transpose(0, 1)
        _, (h, _) = self.lstm(seq)
        return self.fc(h[-1])


class DigitsGRU(nn.Module):
    """DigitsLSTM with a GRU (8 -> 32, sequence first; PyTorch's GRU exports
    linear_before_reset = 1): the last hidden state into a linear classifier."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        seq = x.reshape(-1, 8, 8).transpose(0, 1)
        _, h = self.gru(seq)
        return self.fc(h[-1])


class DigitsBiLSTM(nn.Module):
    """DigitsLSTM bidirectional (8 -> 16 each way): both directions' last
    hidden states (y_h) and both directions' outputs at the last step (y),
    side by side, into a linear classifier."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, bidirectional=True)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        seq = x.reshape(-1, 8, 8).transpose(0, 1)
        y, (h, _) = self.lstm(seq)
        return self.fc(torch.cat([h.transpose(0, 1).reshape(-1, 32), y[-1]], 1))


class TokenLSTM(nn.Module):
    """A language model (the shape of the paper's 2-layer LSTM on PTB, small):
    token ids [N, T] into an embedding (50 -> 16), two LSTM layers (16 -> 32,
    sequence first) and a linear layer back to the 50 tokens at every
    position: logits [N * T, 50], one row per (sample, position), sample-major."""

    def __init__(self, vocab=50, embed=16, hidden=32, rows=True):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=2)
        self.out = nn.Linear(hidden, vocab)
        self.rows = rows

    def forward(self, tokens):
        x = self.embed(tokens).transpose(0, 1)
        y, _ = self.lstm(x)
        if not self.rows:  # logits [N, T, 50], as Hugging Face's LM heads give them
            return self.out(y.transpose(0, 1))
        return self.out(y.transpose(0, 1).reshape(-1, y.shape[-1]))


class StochasticDepthNet(nn.Module):
    """A residual CNN for 1x8x8 digits whose two residual branches go through torchvision's
    StochasticDepth (drop path, p = 0.5, mode "row": each sample's branch kept or dropped whole,
    as in torchvision's EfficientNet, ConvNeXt and Swin). PyTorch 2.x exports it in training mode
    as RandomUniformLike, Less, Cast, Div and Mul; Debian's PyTorch 1.13 cannot export it (it
    refuses bernoulli_), so its export is committed (test/e2e/Inputs/torch2)."""

    def __init__(self, p=0.5):
        super().__init__()
        from torchvision.ops import StochasticDepth
        self.stem = nn.Conv2d(1, 16, 3, padding=1)
        self.block1 = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
                                    nn.Conv2d(16, 16, 3, padding=1))
        self.block2 = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(),
                                    nn.Conv2d(16, 16, 3, padding=1))
        self.drop1 = StochasticDepth(p, "row")
        self.drop2 = StochasticDepth(p, "row")
        self.fc = nn.Linear(16 * 8 * 8, 10)

    def forward(self, x):
        x = F.relu(self.stem(x))
        x = F.relu(x + self.drop1(self.block1(x)))
        x = F.relu(x + self.drop2(self.block2(x)))
        return self.fc(torch.flatten(x, 1))


class LayerNormGeluMLP(nn.Module):
    """Digits MLP with LayerNorm and GELU: 64 -> 128 -> LayerNorm -> GELU -> 64 ->
    LayerNorm -> GELU (tanh approximation) -> 10. Opset 15 exports LayerNorm as
    its decomposition (ReduceMean, Sub, Pow, Sqrt, Div, ...), opset 17 as
    LayerNormalization; GELU is Erf (exact) or Pow/Tanh (tanh) arithmetic."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.ln1 = nn.LayerNorm(128)
        self.fc2 = nn.Linear(128, 64)
        self.ln2 = nn.LayerNorm(64)
        self.fc3 = nn.Linear(64, 10)

    def forward(self, x):
        x = torch.flatten(x, 1)
        x = F.gelu(self.ln1(self.fc1(x)))
        x = F.gelu(self.ln2(self.fc2(x)), approximate="tanh")
        return self.fc3(x)


class TokenTransformer(nn.Module):
    """An nn.TransformerEncoder classifier over token ids [N, T]: an
    embedding (50 -> 32) plus a learned position embedding, two encoder
    layers (4 heads, feed-forward 64, ReLU, dropout 0, batch first), the mean
    over the positions and a linear layer to 4 classes (make_token_data.py's
    progression steps: steps.npy)."""

    def __init__(self, vocab=50, width=32, heads=4, layers=2, length=12, classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.randn(1, length, width) * 0.1)
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=2 * width, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.fc = nn.Linear(width, classes)

    def forward(self, tokens):
        return self.fc(self.encoder(self.embed(tokens) + self.pos).mean(1))


class PaddedAttention(nn.Module):
    """nn.MultiheadAttention over token ids [N, T] with padding: an embedding
    (50 -> 32) plus a learned position embedding, one attention layer (4
    heads, batch first) whose key_padding_mask is computed from the ids
    (id 0 is padding: `tokens == 0`, a mask made at run time), the mean over
    the positions and a linear layer to 4 classes (make_token_data.py's
    steps.npy)."""

    def __init__(self, vocab=50, width=32, heads=4, length=12, classes=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.randn(1, length, width) * 0.1)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.fc = nn.Linear(width, classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        y = self.attn(x, x, x, key_padding_mask=tokens == 0, need_weights=False)[0]
        return self.fc(y.mean(1))


class HFMaskedAttention(nn.Module):
    """Causal attention over token ids [N, T] under a padding mask built as Hugging Face's
    masking code builds it (id 0 is padding): attention_mask = (ids != 0) as INT64, back to
    BOOL, flattened and read at batch * T + key (constant indices), And-ed with the causal mask,
    the scores' bias Where(mask, 0, -inf), and the probabilities guarded by
    Where(isnan(p), 0, p); an embedding 50 -> 32 plus learned positions, one head, a linear
    layer to the next token (50)."""

    def __init__(self, vocab=50, width=32, length=12):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.randn(1, length, width) * 0.1)
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.attend(tokens, (tokens != 0).long(), self.embed(tokens) + self.pos)

    def attend(self, tokens, attention_mask, x):
        n, t = tokens.shape
        batch = torch.arange(n).view(n, 1, 1, 1)
        query, key = torch.arange(t).view(1, 1, t, 1), torch.arange(t).view(1, 1, 1, t)
        padding = attention_mask.bool().flatten()[(batch * t + key).flatten()].view(n, 1, 1, t)
        mask = padding & (key <= query)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        bias = torch.where(mask, torch.tensor(0.0), torch.tensor(float("-inf")))
        p = torch.softmax(scores.unsqueeze(1) + bias, dim=-1)
        p = torch.where(torch.isnan(p), torch.tensor(0.0), p)
        return self.out(p.squeeze(1) @ v).reshape(n * t, -1)


class HFMaskedInputs(HFMaskedAttention):
    """HFMaskedAttention as users export Hugging Face models: attention_mask and token_type_ids
    are graph inputs beside the ids (MULTI_INPUT; mgsc --bind-input
    attention_mask=input!=0,token_type_ids=0), batch and sequence dynamic, and a token type
    embedding (2 -> 32) is added. Called with the ids alone (the reference) it builds both as
    --bind-input does."""

    def __init__(self):
        super().__init__()
        self.types = nn.Embedding(2, 32)

    def forward(self, tokens, attention_mask=None, token_type_ids=None):
        if attention_mask is None:
            attention_mask = (tokens != 0).long()
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(tokens)
        return self.attend(tokens, attention_mask,
                           self.embed(tokens) + self.pos + self.types(token_type_ids))


class RobertaPositions(nn.Module):
    """RoBERTa's embeddings over token ids [N, T] as a classifier: a word embedding (50 -> 32)
    plus a position embedding read at position ids made at run time from the ids, as
    transformers' create_position_ids_from_input_ids writes them (a pad id anywhere takes
    position `pad`, the others count from pad + 1: cumsum(mask) * mask + pad), LayerNorm, the
    mean over the positions and a linear layer to 4 classes."""

    def __init__(self, vocab=50, width=32, length=12, classes=4, pad=1):
        super().__init__()
        self.pad = pad
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(length + pad + 1, width)
        self.ln = nn.LayerNorm(width)
        self.fc = nn.Linear(width, classes)

    def forward(self, tokens):
        mask = tokens.ne(self.pad).int()
        positions = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + self.pad
        x = self.ln(self.embed(tokens) + self.pos(positions))
        return self.fc(x.mean(1))


class GPTBlock(nn.Module):
    """A pre-LayerNorm decoder block: x + attention(LN(x)) under the causal
    mask, then x + MLP(LN(x)) with GELU."""

    def __init__(self, width, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 4 * width)
        self.fc2 = nn.Linear(4 * width, width)

    def forward(self, x, mask):
        y = self.ln1(x)
        x = x + self.attn(y, y, y, attn_mask=mask, need_weights=False)[0]
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TokenGPT(nn.Module):
    """A GPT-style causal language model: token ids [N, T] into an embedding
    (50 -> 32) plus a position embedding (a table of T rows read at the
    position ids 0..T-1, an INT64 buffer: a constant in ONNX), two decoder
    blocks (4 heads) under a causal mask, a final LayerNorm and a linear layer
    back to the 50 tokens at every position: logits [N * T, 50], sample-major,
    as TokenLSTM's. The causal mask is a float buffer (0 on and below the
    diagonal, -inf above), added to the attention scores: an ONNX
    initializer like the weights, so mgsc is told to keep it (--freeze mask)."""

    def __init__(self, vocab=50, width=32, heads=4, layers=2, length=12, masked=float("-inf")):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(length, width)
        self.blocks = nn.ModuleList([GPTBlock(width, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(width)
        self.out = nn.Linear(width, vocab)
        self.register_buffer("pos_ids", torch.arange(length))
        self.register_buffer("mask", torch.triu(torch.full((length, length), masked), 1))

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos(self.pos_ids)
        for block in self.blocks:
            x = block(x, self.mask)
        return self.out(self.ln(x)).reshape(-1, self.out.out_features)


class TokenDecoder(nn.Module):
    """nn.TransformerDecoder as a language model: token ids [N, T] into an
    embedding (50 -> 32), two decoder layers (4 heads, feed-forward 64, ReLU,
    dropout 0, batch first) under the causal mask nn.Transformer generates
    in forward (torch.triu of a -inf square: ConstantOfShape and Trilu,
    evaluated at import), their memory a linear map of the embeddings, read
    under the same mask (else every position sees the next token), and a
    linear layer back to the 50 tokens at every position: logits [N * T, 50],
    sample-major, as TokenGPT's."""

    def __init__(self, vocab=50, width=32, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.memory = nn.Linear(width, width)
        layer = nn.TransformerDecoderLayer(width, heads, dim_feedforward=2 * width, dropout=0.0,
                                           batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, layers)
        self.out = nn.Linear(width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        causal = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
        y = self.decoder(x, self.memory(x), tgt_mask=causal, memory_mask=causal)
        return self.out(y).reshape(-1, self.out.out_features)


class TokenSeq2Seq(nn.Module):
    """nn.Transformer (one encoder and one decoder layer, 4 heads, feed-forward
    64, ReLU, dropout 0, batch first) as a language model over token ids
    [N, T] with padding (id 0): the embedded tokens (50 -> 32) are the source
    and the target; every attention reads under the causal mask nn.Transformer
    generates (src_mask, tgt_mask and memory_mask: float, 0 and -inf) and the
    key-padding mask `tokens == 0` (src_, tgt_ and memory_key_padding_mask: a
    mask made at run time), which PyTorch merges into the float mask (torch
    1.13: masked_fill with -inf, a Where whose other branch holds many values;
    2.x: the padding mask made float and added); a linear layer back to the 50
    tokens at every position: logits [N * T, 50], sample-major, as TokenGPT's.
    A sequence must not start with padding (its first position would see no
    key: NaN, in PyTorch too)."""

    def __init__(self, vocab=50, width=32, heads=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.transformer = nn.Transformer(width, heads, 1, 1, dim_feedforward=2 * width,
                                          dropout=0.0, batch_first=True)
        self.out = nn.Linear(width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        causal = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
        pad = tokens == 0
        y = self.transformer(x, x, src_mask=causal, tgt_mask=causal, memory_mask=causal,
                             src_key_padding_mask=pad, tgt_key_padding_mask=pad,
                             memory_key_padding_mask=pad)
        return self.out(y).reshape(-1, self.out.out_features)


class RMSNormReference(nn.Module):
    """torch.nn.RMSNorm's arithmetic (x / sqrt(mean(x^2) + eps) * weight over the last axis)
    where PyTorch lacks it (before 2.4: Debian's torch 1.13, the gradient tests' reference)."""

    def __init__(self, width, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rms_norm(width, eps=1e-6):
    """torch.nn.RMSNorm where PyTorch has it, else its reference; `weight` either way."""
    return nn.RMSNorm(width, eps=eps) if hasattr(nn, "RMSNorm") else RMSNormReference(width, eps)


def rotate_half(x):
    """Hugging Face's rotate_half: the last axis's halves swapped, the second negated."""
    x1 = x[..., :x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaAttention(nn.Module):
    """Hugging Face's LlamaAttention, small: q/k/v/o projections without bias, `heads` query
    heads sharing `kv_heads` key/value heads (grouped-query), rotary position embeddings on q
    and k, causal. `sdpa`: F.scaled_dot_product_attention(is_causal=True, enable_gqa=True)
    (PyTorch 2.5+); else the eager form: k and v repeated per query head
    (repeat_interleave), scores, the causal mask made in forward, softmax. `onnx_ops`: the
    rotary embeddings and the attention as torch.onnx.ops.rotary_embedding and .attention
    (PyTorch 2.8+), which export as ONNX's RotaryEmbedding and Attention (opset 23): the caches
    cos and sin of the positions' angles (positions x half the head size), read at position
    ids 0..T-1; the same sums as the eager form, which is the reference without them."""

    def __init__(self, width, heads, kv_heads, sdpa, onnx_ops=False):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, width // heads
        self.sdpa = sdpa
        self.onnx_ops = onnx_ops
        self.q_proj = nn.Linear(width, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, width, bias=False)

    def forward(self, x, cos, sin):
        n, t, _ = x.shape
        q = self.q_proj(x).view(n, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(n, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(n, t, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.onnx_ops and hasattr(torch.onnx, "ops"):
            half = self.head_dim // 2
            positions = torch.arange(t).unsqueeze(0).expand(n, t)
            rope = lambda z: torch.onnx.ops.rotary_embedding(z, cos[0, :, :half],
                                                             sin[0, :, :half], positions)
            y = torch.onnx.ops.attention(rope(q), rope(k), v, is_causal=True)[0]
            return self.o_proj(y.transpose(1, 2).reshape(n, t, -1))
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if self.sdpa and hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:  # (also the reference of the sdpa form where PyTorch lacks it: the same sums)
            rep = self.heads // self.kv_heads
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
            scores = q @ k.transpose(2, 3) / self.head_dim**0.5
            causal = torch.triu(torch.full((t, t), float("-inf"), dtype=q.dtype), 1)
            y = torch.softmax(scores + causal, dim=-1) @ v
        return self.o_proj(y.transpose(1, 2).reshape(n, t, -1))


class LlamaBlock(nn.Module):
    """A Llama decoder layer: x + attention(RMSNorm(x)), then x + down(silu(gate(h)) * up(h))
    with h = RMSNorm(x) (SwiGLU, no biases)."""

    def __init__(self, width, heads, kv_heads, hidden, sdpa, onnx_ops=False):
        super().__init__()
        self.input_layernorm = rms_norm(width)
        self.self_attn = LlamaAttention(width, heads, kv_heads, sdpa, onnx_ops)
        self.post_attention_layernorm = rms_norm(width)
        self.gate_proj = nn.Linear(width, hidden, bias=False)
        self.up_proj = nn.Linear(width, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, width, bias=False)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class TokenLlama(nn.Module):
    """A Llama-style causal language model (Hugging Face's LlamaForCausalLM, tiny): token ids
    [N, T] into an embedding (64 -> 32), two decoder layers (RMSNorm before attention and
    MLP; 4 query heads sharing 2 key/value heads; rotary embeddings as Hugging Face computes
    them in forward: inv_freq, a float buffer, times the positions 0..T-1, cos and sin of the
    angles repeated twice; a SwiGLU MLP of 64), a final RMSNorm and an LM head (`tied`: the
    embedding's weight) back to the 64 tokens at every position: logits [N * T, 64],
    sample-major, as TokenGPT's. inv_freq is an ONNX initializer like the weights that reaches
    the loss through Cos and Sin: mgsc is told to keep it (--freeze '*inv_freq')."""

    def __init__(self, vocab=64, width=32, heads=4, kv_heads=2, layers=2, hidden=64,
                 sdpa=False, tied=False, base=10000.0, onnx_ops=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, width)
        self.layers = nn.ModuleList([LlamaBlock(width, heads, kv_heads, hidden, sdpa, onnx_ops)
                                     for _ in range(layers)])
        self.norm = rms_norm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        if tied:
            self.lm_head.weight = self.embed_tokens.weight
        dim = width // heads
        self.register_buffer("inv_freq",
                             1.0 / base**(torch.arange(0, dim, 2, dtype=torch.int64).float() / dim),
                             persistent=False)

    def forward(self, tokens):
        n, t = tokens.shape
        positions = torch.arange(t).unsqueeze(0).to(self.inv_freq.dtype)
        freqs = (self.inv_freq[None, :, None] @ positions[:, None, :]).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        x = self.embed_tokens(tokens)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.norm(x)).reshape(-1, self.lm_head.out_features)


def shufflenet_small():
    """torchvision's ShuffleNetV2 at x0.5 widths with two blocks a stage, ten classes."""
    import torchvision.models as tvm
    return tvm.ShuffleNetV2([2, 2, 2], [24, 48, 96, 192, 1024], num_classes=10)


# --- Hugging Face transformers models (PyTorch 2.x with `transformers`; probe_zoo.py's "hf ..."
# rows, and hf_llama here). Tiny configurations (width 32, 2 layers), random weights (nothing
# downloaded), every dropout 0 unless asked; the wrapper takes the ids (or pixels) only.

def transformers_available():
    try:
        import transformers  # noqa: F401
        return True
    except Exception:  # (not installed, or too old for this PyTorch)
        return False


def _transformers():
    if not transformers_available():
        sys.exit("export_models.py: the hf_* models need Hugging Face transformers (and PyTorch "
                 "2.x): run with a Python that has them")
    import transformers
    return transformers


class HFLogits(nn.Module):
    """forward(x) -> a transformers model's logits, 2-D ([N, classes] or [N*T, vocab]). how:
    "ids" (input_ids), "nocache" (input_ids, use_cache=False), "seq2seq" (T5: the decoder reads
    the same ids, causally, and predicts the next one), "pixels" (pixel_values), "audio"
    (input_values: Wav2Vec2's logits per frame), "features" (Whisper's input_features). mask_ones: an all-ones attention_mask built
    inside forward (the TorchScript exporter cannot export transformers 5's mask code without
    one: it calls torch.diff). mask_pad: attention_mask = (ids != mask_pad) built inside forward
    (padded batches)."""

    def __init__(self, model, how, width, mask_ones=False, mask_pad=None):
        super().__init__()
        self.m, self.how, self.width, self.mask_ones = model, how, width, mask_ones
        self.mask_pad = mask_pad
        self.extra_inputs = []  # names of forward's inputs after the ids (hf_inputs)

    def forward(self, x, attention_mask=None, token_type_ids=None):
        kw = {"attention_mask": torch.ones_like(x)} if self.mask_ones else {}
        if self.mask_pad is not None:  # a padding mask, as a user's collator makes it
            kw = {"attention_mask": (x != self.mask_pad).long()}
        if attention_mask is not None:  # given as inputs (hf_inputs' export)
            kw["attention_mask"] = attention_mask
        if token_type_ids is not None:
            kw["token_type_ids"] = token_type_ids
        if self.how == "ids":
            out = self.m(input_ids=x, return_dict=False, **kw)
        elif self.how == "nocache":
            out = self.m(input_ids=x, use_cache=False, return_dict=False, **kw)
        elif self.how == "seq2seq":
            out = self.m(input_ids=x, decoder_input_ids=x, use_cache=False, return_dict=False)
        elif self.how == "audio":
            out = self.m(input_values=x, return_dict=False)
        elif self.how == "features":  # Whisper's log-mel features
            out = self.m(input_features=x, return_dict=False)
        else:
            out = self.m(pixel_values=x, return_dict=False)
        return out[0].reshape(-1, self.width)


def hf_bert(vocab, dropout=0.0, pad=0):
    """BertForSequenceClassification, 4 classes; the pad id's embedding row is padding_idx."""
    hf = _transformers()
    c = hf.BertConfig(vocab_size=max(vocab, pad + 1), pad_token_id=pad, hidden_size=32,
                      num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                      max_position_embeddings=64, num_labels=4, hidden_dropout_prob=dropout,
                      attention_probs_dropout_prob=dropout, classifier_dropout=dropout)
    return HFLogits(hf.BertForSequenceClassification(c), "ids", 4)


def hf_distilbert(vocab, pad=0):
    hf = _transformers()
    c = hf.DistilBertConfig(vocab_size=max(vocab, pad + 1), pad_token_id=pad, dim=32, n_layers=2,
                            n_heads=2, hidden_dim=64, max_position_embeddings=64, num_labels=4,
                            dropout=0.0, attention_dropout=0.0, seq_classif_dropout=0.0)
    return HFLogits(hf.DistilBertForSequenceClassification(c), "ids", 4)


def hf_roberta(vocab, pad=1):
    """RobertaForSequenceClassification, 4 classes. RoBERTa numbers each sequence's positions
    from its ids at run time (cumsum(ids != pad) * (ids != pad) + pad: a pad id anywhere takes
    position pad, the others count from pad + 1), which mgs computes in the graph. Both
    embeddings' padding_idx is cleared: ONNX's Gather has none, so mgs trains the pad rows, and
    PyTorch, the reference, then does too (probe_zoo.py's data hold the pad id)."""
    hf = _transformers()
    c = hf.RobertaConfig(vocab_size=max(vocab, pad + 1), pad_token_id=pad, hidden_size=32,
                         num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                         max_position_embeddings=64, num_labels=4, hidden_dropout_prob=0.0,
                         attention_probs_dropout_prob=0.0, classifier_dropout=0.0)
    model = hf.RobertaForSequenceClassification(c)
    model.roberta.embeddings.word_embeddings.padding_idx = None
    model.roberta.embeddings.position_embeddings.padding_idx = None
    return HFLogits(model, "ids", 4)


def hf_no_padding_idx(model):
    """Clears every embedding's padding_idx: ONNX's Gather has none, so mgs trains the pad rows;
    PyTorch, the reference, then does too."""
    for module in model.modules():
        if isinstance(module, nn.Embedding):
            module.padding_idx = None
    return model


# Encoders classifying the ids (4 classes): transformers class, config class, the config's own
# options beside the shared ones (width 32, 2 layers, 2 heads, MLP 64, dropout 0).
HF_CLASSIFIERS = {
    "albert": ("AlbertForSequenceClassification", "AlbertConfig",
               dict(embedding_size=16, classifier_dropout_prob=0.0)),
    "electra": ("ElectraForSequenceClassification", "ElectraConfig",
                dict(embedding_size=16, classifier_dropout=0.0)),
    "xlm-roberta": ("XLMRobertaForSequenceClassification", "XLMRobertaConfig",
                    dict(classifier_dropout=0.0, pad_token_id=1)),
    # (MPNet's relative attention has 32 buckets: transformers hard-codes them)
    "mpnet": ("MPNetForSequenceClassification", "MPNetConfig",
              dict(relative_attention_num_buckets=32, pad_token_id=1)),
    "deberta-v2": ("DebertaV2ForSequenceClassification", "DebertaV2Config",
                   dict(pooler_dropout=0.0, relative_attention=True, position_buckets=8,
                        max_relative_positions=-1, pos_att_type=["p2c", "c2p"],
                        position_biased_input=False, norm_rel_ebd="layer_norm",
                        share_att_key=True, pooler_hidden_size=32)),
    "mobilebert": ("MobileBertForSequenceClassification", "MobileBertConfig",
                   dict(embedding_size=16, intra_bottleneck_size=16, true_hidden_size=16,
                        num_feedforward_networks=2, classifier_dropout=0.0)),
}


def hf_classifier(family, vocab):
    """HF_CLASSIFIERS' `family`, its embeddings' padding_idx cleared (hf_no_padding_idx)."""
    hf = _transformers()
    cls, cfg, extra = HF_CLASSIFIERS[family]
    c = getattr(hf, cfg)(vocab_size=vocab, hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                         num_labels=4, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                         **extra)
    return HFLogits(hf_no_padding_idx(getattr(hf, cls)(c)), "ids", 4)


def hf_funnel(vocab):
    """FunnelForSequenceClassification (2 blocks of 1 layer, pooling between; its relative
    attention written with einsum "td,dnh->tnh"), 4 classes."""
    hf = _transformers()
    c = hf.FunnelConfig(vocab_size=vocab, block_sizes=[1, 1], d_model=32, n_head=2, d_head=16,
                        d_inner=64, hidden_dropout=0.0, attention_dropout=0.0,
                        activation_dropout=0.0, num_labels=4)
    return HFLogits(hf_no_padding_idx(hf.FunnelForSequenceClassification(c)), "ids", 4)


def hf_fnet(vocab):
    """FNetForSequenceClassification (its attention replaced by the real part of a 2-D Fourier
    transform: two ONNX DFTs, which only the torch.export-based exporter writes), 4 classes."""
    hf = _transformers()
    c = hf.FNetConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, intermediate_size=64,
                      hidden_dropout_prob=0.0, max_position_embeddings=64, num_labels=4,
                      use_tpu_fourier_optimizations=False)
    return HFLogits(hf_no_padding_idx(hf.FNetForSequenceClassification(c)), "ids", 4)


def hf_xlnet(vocab):
    """XLNetForSequenceClassification (relative attention with einsum "ibh,hnd->ibnd", its ids
    transposed to time-major before the embedding), 4 classes."""
    hf = _transformers()
    c = hf.XLNetConfig(vocab_size=vocab, d_model=32, n_layer=2, n_head=2, d_inner=64,
                       dropout=0.0, summary_last_dropout=0.0, num_labels=4, mem_len=None)
    return HFLogits(hf_no_padding_idx(hf.XLNetForSequenceClassification(c)), "ids", 4)


def hf_padded(family, vocab):
    """A model of `family` (bert, roberta: ...ForTokenClassification, a label per token; llama,
    gpt2: the causal LMs) given attention_mask = (ids != 0) built inside forward: padded batches
    (probe_zoo.py's "padded" data, pad id 0), every padding_idx cleared."""
    hf = _transformers()
    if family in ("bert", "roberta"):
        cls, cfg = {"bert": ("BertForTokenClassification", "BertConfig"),
                    "roberta": ("RobertaForTokenClassification", "RobertaConfig")}[family]
        c = getattr(hf, cfg)(vocab_size=vocab, pad_token_id=0, hidden_size=32, num_hidden_layers=2,
                             num_attention_heads=2, intermediate_size=64,
                             max_position_embeddings=64, num_labels=vocab, hidden_dropout_prob=0.0,
                             attention_probs_dropout_prob=0.0, classifier_dropout=0.0)
        return HFLogits(hf_no_padding_idx(getattr(hf, cls)(c)), "ids", vocab, mask_pad=0)
    wrapped = hf_decoder(family, vocab)
    wrapped.mask_pad = 0
    return wrapped


def hf_inputs(family, vocab):
    """hf_padded's model as users export it: attention_mask (and BERT's token_type_ids) graph
    inputs beside input_ids (mgsc --bind-input gives them their values); called with the ids
    alone (PyTorch's reference) it builds them as --bind-input does: ids != 0, zeros."""
    model = hf_padded(family, vocab)
    model.extra_inputs = ["attention_mask"] + (["token_type_ids"] if family == "bert" else [])
    return model


def hf_bart(vocab):
    """BartForConditionalGeneration as a language model (decoder_input_ids = the ids), as T5;
    its final_logits_bias is a float buffer (freeze it)."""
    hf = _transformers()
    c = hf.BartConfig(vocab_size=vocab, d_model=32, encoder_layers=2, decoder_layers=2,
                      encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                      decoder_ffn_dim=64, max_position_embeddings=64, dropout=0.0,
                      attention_dropout=0.0, activation_dropout=0.0, classifier_dropout=0.0,
                      encoder_layerdrop=0.0, decoder_layerdrop=0.0, pad_token_id=1,
                      bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
    return HFLogits(hf_no_padding_idx(hf.BartForConditionalGeneration(c)), "seq2seq", vocab)


def hf_vision(family):
    """ConvNextForImageClassification, SegformerForImageClassification (two small stages),
    RegNet, MobileViT, LeViT, CLIPForImageClassification or Dinov2ForImageClassification (its position embeddings for
    32x32 images, bicubically interpolated for others) on images, 10 classes."""
    hf = _transformers()
    if family == "clip":  # CLIPForImageClassification: the vision tower, patches of 8
        c = hf.CLIPConfig(text_config=dict(vocab_size=64, hidden_size=32, intermediate_size=64,
                                           num_hidden_layers=2, num_attention_heads=2,
                                           max_position_embeddings=64),
                          vision_config=dict(image_size=32, patch_size=8, hidden_size=32,
                                             intermediate_size=64, num_hidden_layers=2,
                                             num_attention_heads=2, attention_dropout=0.0),
                          num_labels=10)
        return HFLogits(hf.CLIPForImageClassification(c), "pixels", 10)
    if family == "beit":  # BeitForImageClassification with relative position bias
        c = hf.BeitConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=64, hidden_dropout_prob=0.0,
                          attention_probs_dropout_prob=0.0, drop_path_rate=0.0,
                          use_relative_position_bias=True, num_labels=10)
        return HFLogits(hf.BeitForImageClassification(c), "pixels", 10)
    if family == "dinov2":  # Dinov2ForImageClassification: patches of 8, 4x4 positions
        c = hf.Dinov2Config(image_size=32, patch_size=8, num_channels=3, hidden_size=32,
                            num_hidden_layers=2, num_attention_heads=2, mlp_ratio=2,
                            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                            drop_path_rate=0.0, num_labels=10)
        return HFLogits(hf.Dinov2ForImageClassification(c), "pixels", 10)
    if family == "regnet":  # RegNetForImageClassification (X blocks: grouped convs, BatchNorm)
        c = hf.RegNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                            groups_width=8, layer_type="x", num_labels=10)
        return HFLogits(hf.RegNetForImageClassification(c), "pixels", 10)
    if family == "mobilevit":  # MobileViTForImageClassification (convs with BatchNorm, attention)
        c = hf.MobileViTConfig(image_size=32, patch_size=2, hidden_sizes=[16, 24, 32],
                               neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64], num_attention_heads=2,
                               hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                               classifier_dropout_prob=0.0, num_labels=10)
        return HFLogits(hf.MobileViTForImageClassification(c), "pixels", 10)
    if family == "levit":  # LevitForImageClassification (convolutions and attention, BatchNorm)
        c = hf.LevitConfig(image_size=32, hidden_sizes=[32, 48, 64], num_attention_heads=[2, 2, 2],
                           depths=[1, 1, 1], key_dim=[8, 8, 8], drop_path_rate=0,
                           mlp_ratio=[2, 2, 2], attention_ratio=[2, 2, 2], num_labels=10)
        return HFLogits(hf.LevitForImageClassification(c), "pixels", 10)
    if family == "convnext":
        c = hf.ConvNextConfig(num_channels=3, patch_size=4, num_stages=2, hidden_sizes=[16, 32],
                              depths=[1, 1], drop_path_rate=0.0, image_size=32, num_labels=10)
        return HFLogits(hf.ConvNextForImageClassification(c), "pixels", 10)
    c = hf.SegformerConfig(num_channels=3, num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                           hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2],
                           num_attention_heads=[1, 2], mlp_ratios=[2, 2], hidden_dropout_prob=0.0,
                           attention_probs_dropout_prob=0.0, classifier_dropout_prob=0.0,
                           drop_path_rate=0.0, decoder_hidden_size=32, num_labels=10)
    return HFLogits(hf.SegformerForImageClassification(c), "pixels", 10)


def hf_t5(vocab):
    """T5ForConditionalGeneration as a language model (decoder_input_ids = the ids)."""
    hf = _transformers()
    c = hf.T5Config(vocab_size=vocab, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                    num_decoder_layers=2, num_heads=4, dropout_rate=0.0, decoder_start_token_id=0,
                    tie_word_embeddings=False)
    return HFLogits(hf.T5ForConditionalGeneration(c), "seq2seq", vocab)


def hf_vit():
    """ViTForImageClassification on 32x32 images, patches of 8, 10 classes."""
    hf = _transformers()
    c = hf.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32,
                     num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, num_labels=10)
    return HFLogits(hf.ViTForImageClassification(c), "pixels", 10)


def hf_decoder(family, vocab, mask_ones=False, **kw):
    """A causal LM of `family` (llama, qwen2, mistral, phi, phi3, gptneox, falcon, gpt2): 4 query
    heads sharing 2 key/value heads where the family has grouped-query attention (Falcon: its
    default multi-query attention, one), the LM head not tied; its rotary inv_freq is a float buffer
    (the torch.export-based exporter keeps it: freeze it, mgsc --freeze '*.rotary_emb.inv_freq').
    Phi-3's embedding has a padding_idx (pad_token_id): it is put outside the ids (vocab, one
    more row). mask_ones: see HFLogits."""
    hf = _transformers()
    if family == "gpt2":  # its own config names; 4 heads (no grouped-query attention)
        c = hf.GPT2Config(vocab_size=vocab, n_embd=32, n_inner=64, n_layer=2, n_head=4,
                          n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                          tie_word_embeddings=False, **kw)
        return HFLogits(hf.GPT2LMHeadModel(c), "nocache", vocab, mask_ones)
    # Families with their own config names: OPT (learned positions), BLOOM (ALiBi), GPT-J
    # (rotary on 4 of each head's 8 dims, parallel attention and MLP).
    if family == "mamba":  # selective state spaces (Softplus time steps), no attention
        c = hf.MambaConfig(vocab_size=vocab, hidden_size=32, state_size=8, num_hidden_layers=2,
                           expand=2, conv_kernel=4, time_step_rank=4, use_cache=False,
                           tie_word_embeddings=False, **kw)
        return HFLogits(hf.MambaForCausalLM(c), "nocache", vocab, mask_ones)
    if family == "opt":
        c = hf.OPTConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, ffn_dim=64,
                         num_attention_heads=4, max_position_embeddings=64, dropout=0.0,
                         attention_dropout=0.0, layerdrop=0.0, word_embed_proj_dim=32,
                         tie_word_embeddings=False, pad_token_id=1, **kw)
        return HFLogits(hf_no_padding_idx(hf.OPTForCausalLM(c)), "nocache", vocab, mask_ones)
    if family == "bloom":
        c = hf.BloomConfig(vocab_size=vocab, hidden_size=32, n_layer=2, n_head=4,
                           hidden_dropout=0.0, attention_dropout=0.0, tie_word_embeddings=False,
                           **kw)
        return HFLogits(hf.BloomForCausalLM(c), "nocache", vocab, mask_ones)
    if family == "gptj":
        c = hf.GPTJConfig(vocab_size=vocab, n_positions=64, n_embd=32, n_layer=2, n_head=4,
                          rotary_dim=4, n_inner=64, resid_pdrop=0.0, embd_pdrop=0.0,
                          attn_pdrop=0.0, tie_word_embeddings=False, **kw)
        return HFLogits(hf.GPTJForCausalLM(c), "nocache", vocab, mask_ones)
    cls, cfg = {"llama": ("LlamaForCausalLM", "LlamaConfig"),
                "qwen2": ("Qwen2ForCausalLM", "Qwen2Config"),
                "mistral": ("MistralForCausalLM", "MistralConfig"),
                "phi": ("PhiForCausalLM", "PhiConfig"),
                "phi3": ("Phi3ForCausalLM", "Phi3Config"),
                "gemma": ("GemmaForCausalLM", "GemmaConfig"),
                "gemma2": ("Gemma2ForCausalLM", "Gemma2Config"),
                "stablelm": ("StableLmForCausalLM", "StableLmConfig"),
                "gptneox": ("GPTNeoXForCausalLM", "GPTNeoXConfig"),
                "falcon": ("FalconForCausalLM", "FalconConfig"),
                "mixtral": ("MixtralForCausalLM", "MixtralConfig"),
                "qwen2moe": ("Qwen2MoeForCausalLM", "Qwen2MoeConfig")}[family]
    base = dict(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=4, max_position_embeddings=64, attention_dropout=0.0,
                tie_word_embeddings=False)
    if family not in ("gptneox", "falcon"):
        base["num_key_value_heads"] = 2
    if family == "falcon":
        del base["intermediate_size"]
    if family == "phi3":
        base.update(vocab_size=vocab + 1, pad_token_id=vocab, eos_token_id=vocab)
    # Mixtures of experts: each token routed to 2 of 4 experts by TopK
    if family == "mixtral":
        base.update(num_local_experts=4, num_experts_per_tok=2, router_jitter_noise=0.0,
                    sliding_window=None)
    if family == "qwen2moe":
        base.update(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                    shared_expert_intermediate_size=32, decoder_sparse_step=1)
    base.update(kw)
    width = base["vocab_size"]
    # (Gemma's pad id 0 is in the data: its padding_idx cleared, hf_no_padding_idx)
    model = hf_no_padding_idx(getattr(hf, cls)(getattr(hf, cfg)(**base)))
    if family in ("mixtral", "qwen2moe"):
        # The experts as one batched product of each token's routed experts' stacked weights
        # (TopK, a Gather at its indices, MatMul). The eager default loops over the experts
        # that received tokens (torch.where, index_add_): a data-dependent number of steps,
        # which neither exporter writes as a static graph.
        model.set_experts_implementation("batched_mm")
    return HFLogits(model, "nocache", width, mask_ones)


def hf_whisper(classes):
    """WhisperForAudioClassification (its encoder, 2 layers 32 wide, and a classifier) on 8 mel
    bins of 16 frames (its convolutions halve them to max_source_positions, 8)."""
    hf = _transformers()
    c = hf.WhisperConfig(vocab_size=64, num_mel_bins=8, d_model=32, encoder_layers=2,
                         decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
                         encoder_ffn_dim=64, decoder_ffn_dim=64, max_source_positions=8,
                         max_target_positions=16, dropout=0.0, attention_dropout=0.0,
                         activation_dropout=0.0, encoder_layerdrop=0.0, decoder_layerdrop=0.0,
                         classifier_proj_size=16, num_labels=classes, use_weighted_layer_sum=False,
                         mask_time_prob=0.0, mask_feature_prob=0.0)
    return HFLogits(hf.WhisperForAudioClassification(c), "features", classes)


def hf_wav2vec2(classes, layers=2, family="Wav2Vec2"):
    """Wav2Vec2ForCTC (or, family "Hubert", HubertForCTC) as a per-frame classifier: its logits
    [N*T', classes], T' = samples / 8 (a feature extractor of 2 convolutions, kernels and
    strides 4 and 2, GroupNorm after the first, as feat_extract_norm="group"), `layers`
    transformer layers 32 wide; no masking."""
    hf = _transformers()
    c = getattr(hf, family + "Config")(vocab_size=classes, hidden_size=32, num_hidden_layers=layers,
                          num_attention_heads=2, intermediate_size=64, conv_dim=(16, 16),
                          conv_stride=(4, 2), conv_kernel=(4, 2), num_feat_extract_layers=2,
                          num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                          hidden_dropout=0.0, activation_dropout=0.0, attention_dropout=0.0,
                          feat_proj_dropout=0.0, final_dropout=0.0, layerdrop=0.0,
                          mask_time_prob=0.0, mask_feature_prob=0.0, do_stable_layer_norm=False,
                          feat_extract_norm="group")
    return HFLogits(getattr(hf, family + "ForCTC")(c), "audio", classes)


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
        "lstm": (DigitsLSTM, digits),
        "lngelu": (LayerNormGeluMLP, digits),
        "gru": (DigitsGRU, digits),
        # stochastic depth on two residual branches (PyTorch 2.x exports it only)
        "sdepth": (StochasticDepthNet, digits),
        "bilstm": (DigitsBiLSTM, digits),
        # 12 tokens a sequence (the export's example fixes T; N is --batch-size)
        "lstmlm": (TokenLSTM, torch.zeros(1, 12, dtype=torch.long)),
        # the same with logits [N, 12, 50] (classes last: mgsc --class-axis -1)
        "lstmlm_seq": (lambda: TokenLSTM(rows=False), torch.zeros(1, 12, dtype=torch.long)),
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
DYNAMIC_BATCH = {"shufflenetv2", "scatternet", "fnetmix", "transformer", "gpt", "vit", "gpt_medium", "vit_small",
                 "swin", "swin_v2", "decoder", "maxvit", "padattn", "seq2seq", "llama",
                 "llama_sdpa", "llama_tied", "llama_onnxops", "hfmask", "hfinputs"}
# Language models: their logits have a row per token (a symbol of their own).
TOKEN_ROWS = {"gpt", "gpt_medium", "decoder", "seq2seq", "llama", "llama_sdpa", "llama_tied",
              "llama_onnxops", "hfmask", "hfinputs"}
# Models exported with more graph inputs than the ids ("input"), batch and sequence dynamic
# (the data give the ids; the others are made from them as forward makes them when not given).
MULTI_INPUT = {"hfinputs": ["attention_mask", "token_type_ids"]}


# Models the TorchScript exporter cannot export (it has no symbolic for aten::rms_norm, torch.nn.RMSNorm):
# exported with PyTorch 2.x's default, torch.export-based exporter. Without BatchNorm or
# dropout its graph is the training graph; its optimizer is off (optimize=False), since it
# merges initializers of equal value (every RMSNorm weight starts at ones: one tensor shared by
# all five, which then train as one) and folds each weight's Transpose into an unnamed
# constant (the trained tensors lose their names).
TORCH_EXPORT = {"llama", "llama_sdpa", "llama_tied", "llama_onnxops", "hf_llama"}


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
