"""The small models mgs is tested on (digits, Fashion-MNIST and CIFAR shapes): MLPs, CNNs,
ResNet-20, autoencoders, segmentation nets; scripts/export_models.py builds and exports them."""

from typing import List

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


class FoldMixer(nn.Module):
    """VOLO's outlook aggregation for digits: F.unfold into 3x3 blocks (stride 2, padding 1: a
    grid of 4x4 blocks that leaves the last row and column to the padding), a linear map of each
    block, F.fold back (overlapping blocks summed: ONNX's Col2Im, which only PyTorch 2.x's
    torch.export exports), a dilated 2x2 unfold and fold of its tanh, ReLU, a linear
    classifier."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 1)
        self.mix = nn.Linear(36, 36)
        self.fc = nn.Linear(4 * 64, 10)

    def forward(self, x):
        h = self.conv(x.reshape(-1, 1, 8, 8))
        cols = F.unfold(h, 3, padding=1, stride=2)
        cols = self.mix(cols.transpose(1, 2)).transpose(1, 2)
        y = F.fold(cols, (8, 8), 3, padding=1, stride=2)
        z = F.fold(F.unfold(torch.tanh(y), 2, dilation=2), (8, 8), 2, dilation=2)
        return self.fc(torch.relu(y + z).flatten(1))


class GraphMixer(nn.Module):
    """Message passing as PyTorch Geometric's layers compute it, for digits: the 8x8 pixels are the
    nodes of a fixed graph (each pixel's edges to its 4 neighbours, buffers), a node's messages
    (a linear map of its embedding) gathered along the edges and aggregated at each edge's end by
    sum (scatter_add), by max and min with the node's own embedding (scatter_reduce amax / amin),
    and by attention: a softmax over each node's incoming edges, its shift the per-node maximum
    of the detached scores (PyG's softmax: scatter_reduce amax with include_self=False, which
    PyTorch 2.x's exporter writes as a ScatterElements 'min' of the lowest float into zeros then
    one 'max'). Then a bias a node (the range of a parameter of 64 values and the 128 values of
    another scattered onto them: amax minus amin), ReLU and a linear classifier of every node's
    features. The two parameters start at the integers 0, 1, 2, so their maxima and minima tie
    between distinct parameters, whose gradients PyTorch splits evenly among the ties."""

    def __init__(self):
        super().__init__()
        src, dst = [], []
        for r in range(8):
            for c in range(8):
                for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                    if 0 <= r + dr < 8 and 0 <= c + dc < 8:
                        src.append(r * 8 + c)
                        dst.append((r + dr) * 8 + c + dc)
        self.register_buffer("src", torch.tensor(src))
        self.register_buffer("dst", torch.tensor(dst))
        self.embed = nn.Linear(1, 8)
        self.message = nn.Linear(8, 8)
        self.score = nn.Linear(8, 1)
        self.fc = nn.Linear(64 * 8, 10)
        self.bias_at = nn.Parameter((torch.arange(64) % 3).float())
        self.bias_from = nn.Parameter((torch.arange(128) * 5 % 3).float())
        self.register_buffer("bias_index", torch.arange(128) % 64)

    def forward(self, x):
        at, values = self.bias_index, self.bias_from
        bias = (self.bias_at.scatter_reduce(0, at, values, "amax")
                - self.bias_at.scatter_reduce(0, at, values, "amin"))
        h = torch.tanh(self.embed(x.reshape(-1, 64, 1)))
        m = self.message(h).index_select(1, self.src)
        at = self.dst.view(1, -1, 1).expand_as(m)
        added = torch.zeros_like(h).scatter_add(1, at, m)
        maxed = h.scatter_reduce(1, at, m, "amax")
        minned = h.scatter_reduce(1, at, m, "amin")
        score = self.score(m)
        at1 = self.dst.view(1, -1, 1).expand_as(score)
        shift = torch.zeros_like(h[..., :1]).scatter_reduce(1, at1, score.detach(), "amax",
                                                            include_self=False)
        e = torch.exp(score - shift.gather(1, at1))
        alpha = e / torch.zeros_like(shift).scatter_add(1, at1, e).gather(1, at1)
        attended = torch.zeros_like(h).scatter_add(1, at, alpha * m)
        g = torch.relu(added + maxed + minned + attended + bias.view(1, 64, 1))
        return self.fc(g.flatten(1))


class CategoricalMLP(nn.Module):
    """A tabular model on digits: the first two rows' 16 pixels read as categorical values (an
    intensity 0..16 is a category: `torch.round(x * 16).long()`, ONNX Round and Cast of the
    input data), the first row's embedded by nn.Embedding and the second row's summed by an
    nn.EmbeddingBag (a bag of 8: DLRM's sparse features), beside the other 48 pixels as dense
    features, into an MLP."""

    def __init__(self):
        super().__init__()
        self.codes = nn.Embedding(17, 4)
        self.bag = nn.EmbeddingBag(17, 4, mode="sum")
        self.mlp = nn.Sequential(nn.Linear(48 + 8 * 4 + 4, 32), nn.ReLU(), nn.Linear(32, 10))

    def forward(self, x):
        flat = x.reshape(-1, 64)
        codes = torch.round(flat[:, :16] * 16).long()
        embedded = self.codes(codes[:, :8]).flatten(1)
        return self.mlp(torch.cat([flat[:, 16:], embedded, self.bag(codes[:, 8:])], dim=1))


class Denoiser(nn.Module):
    """A diffusion model's noise predictor of three graph inputs, as a DDPM trains it: the
    noised image x_t (1 x 8 x 8, the digits' shape), its time step t (an int64 of [0, 50):
    nn.Embedding's row, as a learned time embedding) and a condition c (4 floats: a class's
    code), both added to the feature maps' channels; the output is the predicted noise
    (mgsc --loss mse against it)."""

    steps, conditions = 50, 4

    def __init__(self):
        super().__init__()
        self.time = nn.Embedding(self.steps, 16)
        self.cond = nn.Linear(self.conditions, 16)
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.out = nn.Conv2d(16, 1, 3, padding=1)

    def forward(self, x, t, c):
        bias = (self.time(t) + self.cond(c))[:, :, None, None]
        h = F.silu(self.conv1(x) + bias)
        return self.out(F.silu(self.conv2(h)) + h)


class DiffusionLoss(nn.Module):
    """DDPM's training objective with its noise drawn in the graph: forward(x0, t, c) draws
    noise = torch.randn_like(x0) (ONNX RandomNormalLike: fresh each step), noises the clean image
    x0 to step t by a linear schedule's alpha-bar (betas 1e-4 .. 0.2, DDPM's and
    scripts/make_denoising_data.py's; a buffer: mgsc --freeze abar) and returns the
    mean squared error of the Denoiser's prediction of that noise (a scalar: the graph's loss).
    `draws`, when set, gives the noise instead (its normal(shape); check_gradients.py: the
    training executable's draws)."""

    draws = None

    def __init__(self):
        super().__init__()
        self.model = Denoiser()
        betas = torch.linspace(1e-4, 0.2, Denoiser.steps, dtype=torch.float64)
        self.register_buffer("abar", torch.cumprod(1 - betas, 0).float())

    def normal_like(self, x):
        return torch.randn_like(x) if self.draws is None else self.draws.normal(x.shape).to(x.dtype)

    def forward(self, x0, t, c):
        noise = self.normal_like(x0)
        a = self.abar[t][:, None, None, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        return ((self.model(xt, t, c) - noise) ** 2).mean()


class DiffusionLossSampledT(DiffusionLoss):
    """DiffusionLoss with its time steps drawn in the graph too, as a DDPM training loop draws
    them: t = (torch.rand(N) * steps).long() (ONNX RandomUniformLike, Mul, Cast), then the noise;
    forward(x0, c). `draws` gives both (its uniform(shape), then normal(shape))."""

    def forward(self, x0, c):
        u = torch.rand(x0.shape[0]) if self.draws is None else self.draws.uniform((x0.shape[0],))
        t = (u * Denoiser.steps).long()
        return super().forward(x0, t, c)


class GraphLossNet(nn.Module):
    """A model that computes its own loss, as users write a multi-term objective: forward(x,
    target) returns a scalar. An encoder of the digits (64 -> 32, tanh) whose code regresses
    4 float targets (a second graph input: MSE), reconstructs the image (smooth L1) and is kept
    sparse (an L1 penalty on the code)."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.Tanh())
        self.head = nn.Linear(32, 4)
        self.dec = nn.Linear(32, 64)

    def forward(self, x, target):
        # (Written out: the TorchScript exporter has no F.mse_loss or F.smooth_l1_loss.)
        h = self.enc(x)
        d = (self.dec(h) - x.flatten(1)).abs()
        smooth_l1 = torch.where(d < 1, 0.5 * d * d, d - 0.5).mean()
        return ((self.head(h) - target) ** 2).mean() + smooth_l1 + 0.01 * h.abs().mean()


class ContrastivePair(nn.Module):
    """CLIP's objective on the digits: an image tower (64 -> 32 -> 16) and a text tower (the
    mean of 4 token embeddings: a caption of the class's bits, a second graph input), both
    normalized; their similarities times a learned temperature are scored against
    torch.arange(N) in both directions (two cross-entropies in the graph, constant labels)."""

    def __init__(self):
        super().__init__()
        self.image = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 16))
        self.text = nn.Embedding(8, 16)
        self.logit_scale = nn.Parameter(torch.tensor(1.5))

    def forward(self, x, tokens):
        a = F.normalize(self.image(x), dim=1)
        t = F.normalize(self.text(tokens).mean(1), dim=1)
        logits = a @ t.t() * self.logit_scale.exp()
        labels = torch.arange(x.shape[0])
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


class PenalizedMLP(nn.Module):
    """A classifier trained on its cross-entropy plus a penalty on its logits' size, computed in
    the graph: forward(x, y) returns F.cross_entropy(logits, y) + 0.01 * mean(logits^2), the
    labels y a second graph input (int64, fed as data)."""

    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))

    def forward(self, x, y):
        logits = self.mlp(x)
        return F.cross_entropy(logits, y) + 0.01 * (logits ** 2).mean()


class MaskedRowTagger(nn.Module):
    """A tagger of the digits' 8 pixel rows (each row a position, its 8 pixels the features),
    trained on a masked per-position cross-entropy computed in the graph: forward(x, y, m)
    returns (F.cross_entropy(logits, y, reduction="none") * m).sum() / m.sum() of logits
    (N, 10, 8) (a class per row: the scores' class axis is 1, then the positions, as PyTorch
    wants them) plus 0.1 times the mean cross-entropy of the same scores with the rows labelled
    -100 ignored, at every row; y (N, 8) int64 and m (N, 8) float are graph inputs fed as data."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(8, 24, 3, padding=1), nn.Tanh(),
                                  nn.Conv1d(24, 10, 1))

    def forward(self, x, y, m):
        logits = self.conv(x.view(-1, 8, 8).transpose(1, 2))  # (N, 10, 8): classes, rows
        per_row = F.cross_entropy(logits, y, reduction="none")
        return (per_row * m).sum() / m.sum() + 0.1 * F.cross_entropy(logits, y)


class LogProbTagger(nn.Module):
    """The negative log-likelihood of log-probabilities computed other ways than a LogSoftmax
    over axis 1, in a loss the graph computes: forward(x, y, z) returns
    F.nll_loss(F.log_softmax(h, -1).reshape(-1, 10), y.reshape(-1)) of row scores h (N, 8, 10)
    (the digits' 8 pixel rows, classes last, as a language model's) plus half of
    F.nll_loss(torch.log(F.softmax(g, 1)), z) of a whole-image head g (N, 10); y (N, 8, some
    -100: ignored) and z (N) int64 graph inputs fed as data."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(8, 24, 3, padding=1), nn.Tanh(),
                                  nn.Conv1d(24, 10, 1))
        self.head = nn.Linear(64, 10)

    def forward(self, x, y, z):
        h = self.conv(x.view(-1, 8, 8).transpose(1, 2)).transpose(1, 2)  # (N, 8, 10)
        rows = F.nll_loss(F.log_softmax(h, -1).reshape(-1, 10), y.reshape(-1))
        whole = F.nll_loss(torch.log(F.softmax(self.head(x.flatten(1)), 1)), z)
        return rows + 0.5 * whole


class NllMixture(nn.Module):
    """The negative log-likelihood of inputs that are not log-probabilities of one softmax, in a
    loss the graph computes: forward(x, y, z) returns F.nll_loss(torch.log(p + 1e-6), z,
    weight=w) of p, the mean of two heads' softmaxes (an ensemble's mixture; w constant class
    weights), plus a tenth of F.nll_loss(F.logsigmoid(s), y, reduction="sum") / N of
    per-row scores s (N, 10, 8) (the digits' 8 pixel rows, a label each, some -100: ignored);
    y (N, 8) and z (N) int64 graph inputs fed as data."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(64, 10)
        self.b = nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10))
        self.rows = nn.Conv1d(8, 10, 3, padding=1)
        self.register_buffer("w", torch.tensor([1.0, 2.0, 0.5, 1.0, 1.5, 1.0, 0.25, 1.0, 1.0, 3.0]))

    def forward(self, x, y, z):
        f = x.flatten(1)
        p = 0.5 * F.softmax(self.a(f), 1) + 0.5 * F.softmax(self.b(f), 1)
        whole = F.nll_loss(torch.log(p + 1e-6), z, weight=self.w)
        s = self.rows(x.view(-1, 8, 8).transpose(1, 2))  # (N, 10, 8): classes on axis 1
        rows = F.nll_loss(F.logsigmoid(s), y, reduction="sum") / x.shape[0]
        return whole + 0.1 * rows


