#!/usr/bin/python3
"""mgs against PyTorch on the same network: ms per training iteration of the
mgs executable and of PyTorch code running the same algorithm with the same
groups, on P workers.

    bench/torch_baseline_bench.py [BUILD_DIR] [--network netcluster|loopback]
        [--model widemlp|resnet20|NAME] [--batch-size 16] [--workers 4]
        [--density 0.001] [--strategies dense,layerwise,single,omgs]
        [--iters 24] [--progress-every 4] [--rounds 2] [--rate 1gbit]
        [--threads 1] [--python /usr/bin/python3] [--timeout 600] [--work DIR]
        [--netcluster PATH/netcluster.sh]

The baselines (bench/torch_baseline_worker.py, torch.distributed over gloo,
one process per worker, torch.set_num_threads(--threads), under --python:
Debian's torch 1.13 by default, or e.g. ~/.cache/mgs-torch2/bin/python, the
PyTorch 2.x that scripts/setup.sh --bench installs):
- "torch DDP": DistributedDataParallel, PyTorch's own dense data parallelism
  (25 MB buckets, allreduce overlapped with backward); compared with mgs's
  dense strategy (one allreduce per gradient, overlapped).
- "torch <strategy>": the way the paper's PyTorch code runs merged top-k
  sparsification (per-parameter gradient hooks, merged buffers, torch.topk
  with error feedback, asynchronous allgather of values and int32 indices,
  index_add_ after backward), on exactly the groups of mgs-plan's plan for
  that strategy, so both sides run the same algorithm on the same groups and
  differ only in how it is implemented. The plan comes from the profile that
  mgs's calibration (mgsc --profile-generate, --calibrate) measured on the
  same network.

Both train SGD with momentum on the model of scripts/export_models.py (mgs:
its ONNX export; PyTorch: the module itself, same seed) with batch
--batch-size per worker. mgs: ms/iteration from the executable's progress
windows, the first skipped, on synthetic CIFAR-10 records read from a file
(language models, lstmlm*: token .npy files with a label per token);
PyTorch: wall time of the iterations after --progress-every warm-up ones,
on preloaded random batches (data costs PyTorch nothing). Runs alternate in
a rotated order over --rounds rounds; the table shows the mean of the round
means and each round's value.

Networks: netcluster (default) = P network namespaces joined by a RATE
switch (the netcluster.sh that --netcluster or $MGS_NETCLUSTER names; needs
root; docs/benchmarks.md), brought up before and taken down after, even on
failure: MPI over TCP for mgs (ring iallreduce), gloo over TCP for PyTorch;
loopback = one host (mgs: Open MPI shared memory; PyTorch: gloo over TCP on
127.0.0.1). scripts/setup.sh --bench installs what the benches need beyond
the build (a tuned BLAS for PyTorch, ip/tc/ping for the netcluster).
"""
import argparse
import os
import re
import shutil
import statistics
import sys
import time

from benchlib import (NETCLUSTER_ENV, ROOT, TOKEN_MODELS, NetCluster, calibrate, check_setup,
                      export_model, mpi_launch, q, run_checked, token_data, window_ms,
                      write_cifar)

PROG = "torch_baseline_bench.py"
WORKER = os.path.join(ROOT, "bench", "torch_baseline_worker.py")
TORCH_RE = re.compile(r"torch-baseline: ms/iter ([0-9.]+) over \d+ iterations[^,]*"
                      r"(?:, of which top-k with error feedback ([0-9.]+))?")


