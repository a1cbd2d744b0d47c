#!/usr/bin/python3
"""Top-k sparsification on a GPU: mgs's mgsrt_topk_sparsify (CUDA) against
torch.topk(x.abs(), k) on the same GPU, in one run.

    bench/topk_gpu_bench.py [BUILD_DIR] [--n N] [--density D] [--reps R]
                            [--data normal|layered]

Defaults: ResNet-50's parameter count (n = 25,557,032), density 0.001, 21
repetitions (medians). mgs: the mgsrt_topk_cuda_bench executable
(runtime/bench/TopKCudaBench.cpp; BUILD_DIR/bin or BUILD_DIR/bench, or
BUILD_DIR/runtime/bench) on grad ~ N(0, 1), residual ~ N(0, 0.25); it also
forms grad + residual and writes the residual back (error feedback), which
torch.topk does not. Its times:
  - per call: host-timed from an idle stream through mgsrt_synchronize
    (launch and one synchronization included), residual restored each time;
  - batched: R calls queued back to back (residual carried, as in training),
    one synchronization, divided by R.
torch: torch.topk(x.abs(), k) on x = torch.randn(n, device="cuda"), timed
with CUDA events (the abs included: it is part of selecting by magnitude).

Prints one table: times, the speed-up over torch (goal >= 6x) and the
fraction of the one-read bound (a sum over n floats; goal >= 0.30), plus
residual += grad (two reads and a write, the interface's own traffic bound).
Exits non-zero when torch, CUDA or a GPU is missing.
"""
import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_exe(build):
    for sub in ("bin", "bench", os.path.join("runtime", "bench")):
        exe = os.path.join(build, sub, "mgsrt_topk_cuda_bench")
        if os.path.exists(exe):
            return exe
    sys.exit(f"topk_gpu_bench.py: mgsrt_topk_cuda_bench not found under {build} "
             f"(ninja -C {build} mgsrt_topk_cuda_bench)")


def run_mgs(build, n, k, reps, data, env=None):
    exe = find_exe(build)
    proc = subprocess.run(
        [exe, "--n", str(n), "--k", str(k), "--reps", str(reps), "--data", data],
        capture_output=True, text=True, env=env)
    if proc.returncode == 3:
        sys.exit(f"topk_gpu_bench.py: no GPU for mgs: {proc.stderr.strip()}")
    if proc.returncode != 0:
        sys.exit(f"topk_gpu_bench.py: {exe} failed ({proc.returncode}): {proc.stderr.strip()}")
    fields = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        fields[key] = value
    keys = ("topk_ms", "topk_min_ms", "topk_batch_ms", "read_ms", "add_ms", "read_gbps")
    result = {key: float(fields[key]) for key in keys}
    result["stderr"] = proc.stderr
    return result


def run_mgs_phases(build, n, k, data, shown=6):
    """One short extra pass with MGSRT_TOPK_PHASES=1: the kernel prints one
    "topk phases: ..." line a call (CUDA events between its launches; the
    host synchronizes after every call, so these runs are not the timed
    ones). Prints the first line (the warm-up call) and the last few."""
    env = dict(os.environ, MGSRT_TOPK_PHASES="1")
    try:
        mgs = run_mgs(build, n, k, 3, data, env)
    except SystemExit as e:
        print(f"phase pass failed: {e}")
        return
    lines = [l for l in mgs["stderr"].splitlines() if l.startswith("topk phases:")]
    print(f"phase breakdown (MGSRT_TOPK_PHASES=1, {len(lines)} calls; first = warm-up, "
          f"then the last {min(shown, max(0, len(lines) - 1))}):")
    for line in lines[:1] + lines[1:][-shown:]:
        print("  " + line)


def torch_version():
    import torch
    return f"torch {torch.__version__} (CUDA {torch.version.cuda})"


def run_torch(n, k, reps):
    try:
        import torch
    except ImportError:
        sys.exit("topk_gpu_bench.py: torch is not installed (needed for the comparison)")
    if not torch.cuda.is_available():
        sys.exit("topk_gpu_bench.py: torch sees no CUDA GPU")
    torch.manual_seed(0)
    x = torch.randn(n, device="cuda")
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    topk, sums = [], []
    for r in range(reps + 1):  # the first run warms up
        start.record()
        torch.topk(x.abs(), k)
        end.record()
        end.synchronize()
        if r:
            topk.append(start.elapsed_time(end))
        start.record()
        x.sum()
        end.record()
        end.synchronize()
        if r:
            sums.append(start.elapsed_time(end))
    return statistics.median(topk), statistics.median(sums), torch.cuda.get_device_name()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--n", type=int, default=25557032)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--data", default="normal", choices=["normal", "layered"])
    args = ap.parse_args()
    k = max(1, int(args.density * args.n))

    torch_ms, torch_sum_ms, device = run_torch(args.n, k, args.reps)
    mgs = run_mgs(args.build, args.n, k, args.reps, args.data)

    read = mgs["read_ms"]
    rows = [
        ("mgs topk_sparsify, per call", mgs["topk_ms"]),
        ("mgs topk_sparsify, batched", mgs["topk_batch_ms"]),
        ("torch.topk(x.abs(), k)", torch_ms),
    ]
    print(f"{device}: n = {args.n}, k = {k} (density {args.density}), medians of "
          f"{args.reps} runs ({args.data} data); torch: {torch_version()}")
    print(f"{'':34s} {'ms':>9s} {'torch/this':>11s} {'read/this':>10s}")
    for label, ms in rows:
        print(f"{label:34s} {ms:9.4f} {torch_ms / ms:10.2f}x {read / ms:10.3f}")
    print(f"{'one read (sum over n), bench':34s} {read:9.4f}"
          f"   ({mgs['read_gbps']:.0f} GB/s; torch x.sum(): {torch_sum_ms:.4f} ms)")
    print(f"{'residual += grad (2R + 1W)':34s} {mgs['add_ms']:9.4f}"
          f"   -> fraction of the interface's traffic bound (batched) "
          f"{mgs['add_ms'] / mgs['topk_batch_ms']:.3f}")
    best = min(mgs["topk_ms"], mgs["topk_batch_ms"])
    print(f"goals: speed-up >= 6x: per call {torch_ms / mgs['topk_ms']:.1f}x, batched "
          f"{torch_ms / mgs['topk_batch_ms']:.1f}x; one-read fraction >= 0.30: "
          f"{read / best:.3f} (best of the two)")
    run_mgs_phases(args.build, args.n, k, args.data)


if __name__ == "__main__":
    main()