class SoftTargets(nn.Module):
    """Cross-entropies against probabilities (soft targets: mixup's, a distillation's), in a
    loss the graph computes: forward(x, t, u) returns F.cross_entropy(logits, t, weight=w) of
    a head's logits (N, 10) against t (N, 10) (w constant class weights, a buffer) plus a tenth
    of F.cross_entropy(s, u, reduction="sum") / N of per-row scores s (N, 10, 8) against u
    (N, 10, 8), probabilities over axis 1. PyTorch 1.13 exports each as a
    SoftmaxCrossEntropyLoss of FLOAT labels, which ONNX's shape inference refuses and mgs
    rewrites (GraphLoss.cpp: decomposeSoftTargetCrossEntropy)."""

    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10))
        self.rows = nn.Conv1d(8, 10, 3, padding=1)
        self.register_buffer("w", torch.tensor([1.0, 2.0, 0.5, 1.0, 1.5, 1.0, 0.25, 1.0, 1.0, 3.0]))

    def forward(self, x, t, u):
        whole = F.cross_entropy(self.head(x.flatten(1)), t, weight=self.w)
        s = self.rows(x.view(-1, 8, 8).transpose(1, 2))  # (N, 10, 8): classes on axis 1
        return whole + 0.1 * F.cross_entropy(s, u, reduction="sum") / x.shape[0]


