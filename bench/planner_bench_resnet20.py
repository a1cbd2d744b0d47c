#!/usr/bin/env python3
# Writes test/mgs-plan/Inputs/resnet20.json, the ResNet-20-shaped profile of
# the planner tests and bench/planner_bench.sh:
#   bench/planner_bench_resnet20.py > test/mgs-plan/Inputs/resnet20.json
# Optional arguments (defaults): batch (128), collective start-up in seconds
# (0.003), sustained FLOP/s of the backward convolutions (1.5e12), seconds per
# byte (1.7e-8: 1 Gbit/s, the OMGS paper's fit for 16 workers).
import json, math, sys
# ResNet-20 (scripts/export_models.py): conv1, bn1, 3 stages x 3 BasicBlocks
# (conv-bn-conv-bn, 1x1 conv + bn shortcut where the shape changes), fc.
batch = int(sys.argv[1]) if len(sys.argv) > 1 else 128
alpha = float(sys.argv[2]) if len(sys.argv) > 2 else 0.003
flops = float(sys.argv[3]) if len(sys.argv) > 3 else 1.5e12
membw = 3e11        # bytes/s for batch-norm backward
launch = 2e-5
beta = float(sys.argv[4]) if len(sys.argv) > 4 else 1.7e-8       # per-kernel overhead
layers = []
def conv(name, cin, cout, k, hw):
    macs = k * k * cin * cout * hw * hw * batch
    layers.append((name, k * k * cin * cout, launch + 4.0 * macs / flops))
def bn(name, c, hw):
    act = c * hw * hw * batch * 4
    layers.append((name + ".weight", c, launch + 6 * act / membw))
    layers.append((name + ".bias", c, launch))
conv("conv1.weight", 3, 16, 3, 32); bn("bn1", 16, 32)
cin, hw, idx = 16, 32, 0
for cout, stride in [(16, 1), (32, 2), (64, 2)]:
    for b in range(3):
        s = stride if b == 0 else 1
        out_hw = hw // s
        p = f"layers.{idx}"
        conv(p + ".conv1.weight", cin, cout, 3, out_hw); bn(p + ".bn1", cout, out_hw)
        conv(p + ".conv2.weight", cout, cout, 3, out_hw); bn(p + ".bn2", cout, out_hw)
        if s != 1 or cin != cout:
            conv(p + ".shortcut.0.weight", cin, cout, 1, out_hw); bn(p + ".shortcut.1", cout, out_hw)
        cin, hw, idx = cout, out_hw, idx + 1
layers.append(("fc.weight", 64 * 10, launch + 4.0 * 64 * 10 * batch / flops))
layers.append(("fc.bias", 10, launch))
assert len(layers) == 65, len(layers)
s = 2.18896957e-10  # the OMGS paper's top-k model on a P102-100: s * n * log2(n)
points = [[n, round(launch + s * n * math.log2(n), 9)] for n in [2 ** e for e in range(4, 21, 2)]]
prof = {
  "source": "synthetic ResNet-20 (65 tensors, batch %d): backward from FLOPs at 1.5 TFLOP/s and batch-norm traffic at 300 GB/s; top-k from the OMGS paper's P102-100 model; 16 workers on 1 Gbit/s Ethernet (the paper's 1.7e-8 s/byte) with a 3 ms collective start-up" % batch,
  "workers": 16, "density": 0.001,
  "topk": {"points": points},
  "allgather": {"alpha": alpha, "beta": beta},
  "allreduce": {"alpha": alpha, "beta": beta * 0.9},
  "layers": [{"name": n, "numel": k, "backward": round(t, 9)} for n, k, t in layers],
}
print(json.dumps(prof, indent=1))
