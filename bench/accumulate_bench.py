#!/usr/bin/python3
"""Gradient accumulation on a slow network: training throughput (samples/s
over the workers) of one model at one batch size per worker, exchanging the
gradients after every batch (mgsc --accumulate 1) or after N (--accumulate N),
for each strategy, in one run.

    bench/accumulate_bench.py [BUILD_DIR] [--network loopback|netcluster]
        [--model widemlp|NAME|PATH.onnx] [--batch-size 16] [--workers 4]
        [--accumulate 4] [--strategies dense,omgs] [--density 0.001]
        [--steps 16] [--progress-every 4] [--rounds 2] [--rate 1gbit]
        [--omp-threads 1] [--work DIR] [--netcluster PATH/netcluster.sh]

The baseline of each ratio is mgs itself at --accumulate 1 with the same
strategy, batch size and workers: accumulation changes the optimization (a
step's global batch is N times larger), so this measures the exchange saved
per sample, not a faster step. widemlp (3072 -> 2048 -> 2048 -> 10, 10.5 M
parameters: 42 MB of fp32 gradients a step) is exported at run time by
/usr/bin/python3 into --work, as bench/strategies_bench.py does; the data is
synthetic CIFAR-10 (bench/benchlib.py). Each run trains --steps optimizer
steps (one epoch); samples/s is the executable's own, over every progress
window but the first, averaged over --rounds rounds (the configurations run
in a rotated order each round). The merged strategies plan with mgsc's
analytic estimate (no calibration): the plan is the same at every N (the
exchange overlaps the last batch's backward), so the comparison holds.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import (NETCLUSTER_ENV, ROOT, NetCluster, export_model, mpi_launch,  # noqa: E402
                     q, run_checked, write_cifar)


def die(msg):
    print(f"accumulate_bench.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--network", choices=["loopback", "netcluster"], default="loopback")
    ap.add_argument("--model", default="widemlp",
                    help="widemlp (exported at run time into --work), a model of "
                    "BUILD/test/models (NAME-opset15.onnx), or an .onnx path")
    ap.add_argument("--batch-size", type=int, default=16, help="per worker and batch")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--accumulate", type=int, default=4, help="N, compared with 1")
    ap.add_argument("--strategies", default="dense,omgs")
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--steps", type=int, default=16, help="optimizer steps per training run")
    ap.add_argument("--progress-every", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--rate", default="1gbit", help="netcluster link rate")
    ap.add_argument("--omp-threads", type=int, default=1, help="OMP_NUM_THREADS per rank")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per training run")
    ap.add_argument("--work", help="work folder (default /tmp/mgs-accumulate-bench-NETWORK)")
    ap.add_argument("--netcluster", metavar="PATH",
                    help=f"netcluster.sh for --network netcluster (default: ${NETCLUSTER_ENV})")
    args = ap.parse_args()
    if args.accumulate < 2:
        die("--accumulate must be 2 or more (it is compared with 1)")
    if args.steps < 2 * args.progress_every:
        die("--steps must be at least 2 x --progress-every (the first window is skipped)")
    mgsc = os.path.join(os.path.abspath(args.build), "bin", "mgsc")
    if not os.access(mgsc, os.X_OK):
        die(f"{mgsc} not found (build the project first)")
    cluster = NetCluster("accumulate_bench.py", args.network, args.workers, args.rate,
                         "loopback: one host, mpirun --oversubscribe, Open MPI default btl "
                         "(shared memory)", args.netcluster)
    if cluster.check():
        die(cluster.check())
    work = os.path.abspath(args.work or f"/tmp/mgs-accumulate-bench-{args.network}")
    os.makedirs(work, exist_ok=True)
    try:
        if args.model == "widemlp":
            model, n = export_model("widemlp", work)
            print(f"model: widemlp 3072-2048-2048-10 ReLU, {n} parameters "
                  f"({n * 4 / 1e6:.1f} MB fp32 gradients), exported to {model}", flush=True)
        else:
            model = args.model if args.model.endswith(".onnx") else os.path.join(
                os.path.abspath(args.build), "test", "models", f"{args.model}-opset15.onnx")
        if not os.path.exists(model):
            die(f"model {model} not found")
        P, B, N = args.workers, args.batch_size, args.accumulate
        # One epoch of --steps steps at N batches a step (fewer for N = 1's
        # epoch: it stops after --steps steps too, its data is the first part).
        data = os.path.join(work, "synthetic_cifar.bin")
        write_cifar(data, P * B * N * args.steps)
        strategies = [s for s in args.strategies.split(",") if s]
        configs = [(s, a) for s in strategies for a in (1, N)]
        exes = {}
        for s, a in configs:
            exe = os.path.join(work, f"train-{s.replace(':', '-')}-acc{a}")
            cmd = [mgsc, model, "--batch-size", B, "--strategy", s, "--accumulate", a,
                   "-o", exe, "--quiet"]
            if s not in ("none", "dense"):
                cmd += ["--workers", P, "--density", args.density]
            run_checked(cmd, f"mgsc --strategy {s} --accumulate {a}")
            exes[(s, a)] = (exe, cmd)
        launch, coll_text = mpi_launch(args.network, P, "ring", args.omp_threads, cluster.tool)
        rates = {c: [] for c in configs}
        t0, load0 = time.time(), os.getloadavg()
        with cluster:
            print(f"network: {cluster.text}\ncollectives: {coll_text}", flush=True)
            for r in range(args.rounds):
                for i in range(len(configs)):
                    s, a = configs[(i + r) % len(configs)]
                    exe, _ = exes[(s, a)]
                    samples = P * B * a * args.steps
                    cmd = launch + [exe, "--data", data, "--data-format", "cifar10",
                                    "--holdout", "0", "--epochs", "1", "--lr", "0.01",
                                    "--progress-every", args.progress_every]
                    # N = 1 reads the first `samples` of the file: its epoch is
                    # --steps steps as well.
                    if a == 1:
                        short = os.path.join(work, "synthetic_cifar_acc1.bin")
                        if not os.path.exists(short):
                            with open(data, "rb") as f, open(short, "wb") as g:
                                g.write(f.read(samples * 3073))
                        cmd[cmd.index(data)] = short
                    out = run_checked(cmd, f"training {s} --accumulate {a}",
                                      timeout=args.timeout, cwd=work)
                    rate = statistics.mean(benchlib.window_rates(out))
                    rates[(s, a)].append(rate)
                    print(f"round {r + 1} {s:<10} accumulate {a}: {rate:9.1f} samples/s",
                          flush=True)
    except RuntimeError as e:
        die(str(e))
    print(f"\nGradient accumulation, {P} workers, batch {B} per worker, {args.steps} steps a "
          f"run, {args.rounds} round(s), {args.omp_threads} OpenMP thread(s) a rank; "
          f"{time.time() - t0:.0f} s, load average {load0[0]:.2f} at the start")
    for s in strategies:
        one, many = statistics.mean(rates[(s, 1)]), statistics.mean(rates[(s, N)])
        print(f"  {s:<10} accumulate 1: {one:9.1f} samples/s   accumulate {N}: {many:9.1f} "
              f"samples/s   ratio {many / one:.2f}x")
    print("compiled as: " + "; ".join(q(cmd) for _, cmd in exes.values()))


if __name__ == "__main__":
    main()
