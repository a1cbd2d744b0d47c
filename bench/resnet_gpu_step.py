#!/usr/bin/python3
"""ResNet training-step time on one GPU: an mgsc --target=cuda executable
against PyTorch on the same GPU, in one run: ResNet-20 (CIFAR shape) at batch
32, 128 and 512, or ResNet-50 (ImageNet shape, 224 x 224) at batch 32 and 64.

    bench/resnet_gpu_step.py [--model resnet20|resnet50] [--build DIR]
                             [--exe BATCH=EXE ...] [--iters N]

A batch without --exe is compiled by DIR's mgsc. The executables' weights
need not be trained (bench/model_data.py --weights makes them).

mgs: the executable trains on N batches of synthetic data (CIFAR-10's binary
format for ResNet-20, .npy for ResNet-50); its step
time is the executable's own samples/s over the iterations after the first
progress interval (which includes cuDNN's algorithm search). Each step copies
the batch to the GPU and the loss back (the driver prints it), so PyTorch's
loop reads loss.item() every step too. PyTorch: the same model
(scripts/export_models.py), SGD with momentum, the same batches on the GPU,
timed over the same steps (N at batch 32, as many samples at larger batches,
at least 15 steps) after 5 warm-up steps, fp32 without TF32 (as mgs), with
cudnn.benchmark (cuDNN's algorithms measured); mgs runs four times, choosing
by cuDNN's heuristics, with MGSRT_CUDNN_FIND=1 by measuring them too, so with
its step captured as a CUDA graph and replayed (--cuda-graph), and so with
every FP32 algorithm cuDNN offers allowed (MGSRT_CUDNN_ALGOS=any: Winograd,
FFT and non-deterministic ones, the set cudnn.benchmark chooses from; mgs's
default keeps to the accurate, deterministic ones).
Prints the figures and the ratios mgs/PyTorch (lower is better); with
--profile-batch B, also where each side's GPU time goes at batch B (mgs's
MGSRT_PROFILE table, torch.profiler's per-op table).
"""
import argparse
import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import benchlib  # noqa: E402


def torch_ms(name, batch, iters, xs, ys):
    import torch
    import export_models
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    model, _ = export_models.build(name)
    batches = [(xs[i:i + batch], ys[i:i + batch]) for i in range(0, len(ys) - batch + 1, batch)]
    return benchlib.torch_sgd_step_ms(model, batches, iters, warmup=5, device="cuda")[0]

def torch_profile(name, batch, xs, ys, steps=10):
    """PyTorch's GPU time per op over `steps` training steps (after warm-up),
    the ops that took the most first."""
    import torch
    import torch.nn.functional as F
    import export_models
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    model, _ = export_models.build(name)
    model = model.cuda().train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = xs[:batch].cuda(), ys[:batch].cuda()

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    averages = prof.key_averages()
    for key in ("self_device_time_total", "self_cuda_time_total"):
        try:
            return averages.table(sort_by=key, row_limit=15)
        except (AttributeError, KeyError, ValueError):
            continue
    return averages.table(row_limit=15)


