#!/usr/bin/python3
"""Top-k sparsification: mgs's mgsrt_topk_sparsify against torch.topk(x.abs(), k)
with the same number of threads, in one run.

    bench/topk_bench.py [BUILD_DIR] [--n N] [--density D] [--threads T] [--reps R]
                        [--data normal|layered] [--python /usr/bin/python3,VENV/bin/python]

Defaults: ResNet-50's parameter count (n = 25,557,032), density 0.001, 2
threads, 11 repetitions (medians). mgs: the mgsrt_topk_bench executable
(runtime/bench/TopKBench.cpp, built into BUILD_DIR/bin) times the kernel on
grad ~ N(0, 1) and residual ~ N(0, 0.25) -- it also forms grad + residual and
writes the residual back (error feedback), which torch.topk does not. torch:
torch.topk(x.abs(), k) on x = torch.randn(n), torch.set_num_threads(T), in a
child process under each interpreter of --python (one PyTorch version each; by
default Debian's torch 1.13 and the PyTorch 2.x venv that scripts/setup.sh
--bench makes, when there is one; each row is named by its torch version).

Prints the times, the ratio torch / mgs for each torch (goal >= 20), and how close the
kernel is to the memory bound:
  - one read: a plain sum over the n floats (multiple accumulators, T threads),
    the bound the goal is stated against; fraction = t_sum / t_topk;
  - the interface's own bound: residual += grad (two reads and a write, the
    least traffic an in-place error-feedback top-k can do); fraction =
    t_add / t_topk.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import benchlib  # noqa: E402


def run_mgs(build, n, k, threads, reps, data):
    exe = os.path.join(build, "bin", "mgsrt_topk_bench")
    if not os.path.exists(exe):
        sys.exit(f"topk_bench.py: {exe} not found (ninja -C {build} mgsrt_topk_bench)")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run(
        [exe, "--n", str(n), "--k", str(k), "--threads", str(threads), "--reps", str(reps),
         "--data", data],
        check=True, capture_output=True, text=True, env=env).stdout
    fields = {}
    for line in out.splitlines():
        key, _, value = line.partition(" ")
        fields[key] = value
    return {key: float(fields[key]) for key in ("topk_ms", "topk_min_ms", "sum_ms", "add_ms")}


def run_torch(n, k, threads, reps):
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x = torch.randn(n)
    times, sums = [], []
    for r in range(reps + 1):  # the first run warms up
        t0 = time.perf_counter()
        torch.topk(x.abs(), k)
        t1 = time.perf_counter()
        x.sum()
        t2 = time.perf_counter()
        if r:
            times.append(t1 - t0)
            sums.append(t2 - t1)
    benchlib.print_torch_side(f"{statistics.median(times) * 1e3:.4f}",
                              f"{statistics.median(sums) * 1e3:.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=25557032)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--data", default="normal", choices=["normal", "layered"])
    ap.add_argument("--python", default=benchlib.default_pythons(),
                    help="interpreters to run the PyTorch side under, comma-separated")
    ap.add_argument("--torch-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    k = max(1, int(args.density * args.n))
    torch_reps = max(3, args.reps // 2)
    if args.torch_child:
        run_torch(args.n, k, args.threads, torch_reps)
        return

    mgs = run_mgs(args.build, args.n, k, args.threads, args.reps, args.data)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    torches = []
    for python in [p for p in args.python.split(",") if p]:
        (ms, sum_ms), name = benchlib.torch_side(
            python, [os.path.abspath(__file__), "--n", str(args.n), "--density",
                     str(args.density), "--threads", str(args.threads), "--reps",
                     str(args.reps), "--torch-child"], env=env)
        torches.append((name, float(ms), float(sum_ms)))

    print(f"n = {args.n}, k = {k} (density {args.density}), {args.threads} threads, "
          f"medians of {args.reps} runs ({args.data} data; torch: {torch_reps} runs)")
    print(f"mgs   mgsrt_topk_sparsify   {mgs['topk_ms']:9.2f} ms  (min {mgs['topk_min_ms']:.2f})")
    for name, torch_ms, torch_sum_ms in torches:
        print(f"{name:<22} topk(x.abs(), k) {torch_ms:9.2f} ms   speed-up over it "
              f"{torch_ms / mgs['topk_ms']:6.1f}x (goal >= 20x); "
              f"its x.sum(): {torch_sum_ms:.2f} ms")
    print(f"one read (sum over n)       {mgs['sum_ms']:9.2f} ms"
          f"  -> fraction of the memory bound {mgs['sum_ms'] / mgs['topk_ms']:.2f}")
    print(f"residual += grad (2R + 1W)  {mgs['add_ms']:9.2f} ms"
          f"  -> fraction of the interface's traffic bound {mgs['add_ms'] / mgs['topk_ms']:.2f}")


if __name__ == "__main__":
    main()