def die(msg):
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--network", choices=["netcluster", "loopback"], default="netcluster")
    ap.add_argument("--model", default="widemlp", help="a model of scripts/export_models.py")
    ap.add_argument("--batch-size", type=int, default=16, help="per worker")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--strategies", default="dense,layerwise,single,omgs")
    ap.add_argument("--iters", type=int, default=24, help="iterations per training run")
    ap.add_argument("--progress-every", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--rate", default="1gbit", help="netcluster link rate")
    ap.add_argument("--threads", type=int, default=1,
                    help="compute threads per worker (OMP_NUM_THREADS / torch.set_num_threads)")
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="the interpreter of the PyTorch side: Debian's torch 1.13 (default) or "
                         "another, e.g. the PyTorch 2.x venv of scripts/setup.sh --bench")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per run")
    ap.add_argument("--work", help="work folder (default /tmp/mgs-torch-baseline-NETWORK)")
    ap.add_argument("--netcluster", metavar="PATH",
                    help=f"netcluster.sh for --network netcluster (default: ${NETCLUSTER_ENV})")
    args = ap.parse_args()

    try:
        mgsc, mgs_plan = check_setup(args)
    except RuntimeError as e:
        die(str(e))
    # Debian's torch is built with BLAS_INFO=generic: it calls whatever
    # libblas.so.3 the alternatives system picks. The reference BLAS would
    # make PyTorch's compute about 5x slower (widemlp step, 1 thread: 239 ms
    # against 46 ms with OpenBLAS) and the comparison meaningless.
    blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    debian_python = os.path.realpath(shutil.which(args.python) or args.python).startswith(
        "/usr/bin/python3")
    if not debian_python:
        blas = "its own (not Debian's torch)"
    elif "openblas" not in blas and "mkl" not in blas and "blis" not in blas:
        die(f"PyTorch would run on the reference BLAS ({blas}), several times slower than a "
            f"tuned one: run scripts/setup.sh --bench (libopenblas0-pthread)")
    P, B, rho = args.workers, args.batch_size, args.density
    cluster = NetCluster(PROG, args.network, P, args.rate,
                         "loopback: one host (mgs: Open MPI shared memory; PyTorch: gloo, TCP)",
                         args.netcluster)
    if cluster.check():
        die(cluster.check())
    strategies = [s for s in args.strategies.split(",") if s]
    work = os.path.abspath(args.work or f"/tmp/mgs-torch-baseline-{args.network}")
    os.makedirs(work, exist_ok=True)
    try:
        model, nparams = export_model(args.model, work)
    except RuntimeError as e:
        die(str(e))
    print(f"model: {args.model}, {nparams:,} parameters ({nparams * 4 / 1e6:.1f} MB of fp32 "
          f"gradients), exported to {model}", flush=True)
    gb = P * B
    if args.model in TOKEN_MODELS:  # a language model: token sequences, a label per token
        data_args = token_data(args.model, os.path.join(work, "tokens"), gb * args.iters)
        data = data_args[1]
    else:
        data = os.path.join(work, "synthetic_cifar.bin")
        write_cifar(data, gb * args.iters)
        data_args = ["--data", data, "--data-format", "cifar10"]
    train_args = ["--holdout", "0", "--epochs", "1", "--lr", "0.01",
                  "--progress-every", str(args.progress_every)]
    launch, coll_text = mpi_launch(args.network, P, "ring", args.threads, cluster.tool)
    torch_env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
                     OPENBLAS_NUM_THREADS=str(args.threads))

    def torch_cmd(mode, plan=None):
        cmd = [args.python, WORKER, "--model", args.model, "--mode", mode,
               "--batch-size", B, "--density", rho, "--iters", args.iters,
               "--warmup", args.progress_every, "--threads", args.threads]
        return cmd + (["--plan", plan] if plan else [])

    def run_torch(cmd):
        if args.network == "netcluster":
            out = run_checked([cluster.tool, "spawn", P, "--"] + cmd, "PyTorch baseline",
                              timeout=args.timeout, env=torch_env, cwd=work)
        else:
            out = run_checked(cmd + ["--local-ranks", P], "PyTorch baseline",
                              timeout=args.timeout, env=torch_env, cwd=work)
        m = TORCH_RE.search(out)
        if not m:
            raise RuntimeError(f"no timing line from the PyTorch baseline:\n{out[-2000:]}")
        if m.group(2):
            torch_topk.setdefault(cmd[-1], []).append(float(m.group(2)))
        return float(m.group(1))

    def plan_file(strategy):
        return os.path.join(work, f"plan-{strategy.replace(':', '-')}.json")

    failures = []
    torch_topk = {}  # plan file -> PyTorch's top-k ms/iteration per run
    t_start = time.time()
    with cluster:
        profile = os.path.join(work, f"profile-{args.network}.json")
        cal_line, cal_compile, cal_run = calibrate(mgsc, model, B, launch, data, rho, work,
                                                   profile, args.timeout, data_args=data_args)
        print(f"profile: {profile}\n  {cal_line}", flush=True)

        runs = {}  # name -> command runner
        for s in strategies:
            plan = plan_file(s)
            with open(plan, "w") as f:
                f.write(run_checked([mgs_plan, profile, "--strategy", s, "--workers", P,
                                     "--density", rho], f"mgs-plan --strategy {s}"))
            exe = os.path.join(work, f"train-{s.replace(':', '-')}")
            run_checked([mgsc, model, "--batch-size", B, "--strategy", s, "--workers", P,
                         "--density", rho, "--profile-use", profile, "-o", exe, "--quiet"],
                        f"mgsc --strategy {s}")
            runs[f"mgs {s}"] = (lambda exe=exe, s=s: statistics.mean(window_ms(run_checked(
                launch + [exe] + data_args + train_args, f"mgs {s}",
                timeout=args.timeout, cwd=work), gb)))
            runs[f"torch {s}"] = lambda plan=plan: run_torch(torch_cmd("plan", plan))
        runs["torch DDP"] = lambda: run_torch(torch_cmd("ddp"))

        names = list(runs)
        round_means = {n: [] for n in names}
        for r in range(args.rounds):
            k = (r * 3) % len(names)
            for n in names[k:] + names[:k]:
                t0 = time.time()
                try:
                    ms = runs[n]()
                except RuntimeError as e:
                    failures.append(f"{n}: {e}")
                    print(f"{n}: {e}", file=sys.stderr)
                    continue
                round_means[n].append(ms)
                print(f"  round {r + 1} {n:18s} {ms:8.1f} ms/iter ({time.time() - t0:.0f} s, "
                      f"load average {os.getloadavg()[0]:.1f})", flush=True)

    mean = {n: statistics.mean(v) for n, v in round_means.items() if v}

    def cell(n):
        if n not in mean:
            return f"{'FAILED':>10s} {'':>15s}"
        return f"{mean[n]:10.1f} {'/'.join(f'{v:.0f}' for v in round_means[n]):>15s}"

    print()
    print(f"=== {args.model} ({nparams:,} parameters), batch {B}/worker, P = {P}, density {rho}, "
          f"{args.iters} iterations/run x {args.rounds} rounds")
    print(f"network:     {cluster.text}")
    print(f"mgs:         MPI, {coll_text}; OMP_NUM_THREADS={args.threads} per rank; profile "
          f"calibrated on this network ({cal_line})")
    print(f"PyTorch:     torch {torch_version(args.python)} ({args.python}) gloo, BLAS {blas}, "
          f"torch.set_num_threads("
          f"{args.threads}), OPENBLAS_NUM_THREADS={args.threads}; the same groups (mgs-plan on "
          f"the same profile)")
    hdr = (f"{'strategy':10s} {'mgs ms':>10s} {'rounds':>15s} {'PyTorch ms':>10s} {'rounds':>15s} "
           f"{'PyTorch/mgs':>11s} {'PyTorch top-k':>13s}")
    print(hdr)
    print("-" * len(hdr))
    rows = [(s, f"mgs {s}", f"torch {s}", plan_file(s)) for s in strategies]
    if "dense" in strategies:
        rows.append(("dense/DDP", "mgs dense", "torch DDP", None))
    for label, a, b, plan in rows:
        ratio = f"{mean[b] / mean[a]:11.2f}" if a in mean and b in mean else f"{'n/a':>11s}"
        topk = torch_topk.get(plan)
        topk = f"{statistics.mean(topk):13.1f}" if topk else f"{'-':>13s}"
        print(f"{label:10s} {cell(a)} {cell(b)} {ratio} {topk}")
    print("PyTorch/mgs > 1: mgs is faster. dense/DDP: mgs's dense strategy against "
          "DistributedDataParallel. PyTorch top-k: rank 0's ms/iteration in error feedback + "
          "torch.topk(abs) + taking the values (mean over rounds).")
    print(f"wall {time.time() - t_start:.0f} s; commands:")
    if args.network == "netcluster":
        print(f"  {q([cluster.tool, 'up', P, args.rate])}   (and '{cluster.tool} down' at the end)")
    print(f"  {q(cal_compile)}\n  {q(cal_run)}")
    print(f"  {q([mgs_plan, profile, '--strategy', 'S', '--workers', P, '--density', rho])}"
          f" > plan-S.json")
    print(f"  {q([mgsc, model, '--batch-size', B, '--strategy', 'S', '--workers', P, '--density', rho, '--profile-use', profile, '-o', 'train-S', '--quiet'])}")
    print(f"  {q(launch + ['train-S'] + data_args + train_args)}")
    spawn, local = (([cluster.tool, "spawn", P, "--"], []) if args.network == "netcluster"
                    else ([], ["--local-ranks", P]))
    threads = f"OMP_NUM_THREADS={args.threads} OPENBLAS_NUM_THREADS={args.threads}"
    print(f"  {threads} {q(spawn + torch_cmd('plan', 'plan-S.json') + local)}")
    print(f"  {threads} {q(spawn + torch_cmd('ddp') + local)}")
    if failures:
        print(f"\n{len(failures)} failure(s):")
        for f in failures:
            print("  " + f.splitlines()[0])
        sys.exit(1)


def torch_version(python):
    try:
        return run_checked([python, "-c", "import torch; print(torch.__version__)"],
                           "torch version").strip()
    except RuntimeError:
        return "?"


if __name__ == "__main__":
    main()