class GatherAtData(nn.Module):
    """torch.gather at indices fed as data, in a loss the graph computes: forward(x, a, r, y)
    returns a DQN's mean squared error of q.gather(1, a[:, None]).squeeze(1), its action values
    q (N, 4) at the actions a (N) taken, against the returns r (N), plus a hand-written
    cross-entropy of a second head's scores h (N, 10) against labels y (N),
    (h.logsumexp(1) - h.gather(1, y[:, None]).squeeze(1)).mean()."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 32), nn.Tanh())
        self.q = nn.Linear(32, 4)
        self.h = nn.Linear(32, 10)

    def forward(self, x, a, r, y):
        f = self.body(x.flatten(1))
        q = self.q(f).gather(1, a[:, None]).squeeze(1)
        h = self.h(f)
        ce = (h.logsumexp(1) - h.gather(1, y[:, None]).squeeze(1)).mean()
        return ((q - r) ** 2).mean() + ce


class LabelsAsNumbers(nn.Module):
    """Class labels y (N) fed as data and read as numbers in a loss the graph computes:
    forward(x, y) returns, of a digits MLP's scores h (N, 10), the squared error of
    softmax(h) against F.one_hot(y, 10), F.multi_margin_loss(h, y), a cross-entropy against
    the one-hot made by h.new_zeros.scatter(1, y[:, None], 1), a BCE of a third head against
    (y >= 5) and a squared error of a fourth against y / 9 (y.float()). torch.export writes
    the one-hots as Equal(arange(10), y[:, None]) and a ScatterElements at y, the margin loss
    with an Equal of y and a Where, y.float() as a Cast: each reads y as numbers."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 32), nn.Tanh())
        self.h = nn.Linear(32, 10)
        self.b = nn.Linear(32, 1)
        self.r = nn.Linear(32, 1)

    def forward(self, x, y):
        f = self.body(x.flatten(1))
        h = self.h(f)
        one_hot = F.one_hot(y, 10).float()
        mse = ((torch.softmax(h, 1) - one_hot) ** 2).sum(1).mean()
        margin = F.multi_margin_loss(h, y)
        scattered = h.new_zeros(h.shape).scatter(1, y[:, None], 1.0)
        ce = -(scattered * F.log_softmax(h, 1)).sum(1).mean()
        bce = F.binary_cross_entropy_with_logits(self.b(f).squeeze(1), (y >= 5).float())
        reg = ((self.r(f).squeeze(1) - y.float() / 9) ** 2).mean()
        return mse + margin + ce + bce + reg