def mgs_profile(exe, data, every):
    """mgs's time per kernel (MGSRT_PROFILE=1: the stream synchronized
    after each kernel, so each kernel's time is the GPU's)."""
    env = dict(os.environ, MGSRT_CUDNN_FIND="1", MGSRT_PROFILE="1")
    data_args = (["--data", data[0], "--labels", data[1]] if isinstance(data, tuple)
                 else ["--data", data, "--data-format", "cifar10"])
    run = subprocess.run([exe, *data_args, "--epochs", "1", "--holdout", "0", "--lr", "0.01",
                          "--progress-every", str(every)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, env=env)
    lines = run.stderr.splitlines()
    at = next((i for i, l in enumerate(lines) if l.startswith("mgsrt profile")), None)
    if run.returncode != 0 or at is None:
        return f"(no profile: exit {run.returncode})\n" + "\n".join(lines[-5:])
    return "\n".join(lines[at:at + 18])


def mgs_ms(exe, batch, data, every, find, graph=False, algos="accurate"):
    env = dict(os.environ, MGSRT_CUDNN_FIND="1" if find else "0", MGSRT_CUDNN_ALGOS=algos)
    if isinstance(data, tuple):  # .npy inputs and labels
        data_args = ["--data", data[0], "--labels", data[1]]
    else:
        data_args = ["--data", data, "--data-format", "cifar10"]
    run = subprocess.run([exe, *data_args, "--epochs", "1",
                          "--holdout", "0", "--lr", "0.01", "--progress-every", str(every),
                          *(["--cuda-graph"] if graph else [])],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, env=env)
    if run.returncode != 0:
        sys.exit(f"{exe} failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
    if graph and "--cuda-graph: " in run.stdout:  # it ran kernel by kernel: say why
        print("  " + next(l for l in run.stdout.splitlines() if l.startswith("--cuda-graph: ")))
    rates = [float(m) for m in re.findall(r"([0-9.]+) samples/s", run.stdout)]
    if not rates:
        sys.exit(f"{exe} printed no progress:\n{run.stdout[-2000:]}")
    steady = rates[1:] if len(rates) > 1 else rates
    return batch / (sum(steady) / len(steady)) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["resnet20", "resnet50"], default="resnet20")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--exe", action="append", default=[], metavar="BATCH=EXE",
                    help="the executable compiled for that batch size")
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--profile-batch", type=int, default=0, metavar="B",
                    help="then print mgs's time per kernel (MGSRT_PROFILE=1) and PyTorch's "
                    "per op (torch.profiler) at batch B")
    args = ap.parse_args()
    try:
        import torch
        if not torch.cuda.is_available():
            sys.exit("resnet_gpu_step: PyTorch sees no GPU")
    except ImportError:
        sys.exit("resnet_gpu_step: PyTorch is not installed")

    work = tempfile.mkdtemp()
    atexit.register(shutil.rmtree, work, True)  # ResNet-50's data: about 3 GB
    batches = (32, 128, 512) if args.model == "resnet20" else (32, 64)
    exes = {}
    for spec in args.exe:
        batch, sep, exe = spec.partition("=")
        if not sep or not batch.isdigit() or int(batch) not in batches:
            sys.exit(f"resnet_gpu_step: --exe {spec}: expected BATCH=EXE, BATCH one of "
                     f"{', '.join(map(str, batches))}")
        exes[int(batch)] = exe
    for batch in batches:
        if batch in exes:
            continue
        model = os.path.join(args.build, "test", "models", f"{args.model}-opset15.onnx")
        exes[batch] = os.path.join(work, f"{args.model}-b{batch}")
        subprocess.run([os.path.join(args.build, "bin", "mgsc"), model, "--batch-size",
                        str(batch), "--target=cuda", "-o", exes[batch], "--quiet"], check=True)
    steps = {b: max(args.iters * 32 // b, 15) for b in batches}

    rng = np.random.default_rng(0)
    n = max(b * (steps[b] + 10) for b in batches)
    labels = rng.integers(0, 10 if args.model == "resnet20" else 1000, n)
    if args.model == "resnet20":
        records = np.concatenate([labels[:, None], rng.integers(0, 256, (n, 3072))], 1)
        records = records.astype(np.uint8)
        xs = torch.tensor(records[:, 1:].astype(np.float32) / 255.0).reshape(-1, 3, 32, 32)
    else:
        images = rng.standard_normal((n, 3, 224, 224), dtype=np.float32)
        xs = torch.from_numpy(images)
    ys = torch.tensor(labels.astype(np.int64))

    print(f"{args.model} training step on {torch.cuda.get_device_name(0)}, fp32, PyTorch "
          f"{torch.__version__} (CUDA {torch.version.cuda}), "
          f"{args.iters} steps at batch 32, as many samples (at least 15 steps) above:")
    for batch in batches:
        iters = steps[batch]
        # The executable runs over exactly the iterations of one epoch.
        count = batch * (iters + 10)
        if args.model == "resnet20":
            data = os.path.join(work, f"data-b{batch}.bin")
            records[:count].tofile(data)
        else:
            data = (os.path.join(work, f"x-b{batch}.npy"), os.path.join(work, f"y-b{batch}.npy"))
            np.save(data[0], images[:count])
            np.save(data[1], labels[:count].astype(np.int64))
        every = max(iters // 6, 1)
        m = mgs_ms(exes[batch], batch, data, every, find=False)
        mf = mgs_ms(exes[batch], batch, data, every, find=True)
        mg = mgs_ms(exes[batch], batch, data, every, find=True, graph=True)
        ma = mgs_ms(exes[batch], batch, data, every, find=True, graph=True, algos="any")
        t = torch_ms(args.model, batch, iters, xs, ys)
        print(f"  batch {batch:3d}: mgs {m:7.3f} ms/step (cuDNN heuristics), {mf:7.3f} ms/step "
              f"(MGSRT_CUDNN_FIND=1), {mg:7.3f} ms/step (and --cuda-graph), {ma:7.3f} ms/step "
              f"(and MGSRT_CUDNN_ALGOS=any)   PyTorch {t:7.3f} ms/step   ratio mgs/PyTorch = "
              f"{m / t:.3f}, {mf / t:.3f}, {mg / t:.3f}, {ma / t:.3f}")
        if batch == args.profile_batch:
            print(f"  where the time goes at batch {batch}: mgs (MGSRT_CUDNN_FIND=1), per kernel:")
            print("    " + mgs_profile(exes[batch], data, every).replace("\n", "\n    "))
            try:
                table = torch_profile(args.model, batch, xs, ys)
            except Exception as e:  # the profiler is a diagnosis, not the benchmark
                table = f"(torch.profiler failed: {e})"
            print("  PyTorch, per op (self GPU time over 10 steps):")
            print("    " + table.replace("\n", "\n    "))


if __name__ == "__main__":
    main()
