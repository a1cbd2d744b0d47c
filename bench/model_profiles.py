#!/usr/bin/python3
"""Planner profiles shaped like ResNet-50, VGG-16 and GPT-2 small (and GPT-2 large and XL),
from the models' own tensor sizes, for mgs-plan's what-if sweeps (bench/collectives_scaling.py,
test/mgs-plan/scaling.test) and the planner's speed (bench/planner_bench.sh):

    bench/model_profiles.py MODEL GBITS > PROFILE.json
        MODEL: resnet50 | vgg16 | gpt2 | gpt2-large | gpt2-xl
    bench/model_profiles.py --all DIR      the 9 profiles of the first three, DIR/MODEL-GGbit.json

Tensors: torchvision's resnet50 and vgg16 and Hugging Face's GPT-2 (tied LM head),
in forward order with their names; the script checks the totals (25,557,032;
138,357,544; 124,439,808; 774,030,080; 1,557,611,200 parameters).

Compute times (one worker, a V100-class GPU): each tensor's backward is its share of
the backward FLOPs (2 x forward: the input and the weight gradient, 4 x MACs) at
10 TFLOP/s sustained plus a 10 us launch; batch-norm and layer-norm weights are
memory-bound (6 passes over their activations at 800 GB/s), biases one launch.
ResNet-50 and VGG-16: batch 32 at 224 x 224. GPT-2: batch 8 x 1024 tokens; the
attention core (QK^T, softmax, AV) is charged to the block's c_attn.weight, the
tied LM head's matmuls to ln_f.weight (the first gradient of backprop), the
embedding's scatter to wte.weight (the last). Top-k: 20 us + 2.19e-11 s x n log2 n
(the OMGS paper's P102-100 curve, 10x faster: a current GPU's radix select).

Network: GBITS Gbit/s links with a per-message start-up a_p of 50, 20 and 5 us at
1, 10 and 100 Gbit/s. The collectives are "measured" on 16 workers as rings:
allgather alpha = 15 a_p, beta = 15/16 / bandwidth; allreduce alpha = 30 a_p,
beta = 30/16 / bandwidth. The profiles have no gtopk or sparse_allreduce keys:
the planner derives their messages' a_p and 1 / bandwidth from the allgather.
"""
import json
import math
import os
import sys

FLOPS = 1e13
MEMBW = 8e11
LAUNCH = 1e-5
LATENCY = {1: 50e-6, 10: 20e-6, 100: 5e-6}
WORKERS = 16
DENSITY = 0.001


def resnet50():
    layers, batch = [], 32

    def conv(name, cin, cout, k, hw):
        macs = k * k * cin * cout * hw * hw * batch
        layers.append((name, k * k * cin * cout, LAUNCH + 4.0 * macs / FLOPS))

    def bn(name, c, hw):
        act = c * hw * hw * batch * 4
        layers.append((name + ".weight", c, LAUNCH + 6 * act / MEMBW))
        layers.append((name + ".bias", c, LAUNCH))

    conv("conv1.weight", 3, 64, 7, 112)
    bn("bn1", 64, 112)
    cin, hw = 64, 56
    for stage, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2),
                                                     (512, 3, 2)]):
        for b in range(blocks):
            s = stride if b == 0 else 1
            out_hw = hw // s
            p = f"layer{stage + 1}.{b}"
            conv(p + ".conv1.weight", cin, width, 1, hw)
            bn(p + ".bn1", width, hw)
            conv(p + ".conv2.weight", width, width, 3, out_hw)
            bn(p + ".bn2", width, out_hw)
            conv(p + ".conv3.weight", width, width * 4, 1, out_hw)
            bn(p + ".bn3", width * 4, out_hw)
            if b == 0:
                conv(p + ".downsample.0.weight", cin, width * 4, 1, out_hw)
                bn(p + ".downsample.1", width * 4, out_hw)
            cin, hw = width * 4, out_hw
    layers.append(("fc.weight", 2048 * 1000, LAUNCH + 4.0 * 2048 * 1000 * batch / FLOPS))
    layers.append(("fc.bias", 1000, LAUNCH))
    return layers, 25557032, "ResNet-50 (torchvision), batch 32 at 224x224"


