"""The "more ..." rows of probe_zoo.py: what users train beyond torchvision's classifiers and
the transformer and recurrent blocks, written here as small PyTorch modules (added 2026-12-07):
a diffusion-style U-Net (GroupNorm, SiLU, skips, a sin-cos embedding computed in forward),
ESPCN's pixel shuffle, a cosine classifier (F.normalize), a Conformer block, a Perceiver's
cross-attention from learned latents, a TCN (weight-normed dilated causal convolutions), a
spatial transformer (F.affine_grid + F.grid_sample: PyTorch 2.x's torch.export only), PointNet
with its T-Net (torch.eye), DGCNN's edge convolution over k nearest neighbours (TopK of
computed distances, a gather at them) and an MLP-Mixer."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def sincos(h, w, dim):
    """ViT's 2-D sin-cos position embedding of an h x w grid (h * w, dim), computed in forward."""
    gy, gx = torch.meshgrid(torch.arange(h, dtype=torch.float32),
                            torch.arange(w, dtype=torch.float32), indexing="ij")
    omega = 1.0 / (10000 ** (torch.arange(dim // 4, dtype=torch.float32) / (dim / 4)))
    y = gy.flatten()[:, None] * omega[None]
    x = gx.flatten()[:, None] * omega[None]
    return torch.cat([x.sin(), x.cos(), y.sin(), y.cos()], 1)


class UNet(nn.Module):
    """A diffusion-style U-Net: GroupNorm, SiLU, a strided down and a nearest up, a skip
    concatenated, a sin-cos embedding added in the middle; scores per pixel (5 classes)."""

    def __init__(self):
        super().__init__()
        self.inc = nn.Conv2d(3, 16, 3, padding=1)
        self.down = nn.Sequential(nn.GroupNorm(4, 16), nn.SiLU(),
                                  nn.Conv2d(16, 32, 3, stride=2, padding=1))
        self.mid = nn.Sequential(nn.GroupNorm(8, 32), nn.SiLU(), nn.Conv2d(32, 32, 3, padding=1))
        self.up = nn.Conv2d(32, 16, 3, padding=1)
        self.out = nn.Sequential(nn.GroupNorm(4, 32), nn.SiLU(), nn.Conv2d(32, 5, 1))
        self.emb = nn.Linear(32, 32)

    def forward(self, x):
        h0 = self.inc(x)
        h = self.down(h0)
        pe = self.emb(sincos(h.shape[2], h.shape[3], 32))
        h = self.mid(h + pe.t().reshape(1, 32, h.shape[2], h.shape[3]))
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        return self.out(torch.cat([self.up(h), h0], 1))


class ESPCN(nn.Module):
    """ESPCN's sub-pixel convolution (pixel_shuffle), then pixel_unshuffle into a classifier."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 5, padding=2)
        self.c2 = nn.Conv2d(16, 3 * 4, 3, padding=1)
        self.fc = nn.Linear(3 * 64 * 64, 10)

    def forward(self, x):
        y = F.pixel_shuffle(torch.tanh(self.c2(torch.tanh(self.c1(x)))), 2)
        return self.fc(F.pixel_unshuffle(y, 2).flatten(1))


class Cosine(nn.Module):
    """A cosine classifier (metric learning's): normalized features against normalized class
    weights, scaled."""

    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 64), nn.ReLU(),
                               nn.Linear(64, 32))
        self.w = nn.Parameter(torch.randn(10, 32))

    def forward(self, x):
        return 10.0 * F.normalize(self.f(x), dim=1) @ F.normalize(self.w, dim=1).t()


class Conformer(nn.Module):
    """A Conformer block over (T, F) = (32, 16) features: half-step feed-forward, self-attention,
    the convolution module (pointwise, GLU, depthwise, BatchNorm, SiLU)."""

    def __init__(self, d=32):
        super().__init__()
        self.inp = nn.Linear(16, d)
        self.ff = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(),
                                nn.Linear(4 * d, d))
        self.ln = nn.LayerNorm(d)
        self.att = nn.MultiheadAttention(d, 4, batch_first=True)
        self.cln = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, 7, padding=3, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        x = self.inp(x)
        x = x + 0.5 * self.ff(x)
        h = self.ln(x)
        x = x + self.att(h, h, h, need_weights=False)[0]
        c = F.glu(self.pw1(self.cln(x).transpose(1, 2)), dim=1)
        x = x + self.pw2(F.silu(self.bn(self.dw(c)))).transpose(1, 2)
        return self.head(x.mean(1))


class Perceiver(nn.Module):
    """A Perceiver: learned latents (expanded to the batch) cross-attend to the (32, 16)
    inputs, then self-attend."""

    def __init__(self, d=32):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(8, d))
        self.inp = nn.Linear(16, d)
        self.cross = nn.MultiheadAttention(d, 4, batch_first=True)
        self.block = nn.TransformerEncoderLayer(d, 4, 64, dropout=0.0, batch_first=True)
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        kv = self.inp(x)
        q = self.latents.unsqueeze(0).expand(x.shape[0], -1, -1)
        z = self.cross(q, kv, kv, need_weights=False)[0] + q
        return self.head(self.block(z).mean(1))


class TCN(nn.Module):
    """A temporal convolutional network over (C, T) = (16, 32): weight-normed dilated
    convolutions made causal by slicing off their right padding, residual."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(
            [nn.utils.weight_norm(nn.Conv1d(16, 16, 3, dilation=d, padding=2 * d))
             for d in (1, 2, 4)])
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        for conv in self.convs:
            x = F.relu(conv(x)[:, :, :x.shape[2]]) + x
        return self.head(x[:, :, -1])


class STN(nn.Module):
    """A spatial transformer network (PyTorch's tutorial's): F.affine_grid of a predicted theta
    (initially the identity), F.grid_sample, a small CNN."""

    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 32), nn.ReLU(),
                                 nn.Linear(32, 6))
        nn.init.zeros_(self.loc[3].weight)
        self.loc[3].bias.data = torch.tensor([1.0, 0, 0, 0, 1, 0])
        self.cls = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4),
                                 nn.Flatten(), nn.Linear(128, 10))

    def forward(self, x):
        grid = F.affine_grid(self.loc(x).view(-1, 2, 3), x.size(), align_corners=False)
        return self.cls(F.grid_sample(x, grid, align_corners=False))