class MaskingDenoiser(nn.Module):
    """A denoising autoencoder whose masking noise is drawn in the graph: forward(x) returns the
    mean squared error of the reconstruction of x * b against x, b = (torch.rand_like(x) <
    0.8).float() (each pixel kept with probability 0.8, unscaled: a mask read as numbers, not
    a dropout). `draws`, when set, gives the uniform numbers (check_gradients.py: the training
    executable's draws)."""

    draws = None

    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(64, 32), nn.Tanh())
        self.dec = nn.Linear(32, 64)

    def forward(self, x):
        x = x.flatten(1)
        u = torch.rand_like(x) if self.draws is None else self.draws.uniform(tuple(x.shape))
        b = (u < 0.8).to(x.dtype)
        return ((self.dec(self.enc(x * b)) - x) ** 2).mean()


class MaskingDenoiserFull(MaskingDenoiser):
    """MaskingDenoiser with its mask drawn as torch.bernoulli(torch.full_like(x, 0.8)): exported
    at a fixed batch, PyTorch 1.13 writes RandomUniformLike of a constant of x's shape compared
    with a constant of 0.8 of that shape, which mgs redraws for the batch it compiles for."""

    def forward(self, x):
        x = x.flatten(1)
        if self.draws is None:
            b = torch.bernoulli(torch.full_like(x, 0.8))
        else:
            b = (self.draws.uniform(tuple(x.shape)) < 0.8).to(x.dtype)
        return ((self.dec(self.enc(x * b)) - x) ** 2).mean()