def vgg16():
    layers, batch = [], 32
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512,
           "M"]
    cin, hw, index = 3, 224, 0
    for v in cfg:
        if v == "M":
            hw //= 2
            index += 1
            continue
        macs = 9 * cin * v * hw * hw * batch
        layers.append((f"features.{index}.weight", 9 * cin * v, LAUNCH + 4.0 * macs / FLOPS))
        layers.append((f"features.{index}.bias", v, LAUNCH))
        cin, index = v, index + 2  # conv, relu
    for index, (fin, fout) in zip([0, 3, 6], [(25088, 4096), (4096, 4096), (4096, 1000)]):
        layers.append((f"classifier.{index}.weight", fin * fout,
                       LAUNCH + 4.0 * fin * fout * batch / FLOPS))
        layers.append((f"classifier.{index}.bias", fout, LAUNCH))
    return layers, 138357544, "VGG-16 (torchvision), batch 32 at 224x224"


def gpt2(blocks=12, d=768, total=124439808, name="GPT-2 small"):
    layers, tokens, seq, vocab = [], 8 * 1024, 1024, 50257
    norm = LAUNCH + 6 * tokens * d * 4 / MEMBW

    def linear(name, fin, fout, extra=0.0):
        layers.append((name + ".weight", fin * fout,
                       LAUNCH + 4.0 * fin * fout * tokens / FLOPS + extra))
        layers.append((name + ".bias", fout, LAUNCH))

    layers.append(("wte.weight", vocab * d, LAUNCH + 2 * tokens * d * 4 / MEMBW))
    layers.append(("wpe.weight", seq * d, LAUNCH + 2 * tokens * d * 4 / MEMBW))
    attention = 8.0 * seq * seq * d * (tokens // seq) / FLOPS  # backward of QK^T and AV
    for i in range(blocks):
        p = f"h.{i}"
        layers += [(p + ".ln_1.weight", d, norm), (p + ".ln_1.bias", d, LAUNCH)]
        linear(p + ".attn.c_attn", d, 3 * d, attention)
        linear(p + ".attn.c_proj", d, d)
        layers += [(p + ".ln_2.weight", d, norm), (p + ".ln_2.bias", d, LAUNCH)]
        linear(p + ".mlp.c_fc", d, 4 * d)
        linear(p + ".mlp.c_proj", 4 * d, d)
    lm_head = 4.0 * vocab * d * tokens / FLOPS
    layers += [("ln_f.weight", d, norm + lm_head), ("ln_f.bias", d, LAUNCH)]
    return layers, total, f"{name} (Hugging Face, tied LM head), batch 8 x 1024 tokens"


MODELS = {"resnet50": resnet50, "vgg16": vgg16, "gpt2": gpt2}
# Larger shapes, not in --all's set: GPT-2 large and XL (436 and 580 tensors, 36 and 48
# identical blocks), the planner's hardest real-model profiles (bench/planner_bench.sh).
SHAPES = dict(MODELS, **{
    "gpt2-large": lambda: gpt2(36, 1280, 774030080, "GPT-2 large"),
    "gpt2-xl": lambda: gpt2(48, 1600, 1557611200, "GPT-2 XL"),
})


def profile(model, gbits):
    layers, total, what = SHAPES[model]()
    assert sum(n for _, n, _ in layers) == total, (model, sum(n for _, n, _ in layers))
    per_byte = 8.0 / (gbits * 1e9)
    a_p, ring = LATENCY[gbits], WORKERS - 1
    points, n = [], 16
    while n <= 1 << 28:
        points.append([n, round(2e-5 + 2.19e-11 * n * math.log2(n), 12)])
        n *= 4
    return {
        "source": f"bench/model_profiles.py {model} {gbits}: {what}; {len(layers)} tensors; "
                  f"{gbits} Gbit/s links, {a_p * 1e6:g} us a message, rings of {WORKERS}",
        "workers": WORKERS,
        "density": DENSITY,
        "topk": {"points": points},
        "allgather": {"alpha": ring * a_p, "beta": ring / WORKERS * per_byte},
        "allreduce": {"alpha": 2 * ring * a_p, "beta": 2 * ring / WORKERS * per_byte},
        "layers": [{"name": name, "numel": numel, "backward": round(t, 12)}
                   for name, numel, t in layers],
    }


def main(argv):
    if len(argv) == 3 and argv[1] == "--all":
        os.makedirs(argv[2], exist_ok=True)
        for model in MODELS:
            for gbits in LATENCY:
                with open(os.path.join(argv[2], f"{model}-{gbits}Gbit.json"), "w") as f:
                    json.dump(profile(model, gbits), f, indent=1)
                    f.write("\n")
        return
    if len(argv) != 3 or argv[1] not in SHAPES or argv[2] not in map(str, LATENCY):
        sys.exit(f"usage: model_profiles.py {{{'|'.join(SHAPES)}}} {{1|10|100}} | --all DIR")
    json.dump(profile(argv[1], int(argv[2])), sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