class PointNet(nn.Module):
    """PointNet over (3, 64) points: a T-Net's 3x3 transform (plus torch.eye) applied by bmm,
    shared MLPs as 1x1 convolutions, max pooling over the points."""

    def __init__(self):
        super().__init__()
        self.t = nn.Sequential(nn.Conv1d(3, 32, 1), nn.BatchNorm1d(32), nn.ReLU())
        self.tfc = nn.Linear(32, 9)
        self.f = nn.Sequential(nn.Conv1d(3, 32, 1), nn.BatchNorm1d(32), nn.ReLU(),
                               nn.Conv1d(32, 64, 1))
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        m = self.tfc(torch.max(self.t(x), 2)[0]).view(-1, 3, 3) + torch.eye(3)
        return self.head(torch.max(self.f(torch.bmm(m, x)), 2)[0])


class DGCNN(nn.Module):
    """DGCNN's edge convolution over (3, 32) points: each point's k nearest neighbours (TopK of
    the pairwise distances), gathered, as (neighbour - centre, centre) features."""

    def __init__(self, k=4):
        super().__init__()
        self.k = k
        self.edge = nn.Sequential(nn.Conv2d(6, 32, 1), nn.BatchNorm2d(32), nn.LeakyReLU(0.2))
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        b, c, n = x.shape
        square = (x ** 2).sum(1, keepdim=True)
        dist = -2 * x.transpose(1, 2) @ x + square + square.transpose(1, 2)
        idx = (-dist).topk(self.k, dim=-1)[1] + torch.arange(b).view(-1, 1, 1) * n
        points = x.transpose(1, 2).reshape(b * n, c)
        neighbours = points[idx.view(-1)].view(b, n, self.k, c)
        centre = x.transpose(1, 2).unsqueeze(2).expand(-1, -1, self.k, -1)
        f = torch.cat([neighbours - centre, centre], 3).permute(0, 3, 1, 2)
        return self.head(self.edge(f).max(-1)[0].max(-1)[0])


class Mixer(nn.Module):
    """An MLP-Mixer block over 4x4 patches of a 32x32 image: token mixing (on the transposed
    patches) and channel mixing, each after a LayerNorm, GELU MLPs."""

    def __init__(self, d=32):
        super().__init__()
        self.patch = nn.Conv2d(3, d, 4, 4)
        self.ln1 = nn.LayerNorm(d)
        self.tokens = nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 64))
        self.ln2 = nn.LayerNorm(d)
        self.channels = nn.Sequential(nn.Linear(d, 64), nn.GELU(), nn.Linear(64, d))
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = x + self.tokens(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        x = x + self.channels(self.ln2(x))
        return self.head(x.mean(1))


def builders():
    """name -> (constructor, sample shape, kind, batch, samples, lr) as probe_zoo's rows, each
    also as "NAME (torch.export)" (PyTorch 2.x's exporter; the STN only so: torch 1.13's
    TorchScript exporter has no affine_grid)."""
    img = (3, 32, 32)
    rows = {
        "more unet": (UNet, img, "segment", 8, 32, 0.05),
        "more espcn": (ESPCN, img, "image", 8, 32, 0.01),
        "more cosine": (Cosine, img, "image", 16, 64, 0.05),
        "more conformer": (Conformer, (32, 16), "image", 16, 64, 0.05),
        "more perceiver": (Perceiver, (32, 16), "image", 16, 64, 0.05),
        "more tcn": (TCN, (16, 32), "image", 16, 64, 0.05),
        "more pointnet": (PointNet, (3, 64), "image", 16, 64, 0.05),
        "more dgcnn": (DGCNN, (3, 32), "image", 16, 64, 0.05),
        "more mixer": (Mixer, img, "image", 16, 64, 0.05),
    }
    exported = {f"{name} (torch.export)": spec for name, spec in rows.items()}
    return {**rows, **exported, "more stn (torch.export)": (STN, img, "image", 16, 64, 0.01)}