class VAE(nn.Module):
    """A variational autoencoder of the digits whose forward returns its loss: an encoder
    (64 -> 32, ReLU) gives a 4-d code's mean and log-variance, the code is drawn by the
    reparameterization trick, mu + eps exp(logvar / 2) with eps = torch.randn_like(mu) (ONNX
    RandomNormalLike), and decoded (4 -> 32 -> 64) into the pixels' logits; the loss is the
    reconstruction's binary cross-entropy (pixels in [0, 1]) summed over the pixels plus the KL
    divergence from N(0, 1), both means over the batch.
    `draws`, when set, gives eps instead (its normal(shape); check_gradients.py: the training
    executable's draws)."""

    draws = None

    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU())
        self.mu = nn.Linear(32, 4)
        self.logvar = nn.Linear(32, 4)
        self.dec = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 64))

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        eps = torch.randn_like(mu) if self.draws is None else self.draws.normal(mu.shape).to(mu.dtype)
        z = mu + eps * torch.exp(0.5 * logvar)
        logits = self.dec(z)  # Bernoulli pixels: binary cross-entropy of the logits, written out
        reconstruction = (F.softplus(logits) - x.flatten(1) * logits).sum(1).mean()
        kl = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(1).mean()
        return reconstruction + kl


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


class ActivationsMLP(nn.Module):
    """A digits MLP through the activations PyTorch users reach for beyond ReLU: ELU, SELU,
    CELU (alpha 0.5), Softsign, Mish, LogSigmoid and log(|h| + 1) (ONNX Elu, Selu, Celu,
    Softsign, Mish or its decomposition, Log of Sigmoid, Abs and Log)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 48)
        self.fc2 = nn.Linear(48, 48)
        self.fc3 = nn.Linear(48, 48)
        self.fc = nn.Linear(48, 10)

    def forward(self, x):
        h = self.fc1(torch.flatten(x, 1))
        h = F.elu(h) + F.selu(h) + F.celu(h, alpha=0.5)
        h = self.fc2(h)
        h = F.softsign(h) + F.mish(h)
        h = self.fc3(h)
        h = F.logsigmoid(h) + torch.log(torch.abs(h) + 1)
        return self.fc(h)


class PReluNet(nn.Module):
    """A digits CNN with learned leaky slopes: nn.PReLU(8) (one slope a channel, ONNX PRelu's
    slope [8, 1, 1]) after the convolution and nn.PReLU() (one slope) after a linear layer."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.act1 = nn.PReLU(8)
        self.fc1 = nn.Linear(8 * 8 * 8, 32)
        self.act2 = nn.PReLU()
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        h = self.act1(self.conv(x))
        h = self.act2(self.fc1(torch.flatten(h, 1)))
        return self.fc(h)


