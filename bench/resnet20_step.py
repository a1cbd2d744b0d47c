#!/usr/bin/python3
"""ResNet-20 (CIFAR shape, batch 32) training-step time: mgs against PyTorch
CPU with the same number of threads, in one run.

    bench/resnet20_step.py [BUILD_DIR] [--threads T] [--iters N]
        [--python /usr/bin/python3,VENV/bin/python]

mgs: mgsc compiles the torch export into a training executable, which trains
on N batches of synthetic CIFAR-10 data (the step time is the executable's own
samples/s over the iterations after the first progress interval, which
includes oneDNN's primitive creation). PyTorch: the same model, SGD with
momentum, the same batches, timed over N steps after 3 warm-up steps, under
each interpreter of --python (one PyTorch version each; by default Debian's
torch 1.13 and the PyTorch 2.x venv that scripts/setup.sh --bench makes, when
there is one; each row is named by its torch version). Every process's peak
RSS is measured too. Prints the figures and the ratios mgs/PyTorch (goal for
time: <= 1.0).
"""
import argparse
import os
import re
import resource
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import benchlib  # noqa: E402


def torch_child(threads, iters, data_path):
    """Runs in a child process: PyTorch's step time and peak RSS."""
    import torch
    import export_models
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model, _ = export_models.build("resnet20")
    raw = np.fromfile(data_path, np.uint8).reshape(-1, 3073)
    xs = torch.tensor(raw[:, 1:].astype(np.float32) / 255.0).reshape(-1, 3, 32, 32)
    ys = torch.tensor(raw[:, 0].astype(np.int64))
    batches = [(xs[i:i + 32], ys[i:i + 32]) for i in range(0, len(ys) - 31, 32)]
    ms, _ = benchlib.torch_sgd_step_ms(model, batches, iters)
    benchlib.print_torch_side(f"{ms:.3f}", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--python", default=benchlib.default_pythons(),
                    help="interpreters to run the PyTorch side under, comma-separated")
    ap.add_argument("--torch-child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_child:
        torch_child(args.threads, args.iters, args.torch_child[1])
        return

    work = os.path.join(args.build, "bench")
    os.makedirs(work, exist_ok=True)
    model = os.path.join(args.build, "test", "models", "resnet20-opset15.onnx")
    if not os.path.exists(model):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "export_models.py"),
                        os.path.dirname(model), "resnet20:15"], check=True)
    exe = os.path.join(work, "train_resnet20")
    subprocess.run([os.path.join(args.build, "bin", "mgsc"), model, "--batch-size", "32",
                    "-o", exe, "--quiet"], check=True)

    # Synthetic CIFAR-10 records: 1 label byte + 3072 pixel bytes.
    rng = np.random.default_rng(0)
    n = 32 * (args.iters + 8)
    records = np.concatenate([rng.integers(0, 10, (n, 1)), rng.integers(0, 256, (n, 3072))], 1)
    data = os.path.join(work, "synthetic_cifar.bin")
    records.astype(np.uint8).tofile(data)

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    every = 8
    run = subprocess.run(["/usr/bin/time", "-f", "maxrss_kb %M", exe, "--data", data,
                          "--data-format", "cifar10", "--epochs", "1", "--holdout", "0",
                          "--lr", "0.01", "--progress-every", str(every)],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, check=True)
    rates = [float(m) for m in re.findall(r"([0-9.]+) samples/s", run.stdout)]
    mgs_rss = int(re.search(r"maxrss_kb (\d+)", run.stderr).group(1))
    # The first interval includes primitive creation: use the later ones.
    steady = rates[1:] if len(rates) > 1 else rates
    mgs_ms = 32 / (sum(steady) / len(steady)) * 1000

    torch_rows = []
    for python in [p for p in args.python.split(",") if p]:
        (torch_ms, torch_rss), name = benchlib.torch_side(
            python, [os.path.abspath(__file__), args.build, "--threads", str(args.threads),
                     "--iters", str(args.iters), "--torch-child", "x", data], env=env)
        torch_rows.append((name, float(torch_ms), int(torch_rss)))

    print(f"ResNet-20 training step, batch 32, {args.threads} threads, {args.iters} steps each:")
    print(f"  {'mgs':<24} {mgs_ms:8.2f} ms/step   peak RSS {mgs_rss / 1024:7.1f} MiB")
    for name, torch_ms, torch_rss in torch_rows:
        print(f"  {name:<24} {torch_ms:8.2f} ms/step   peak RSS {torch_rss / 1024:7.1f} MiB"
              f"   mgs/that: time {mgs_ms / torch_ms:.3f}, peak RSS {mgs_rss / torch_rss:.3f}")
    print("  goal for time: mgs/PyTorch <= 1.0")


if __name__ == "__main__":
    main()