class MaxMinMLP(nn.Module):
    """A digits MLP through torch.maximum of two computed branches and a clamp between
    learned per-feature bounds (ONNX Max and Min of computed tensors)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(64, 32)
        self.lo = nn.Parameter(torch.full((32,), -0.5))
        self.hi = nn.Parameter(torch.full((32,), 0.5))
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.flatten(x, 1)
        h = torch.maximum(self.fc1(x), self.fc2(x))
        return self.fc(torch.clamp(h, min=self.lo, max=self.hi))


class LayoutNet(nn.Module):
    """A digits CNN through layout ops that copy elements: reflect and replicate padding (ONNX
    Pad's reflect and edge modes), torch.flip (Slice with step -1), pixel_unshuffle and
    pixel_shuffle (a reshape and transpose in TorchScript's export; SpaceToDepth and
    DepthToSpace in torch.export's). Circular padding is left out: PyTorch 1.13 exports
    F.pad(h, (2, 1), mode="circular") as slices that take 1 and 2 columns, not 2 and 1."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.conv2 = nn.Conv2d(4, 4, 3)
        self.conv3 = nn.Conv2d(16, 16, 1)
        self.fc = nn.Linear(4 * 8 * 8, 10)

    def forward(self, x):
        h = torch.tanh(self.conv1(F.pad(x, (1, 1, 1, 1), mode="reflect")))
        h = h + torch.flip(h, dims=[3])
        h = torch.tanh(self.conv2(F.pad(h, (1, 1, 2, 0), mode="replicate")))
        h = self.conv3(F.pixel_unshuffle(h, 2))
        h = F.pixel_shuffle(torch.tanh(h), 2)
        return self.fc(torch.flatten(h, 1))


class GridWarp(nn.Module):
    """A digits CNN that samples its images at computed points (F.grid_sample: ONNX GridSample,
    opset 16): a spatial transformer's affine grid, built by hand (the TorchScript exporter has
    no affine_grid) from a predicted theta, sampled bilinearly with zeros padding; then a flow
    field from a convolution warps the features bilinearly with border padding and corners
    aligned, nearest with zeros padding, bilinearly with reflection padding and bicubically
    with zeros and with reflection padding; and the image
    as a 4x4x4 volume warped by a 3-D flow (VoxelMorph's spatial transformer: trilinear,
    reflection padding, corners aligned)."""

    def __init__(self):
        super().__init__()
        self.loc = nn.Linear(64, 6)
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.flow = nn.Conv2d(4, 2, 3, padding=1)
        self.flow3d = nn.Conv3d(1, 3, 3, padding=1)
        self.fc = nn.Linear(20 * 8 * 8 + 64, 10)

    def forward(self, x):
        pixels = (torch.arange(8, dtype=x.dtype) * 2 + 1) / 8 - 1  # centers, align False
        ys = pixels.view(8, 1).expand(8, 8)
        xs = pixels.view(1, 8).expand(8, 8)
        base = torch.stack([xs, ys, torch.ones(8, 8, dtype=x.dtype)], 2).view(1, 64, 3)
        identity = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], dtype=x.dtype)
        theta = identity + 0.3 * torch.tanh(self.loc(torch.flatten(x, 1))).view(-1, 2, 3)
        grid = torch.matmul(base, theta.transpose(1, 2)).view(-1, 8, 8, 2)
        h = F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        h = torch.tanh(self.conv(h))
        flow = 0.4 * torch.tanh(self.flow(h)).permute(0, 2, 3, 1)
        g = grid + flow
        h2 = F.grid_sample(h, g, mode="bilinear", padding_mode="border", align_corners=True)
        h3 = F.grid_sample(h, 1.2 * g, mode="nearest", padding_mode="zeros", align_corners=False)
        h4 = F.grid_sample(h, 2.5 * g, mode="bilinear", padding_mode="reflection",
                           align_corners=False)
        h5 = F.grid_sample(h, 1.1 * g, mode="bicubic", padding_mode="zeros", align_corners=False)
        h6 = F.grid_sample(h, 2.5 * g, mode="bicubic", padding_mode="reflection",
                           align_corners=True)
        v = x.view(-1, 1, 4, 4, 4) / 16
        corners = torch.arange(4, dtype=x.dtype) * 2 / 3 - 1  # align True
        zs3, ys3, xs3 = torch.meshgrid(corners, corners, corners, indexing="ij")
        base3 = torch.stack([xs3, ys3, zs3], 3).view(1, 4, 4, 4, 3)
        g3 = 1.5 * (base3 + 0.5 * torch.tanh(self.flow3d(v)).permute(0, 2, 3, 4, 1))
        v = F.grid_sample(v, g3, mode="bilinear", padding_mode="reflection", align_corners=True)
        return self.fc(torch.cat([torch.flatten(torch.cat([h2, h3, h4, h5, h6], 1), 1),
                                  torch.flatten(v, 1)], 1))


class GumbelMLP(nn.Module):
    """A digits MLP whose class scores go through F.gumbel_softmax (tau 0.5): Gumbel noise
    -log(E), E exponential, which PyTorch 2.x's torch.export writes as exponential_'s
    decomposition, u uniform and E = -where(u >= 1 - eps / 2, -eps / 2, log(u)) (eps float32's:
    the comparison and the log read one draw). The log of the relaxed one-hot (plus 1e-6) is
    the output. `draws`, when set, gives u (check_gradients.py: the training executable's)."""

    draws = None

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        logits = self.fc2(torch.tanh(self.fc1(torch.flatten(x, 1))))
        if self.draws is None:
            y = F.gumbel_softmax(logits, tau=0.5)
        else:
            u = self.draws.uniform(logits.shape).to(logits.dtype)
            eps = torch.finfo(torch.float32).eps
            e = -torch.where(u >= 1 - eps / 2, torch.full_like(u, -eps / 2), torch.log(u))
            y = F.softmax((logits - torch.log(e)) / 0.5, dim=1)
        return torch.log(y + 1e-6)


class DeformNet(nn.Module):
    """A digits CNN of deformable convolutions (torchvision's DeformConv2d: ONNX DeformConv,
    which PyTorch 2.x's torch.export writes; TorchScript's exporter has none): offsets and a
    modulation mask (DCNv2) predicted by a convolution, then a grouped deformable convolution
    with two offset groups."""

    def __init__(self):
        super().__init__()
        import torchvision
        self.offsets = nn.Conv2d(1, 27, 3, padding=1)  # 2 x 9 offsets, 9 mask values
        self.deform = torchvision.ops.DeformConv2d(1, 8, 3, padding=1)
        self.offsets2 = nn.Conv2d(8, 36, 3, padding=1)  # 2 offset groups of 2 x 9
        self.deform2 = torchvision.ops.DeformConv2d(8, 8, 3, padding=1, groups=2, bias=False)
        self.fc = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        o = self.offsets(x)
        h = torch.relu(self.deform(x, 2 * torch.tanh(o[:, :18]), torch.sigmoid(o[:, 18:])))
        h = torch.relu(self.deform2(h, 1.5 * torch.tanh(self.offsets2(h))))
        return self.fc(torch.flatten(h, 1))


class ReductionsMLP(nn.Module):
    """A digits MLP whose hidden features [N, 4, 8] are summarized by torch.amax, torch.amin,
    torch.max(dim).values, torch.logsumexp, an L1 norm and the gather at argmax (ONNX
    ReduceMax, ReduceMin, ReduceLogSumExp, ReduceL1, ArgMax of computed data)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc = nn.Linear(4 + 8 + 4 + 4 + 8 + 4, 10)

    def forward(self, x):
        h = torch.tanh(self.fc1(torch.flatten(x, 1))).reshape(-1, 4, 8)
        at = h.argmax(dim=2, keepdim=True)
        parts = [h.amax(dim=2), h.amin(dim=1), torch.max(h, dim=2).values,
                 torch.logsumexp(2.0 * h, dim=2), torch.norm(h, p=1, dim=1),
                 torch.gather(h, 2, at).squeeze(2)]
        return self.fc(torch.cat(parts, dim=1))


class TruthsMLP(nn.Module):
    """A digits MLP through comparisons of computed data and selections by them:
    masked_fill(h < 0, -0.5), torch.where(h > 0.1, log(h), 0) (whose unchosen branch is NaN
    or -inf), an And of >= and <=, torch.sign, torch.isnan of sqrt(h), h == its row's
    maximum cast to float, torch.triu and torch.round (ONNX Less, Greater, GreaterOrEqual,
    LessOrEqual, And, Equal, Cast, Sign, IsNaN, Where, Trilu and Round of computed data)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc = nn.Linear(8 * 32, 10)

    def forward(self, x):
        h = self.fc1(torch.flatten(x, 1))
        parts = [h.masked_fill(h < 0, -0.5),
                 torch.where(h > 0.1, torch.log(h), torch.zeros_like(h)),
                 torch.where((h >= 0) & (h <= 0.5), h, -h),
                 torch.sign(h) * h,
                 torch.where(torch.isnan(torch.sqrt(h)), torch.zeros_like(h), h),
                 (h == h.amax(dim=1, keepdim=True)).float() * h,
                 torch.triu(h.reshape(-1, 4, 8), diagonal=1).reshape(-1, 32),
                 torch.round(h * 4.0)]
        return self.fc(torch.cat(parts, dim=1))


class EinsumMLP(nn.Module):
    """A digits MLP through torch.einsum beyond a product of two operands: a chain of three
    ("bi,ij,jk->bk"), one operand transposed and summed ("bjk->bkj", "bkj->bk"), an implicit
    output ("bi,ij": ONNX's labels used once, sorted) and a label summed over one operand
    alone ("bi,bj->bj"), diagonals: the image's ("bcii->bci") and the trace of computed
    4x4 blocks ("bii->b")."""

    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(64, 16) * 0.2)
        self.w2 = nn.Parameter(torch.randn(16, 32) * 0.2)
        self.w3 = nn.Parameter(torch.randn(32, 4, 8) * 0.2)
        self.fc = nn.Linear(8 + 16 + 8 + 8 + 1, 10)

    def forward(self, x):
        d = torch.einsum("bcii->bci", x).flatten(1)
        x = torch.flatten(x, 1)
        h = torch.relu(torch.einsum("bi,ij,jk->bk", x, self.w1, self.w2))
        g = torch.einsum("bi,ijk->bjk", h, self.w3)
        s = torch.einsum("bkj->bk", torch.einsum("bjk->bkj", g))
        u = torch.einsum("bi,ij", x, self.w1)
        v = torch.einsum("bi,bj->bj", torch.tanh(u), s)
        t = torch.einsum("bii->b", torch.tanh(u).reshape(-1, 4, 4)).unsqueeze(1)
        return self.fc(torch.cat([s, u, v, d, t], dim=1))


def AdaptiveVideoPool(model):
    """A torchvision video classifier whose final average pool (S3D's fixed 2x7x7, for 16
    frames of 224x224) is adaptive, so that small clips reach its classifier."""
    model.avgpool = nn.AdaptiveAvgPool3d(1)
    return model


@torch.jit.script
def _refine(x: torch.Tensor, steps: int) -> torch.Tensor:
    for _ in range(steps):
        x = x + 0.5 * torch.tanh(x)
    return x


@torch.jit.script
def _block_sums(x: torch.Tensor, blocks: int) -> List[torch.Tensor]:
    parts: List[torch.Tensor] = []
    for i in range(blocks):
        parts.append(x[:, i * 4:(i + 1) * 4].sum(1))
    return parts


class LoopMLP(nn.Module):
    """A digits MLP through scripted loops, which the TorchScript exporter writes as ONNX Loop:
    a value carried through 3 steps, and a list built by append (a sequence: SequenceEmpty,
    SequenceInsert) then concatenated and stacked (ConcatFromSequence)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32 + 8 + 8, 10)

    def forward(self, x):
        h = _refine(torch.relu(self.fc1(torch.flatten(x, 1))), 3)
        parts = _block_sums(h, 8)
        stacked = torch.stack(parts, 1)
        return self.fc2(torch.cat([h, stacked, torch.tanh(stacked)], 1))


class CeilPoolCNN(nn.Module):
    """Ceil-mode pools whose last window would start in the end padding (PyTorch drops it;
    ONNX's shape inference before opset 22 keeps it): on 7x7 features MaxPool2d and
    AvgPool2d (count_include_pad=False) of kernel 2, stride 2, padding 1 give 4x4; on the
    8x8 image a MaxPool2d of kernel 1, stride 3 gives 3x3 (stride over kernel); a ceil-mode
    MaxPool2d(3, 2) without padding (no window dropped) 3x3. (torch 1.13 exports AvgPool2d
    with count_include_pad=True and padding as Pad, then an AveragePool that keeps the
    window: a graph whose shapes disagree with the module's.)"""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 2)
        self.fc = nn.Linear(4 * (16 * 2 + 9) + 9, 10)

    def forward(self, x):
        a = torch.relu(self.conv(x))
        pools = [F.max_pool2d(a, 2, 2, padding=1, ceil_mode=True),
                 F.avg_pool2d(a, 2, 2, padding=1, ceil_mode=True, count_include_pad=False),
                 F.max_pool2d(a, 3, 2, ceil_mode=True),
                 F.max_pool2d(x, 1, 3, ceil_mode=True)]
        return self.fc(torch.cat([torch.flatten(p, 1) for p in pools], dim=1))


class RoutingMLP(nn.Module):
    """A digits MLP whose hidden features go to 4 experts weighted by a router's top 2, the
    weights written four ways on TopK's indices (integers computed at run time):
    zeros.scatter(1, i, v), one_hot(i, 4) times v, scatter_add into the router's own
    probabilities, and a scatter of computed data into computed data (ONNX OneHot and
    ScatterElements at run-time indices); then scatter and scatter_add at constant indices."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.gate = nn.Linear(32, 4)
        self.experts = nn.Linear(32, 4 * 16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        h = torch.relu(self.fc1(torch.flatten(x, 1)))
        g = torch.softmax(self.gate(h), dim=-1)
        v, i = g.topk(2, dim=-1)
        w = (torch.zeros_like(g).scatter(1, i, v)
             + (F.one_hot(i, 4).float() * v.unsqueeze(-1)).sum(1)
             + (g * 0.1).scatter_add(1, i, v * 0.5)
             + g.scatter(1, i[:, :1], h[:, :1]))
        # At constant indices: the last update written to a place wins; scatter_add sums
        # (without two indices to one place: PyTorch 1.13 exports it at opset 15 as a
        # ScatterElements without reduction, which keeps one of them).
        fixed = torch.tensor([[3, 0, 3]]).expand(x.shape[0], 3)
        w = w + g.scatter(1, fixed, h[:, 4:7]) + g.scatter_add(1, fixed[:, :2], h[:, 7:9])
        e = self.experts(h).reshape(-1, 4, 16)
        return self.fc((w.unsqueeze(-1) * e).sum(1))


class StdNormMLP(nn.Module):
    """A digits MLP that standardizes its hidden features with torch.std's default, unbiased
    form: (h - mean) / (std + 0.1) over each sample's features, whose count N - 1 the
    TorchScript exporter computes as ReduceProd of the input's shape (evaluated at import)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        h = self.fc1(torch.flatten(x, 1))
        h = (h - h.mean(1, keepdim=True)) / (h.std(1, keepdim=True) + 0.1)
        return self.fc(torch.relu(h))


class DetachMLP(nn.Module):
    """A digits MLP whose forward detaches two values, as quantization-aware and VQ-VAE-style
    models do: a straight-through estimator h + (relu(h) - h).detach() (forward relu(h), gradient
    the identity's) and a division by a detached norm. torch.export's exporter writes each detach
    as an Identity whose FX node is aten.detach (mgs stops the gradient there); the TorchScript
    exporter drops it (the graph then computes the same values, and mgs cannot know)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        h = self.fc1(torch.flatten(x, 1))
        h = h + (torch.relu(h) - h).detach()
        h = self.fc2(h)
        h = h / (h.norm(dim=1, keepdim=True).detach() + 1)
        return self.fc(h)


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


def shufflenet_small():
    """torchvision's ShuffleNetV2 at x0.5 widths with two blocks a stage, ten classes."""
    import torchvision.models as tvm
    return tvm.ShuffleNetV2([2, 2, 2], [24, 48, 96, 192, 1024], num_classes=10)
