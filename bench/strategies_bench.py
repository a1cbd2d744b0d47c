#!/usr/bin/python3
"""Merge strategies end to end: the planner's predicted iteration time against
the measured one, for one model trained on 4 MPI ranks, on one network.

    bench/strategies_bench.py [BUILD_DIR] [--network loopback|netcluster]
        [--model resnet20|widemlp|lstmlm_medium|NAME|PATH.onnx] [--batch-size 16] [--workers 4]
        [--density 0.001] [--strategies dense,mgwfbp,layerwise,single,greedy,omgs,auto]
        [--iters 24] [--progress-every 4] [--rounds 3] [--rate 1gbit]
        [--coll ring|default] [--omp-threads 1] [--work DIR] [--plot FILE.png]
        [--netcluster PATH/netcluster.sh] [--json FILE.json]

Models: NAME = BUILD/test/models/NAME-opset15.onnx (default resnet20: 0.27 M
parameters, communication negligible); lstmlm (in the build tree) and
lstmlm_medium (1.4 M parameters, exported into --work): LSTM language models
trained on synthetic token sequences with a label per token
(scripts/make_token_data.py); widemlp = a wide MLP where
communication matters as in the paper (3072 -> 2048 -> 2048 -> 10 with ReLU on
the same synthetic CIFAR data, flattened inside the model by torch.flatten(x,
1); 10.5 M parameters = 42 MB of fp32 gradients per step), exported at run
time by /usr/bin/python3 (torch, opset 15, TrainingMode.TRAINING, no constant
folding, seed 0) into --work; no model file is kept in the repository.
--plot FILE.png: a bar chart (matplotlib, Agg) of predicted, predicted +
offset and measured ms per strategy (python3-matplotlib, checked before the
run starts; scripts/setup.sh --bench installs it).

1. Calibration: mgsc --profile-generate builds the instrumented executable,
   which runs --calibrate under the same launcher (same ranks, same network,
   same MPI flags) as the training runs; the profile is kept in --work.
2. For each strategy: mgsc --strategy S --workers P --density R --profile-use
   PROFILE; the executable trains --iters iterations (one epoch) of synthetic
   CIFAR-10 data (1 label byte + 3072 pixel bytes per record, as in
   bench/resnet20_step.py; the language models: token sequences from
   scripts/make_token_data.py, a label per token); measured ms per iteration = global batch /
   (the executable's samples/s) over every progress window but the first
   (oneDNN primitive creation), averaged over --rounds rounds (the strategies
   run in a rotated order each round, so slow drift of the machine's load
   does not favour one of them). Predicted: mgs-plan PROFILE --strategy S
   --workers P --density R, "predicted_seconds".
3. The planner predicts the backprop pipeline only (backward + top-k +
   collectives, ending at the last collective); a measured iteration also has
   the forward, the loss, the optimizer update and filling the batch. That
   offset is measured, not guessed: P copies of the same model compiled with
   --strategy none run side by side (no MPI, same OMP_NUM_THREADS, so they
   share the cores as the P ranks do), and offset = their step time - the
   profile's summed backward. The table shows measured/predicted both raw
   and against predicted + offset, i.e. against the measured compute-only
   step plus the planner's predicted exposed tail (top-k and collectives not
   hidden under backprop). The offset is more than the forward: the profile's
   backward is a sum of per-layer medians, which on time-shared cores leaves
   out most of the time a rank spends descheduled, while a step does not.
   Where the profile has step_offset (the calibration's median step on the
   same ranks less its median rank's summed backward: measured with the
   backward, on the MPI ranks themselves), that is the offset used; the none
   copies' is still printed.

Networks: loopback = plain `mpirun --oversubscribe -np P` on this machine
(Open MPI's default transports: shared memory); netcluster = P network
namespaces joined by a RATE-limited switch (the netcluster.sh that
--netcluster or $MGS_NETCLUSTER names; docs/benchmarks.md), brought up before
and taken down after, even on failure (needs root; ip, tc and ping:
scripts/setup.sh --bench).

On a 2-core machine 4 ranks share the cores, so the compute times are those
of the shared cores (calibrated the same way). OMP_NUM_THREADS defaults to 1
per rank: with libgomp's default of one thread per core, 4 ranks x 2 spinning
OpenMP threads on 2 cores run 10-25x slower.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time

import numpy as np

from benchlib import (NETCLUSTER_ENV, ROOT, TOKEN_MODELS, NetCluster, calibrate, check_setup,
                      export_model, mpi_launch, q, require_matplotlib, run_checked,
                      token_data, window_ms,
                      write_cifar)

STRATEGIES = "dense,mgwfbp,layerwise,single,greedy,omgs,auto"


def die(msg):
    print(f"strategies_bench.py: error: {msg}", file=sys.stderr)
    sys.exit(1)


def plot_bars(path, title, strategies, plans, mean, round_means, offset):
    """Bar chart: per strategy, predicted, predicted + offset, measured (with
    the spread of the round means)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [s for s in strategies if s in plans]
    x = np.arange(len(names))
    series = [("predicted (mgs-plan, backprop pipeline)", [plans[s]["predicted_ms"] for s in names],
               None, "#9ecae1")]
    if offset is not None:
        series.append((f"predicted + measured offset ({offset:.0f} ms)",
                       [plans[s]["predicted_ms"] + offset for s in names], None, "#3182bd"))
    meas = [mean.get(s, np.nan) for s in names]
    err = [[m - min(round_means[s]) if s in mean else 0 for s, m in zip(names, meas)],
           [max(round_means[s]) - m if s in mean else 0 for s, m in zip(names, meas)]]
    series.append(("measured (mean; bar: min-max of round means)", meas, err, "#e6550d"))
    w = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(9, 1.4 * len(names) + 2), 5))
    for i, (label, vals, e, color) in enumerate(series):
        pos = x + (i - (len(series) - 1) / 2) * w
        bars = ax.bar(pos, vals, w, label=label, color=color, yerr=e, capsize=3 if e else 0)
        for j, (b, v) in enumerate(zip(bars, vals)):
            if np.isfinite(v):
                top = v + (e[1][j] if e else 0)
                ax.annotate(f"{v:.0f}", (b.get_x() + b.get_width() / 2, top), ha="center",
                            va="bottom", fontsize=7, xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(x)
    ax.set_xticklabels([f"{s}\n{plans[s]['sparse']}s/{plans[s]['dense']}d" for s in names])
    finite = [v for _, vals, _, _ in series for v in vals if np.isfinite(v) and v > 0]
    if finite and max(finite) / min(finite) > 20:  # dense vs sparse on a slow network
        ax.set_yscale("log")
        ax.set_ylabel("ms per iteration (log scale)")
    else:
        ax.set_ylabel("ms per iteration")
    ax.set_title(title, fontsize=10)
    for xi, s, m in zip(x, names, meas):
        if not np.isfinite(m):
            ax.annotate("FAILED", (xi + (len(series) - 1) / 2 * w, ax.get_ylim()[0]),
                        ha="center", va="bottom", rotation=90, fontsize=8, color="#e6550d",
                        xytext=(0, 3), textcoords="offset points")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=len(series),
              frameon=False)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--network", choices=["loopback", "netcluster"], default="loopback")
    ap.add_argument("--model", default="resnet20",
                    help="a model of BUILD/test/models (NAME-opset15.onnx), widemlp or "
                    "lstmlm_medium (exported at run time into --work), or an .onnx path")
    ap.add_argument("--batch-size", type=int, default=16, help="per worker")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--strategies", default=STRATEGIES)
    ap.add_argument("--iters", type=int, default=24, help="iterations per training run")
    ap.add_argument("--progress-every", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rate", default="1gbit", help="netcluster link rate")
    ap.add_argument("--coll", choices=["ring", "default"], default="ring",
                    help="Open MPI allreduce/allgather algorithms (coll/tuned)")
    ap.add_argument("--omp-threads", type=int, default=1, help="OMP_NUM_THREADS per rank")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per training run")
    ap.add_argument("--work", help="work folder (default /tmp/mgs-strategies-bench-NETWORK)")
    ap.add_argument("--plot", metavar="FILE.png",
                    help="bar chart of predicted vs measured ms per strategy (matplotlib)")
    ap.add_argument("--netcluster", metavar="PATH",
                    help=f"netcluster.sh for --network netcluster (default: ${NETCLUSTER_ENV})")
    ap.add_argument("--json", metavar="FILE.json",
                    help="also write the results (per strategy: predicted, measured, round means; "
                    "the offset and the profile) as JSON")
    args = ap.parse_args()

    try:
        mgsc, mgs_plan = check_setup(args)
        if args.plot:
            require_matplotlib("--plot")
    except RuntimeError as e:
        die(str(e))
    cluster = NetCluster("strategies_bench.py", args.network, args.workers, args.rate,
                         "loopback: one host, mpirun --oversubscribe, Open MPI default btl "
                         "(shared memory)", args.netcluster)
    if cluster.check():
        die(cluster.check())
    strategies = [s for s in args.strategies.split(",") if s]
    work = os.path.abspath(args.work or f"/tmp/mgs-strategies-bench-{args.network}")
    os.makedirs(work, exist_ok=True)
    model_note = ""
    tokens = args.model in TOKEN_MODELS
    if args.model in ("widemlp", "lstmlm_medium"):
        try:
            model, n = export_model(args.model, work)
        except RuntimeError as e:
            die(str(e))
        shape = ("3072-2048-2048-10 ReLU" if args.model == "widemlp" else
                 "embedding 2000 -> 200, 2 LSTM layers 200 -> 200, linear to 2000, 20 tokens")
        model_note = (f"{args.model} {shape}, {n} parameters "
                      f"({n * 4 / 1e6:.1f} MB fp32 gradients), exported to {model}")
        print(f"model: {model_note}", flush=True)
    else:
        model = args.model if args.model.endswith(".onnx") else os.path.join(
            os.path.abspath(args.build), "test", "models", f"{args.model}-opset15.onnx")
    if not os.path.exists(model):
        die(f"model {model} not found")
    P, B, rho = args.workers, args.batch_size, args.density
    gb = P * B
    t_start = time.time()
    load_start = os.getloadavg()

    # Synthetic CIFAR-10: one epoch of --iters global batches; the --strategy
    # none copies get --iters local batches each.
    # The none copies start and end a little apart: they get one window more,
    # and their first and last windows are left out.
    if tokens:
        # A language model: synthetic token sequences, a label per token.
        data_args = token_data(args.model, os.path.join(work, "tokens"), gb * args.iters)
        none_data_args = token_data(args.model, os.path.join(work, "tokens-none"),
                                    B * (args.iters + args.progress_every))
        data = data_args[1]
    else:
        data = os.path.join(work, "synthetic_cifar.bin")
        data_none = os.path.join(work, "synthetic_cifar_single.bin")
        write_cifar(data, gb * args.iters)
        write_cifar(data_none, B * (args.iters + args.progress_every))
        data_args = ["--data", data, "--data-format", "cifar10"]
        none_data_args = ["--data", data_none, "--data-format", "cifar10"]
    train_args = ["--holdout", "0", "--epochs", "1", "--lr", "0.01",
                  "--progress-every", str(args.progress_every)]

    launch, coll_text = mpi_launch(args.network, P, args.coll, args.omp_threads, cluster.tool)

    failures = []
    with cluster:

        # 1. Calibration.
        profile = os.path.join(work, f"profile-{args.network}.json")
        cal_line, cal_compile, cal_run = calibrate(mgsc, model, B, launch, data, rho, work,
                                                   profile, args.timeout, data_args=data_args)
        with open(profile) as f:
            prof = json.load(f)
        backward_ms = sum(l["backward"] for l in prof["layers"]) * 1e3
        topk_pts = prof["topk"]["points"]
        nonmono = [(a[0], b[0]) for a, b in zip(topk_pts, topk_pts[1:]) if b[1] < a[1] * 0.5]
        print(f"profile: {profile}\n  {cal_line}", flush=True)

        # 2. Plans and executables.
        plans, exes = {}, {}
        plan_cmd = lambda s: [mgs_plan, profile, "--strategy", s, "--workers", P,
                              "--density", rho]
        compile_cmd = lambda s, exe: [mgsc, model, "--batch-size", B, "--strategy", s,
                                      "--workers", P, "--density", rho, "--profile-use",
                                      profile, "-o", exe, "--quiet"]
        for s in strategies:
            plan = json.loads(run_checked(plan_cmd(s), f"mgs-plan --strategy {s}"))
            groups = plan.get("groups", [])
            plans[s] = {"predicted_ms": plan["predicted_seconds"] * 1e3,
                        "groups": len(groups),
                        "sparse": sum(g.get("collective") != "allreduce" for g in groups),
                        "dense": sum(g.get("collective") == "allreduce" for g in groups)}
            exes[s] = os.path.join(work, f"train-{s.replace(':', '-')}")
            try:
                run_checked(compile_cmd(s, exes[s]), f"mgsc --strategy {s}")
            except RuntimeError as e:
                failures.append(str(e))
                print(str(e), file=sys.stderr)
                exes[s] = None
        exe_none = os.path.join(work, "train-none")
        none_compile = [mgsc, model, "--batch-size", B, "--strategy", "none", "-o", exe_none,
                        "--quiet"]
        run_checked(none_compile, "mgsc --strategy none")

        # 3. Training runs, rounds in rotated order; the compute-only baseline
        # (P --strategy none copies side by side) takes its turn like a strategy.
        none_env = dict(os.environ, OMP_NUM_THREADS=str(args.omp_threads))
        none_cmd = [exe_none] + none_data_args + train_args

        def run_baseline():
            procs = [subprocess.Popen(none_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      universal_newlines=True, env=none_env, cwd=work,
                                      start_new_session=True) for _ in range(P)]
            values = []
            for p in procs:
                try:
                    out, _ = p.communicate(timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    out, _ = p.communicate()
                    raise RuntimeError(f"baseline timed out: {q(none_cmd)}")
                if p.returncode != 0:
                    raise RuntimeError(f"baseline exit status {p.returncode}: {q(none_cmd)}\n"
                                       f"{out[-2000:]}")
                values.append(window_ms(out, B, drop_last=True))
            # Window by window, the mean over the P copies.
            return [statistics.mean(w) for w in zip(*values)]

        train_cmd = lambda exe: launch + [exe] + data_args + train_args
        names = ["(none)"] + [s for s in strategies if exes[s]]
        windows = {n: [] for n in names}
        round_means = {n: [] for n in names}
        for r in range(args.rounds):
            k = r % len(names)
            for n in names[k:] + names[:k]:
                t0 = time.time()
                try:
                    ms = run_baseline() if n == "(none)" else window_ms(
                        run_checked(train_cmd(exes[n]), f"training with {n}",
                                    timeout=args.timeout, cwd=work), gb)
                except RuntimeError as e:
                    failures.append(str(e))
                    print(str(e), file=sys.stderr)
                    continue
                windows[n] += ms
                round_means[n].append(statistics.mean(ms))
                print(f"  round {r + 1} {n:10s} {statistics.mean(ms):8.1f} ms/iter "
                      f"({time.time() - t0:.0f} s, load average {os.getloadavg()[0]:.1f})",
                      flush=True)

    # 4. The table.
    mean = {n: statistics.mean(w) for n, w in windows.items() if w}
    none_offset = mean["(none)"] - backward_ms if "(none)" in mean else None
    # The calibration's own offset (profile key step_offset: its median step
    # on the same ranks less its summed backward) where it measured one; else
    # the --strategy none copies'.
    cal_offset = prof["step_offset"] * 1e3 if "step_offset" in prof else None
    offset = cal_offset if cal_offset is not None else none_offset
    dense_ms = mean.get("dense")
    print()
    print(f"=== {os.path.basename(model)}, batch {B}/worker (global {gb}), P = {P}, "
          f"density {rho}, {args.iters} iterations/run x {args.rounds} rounds, "
          f"first window of {args.progress_every} skipped")
    if model_note:
        print(f"model:        {model_note}")
    print(f"network:      {cluster.text}")
    print(f"collectives:  {coll_text}; mpi_yield_when_idle 1; OMP_NUM_THREADS={args.omp_threads}"
          " per rank")
    print(f"profile:      {profile}")
    print(f"  calibration: {cal_line}")
    print(f"  summed backward (profile): {backward_ms:.1f} ms")
    if nonmono:
        print(f"  WARNING: top-k points not monotone (a later size is < half an earlier one's "
              f"time): {nonmono}")
    if none_offset is not None:
        print(f"compute-only step ({P} x --strategy none side by side, same cores): "
              f"{mean['(none)']:.1f} ms (rounds: "
              f"{', '.join(f'{v:.1f}' for v in round_means['(none)'])}) -> offset for "
              f"forward+loss+update+batch = {mean['(none)']:.1f} - {backward_ms:.1f} = "
              f"{none_offset:.1f} ms" + ("" if cal_offset is not None else " (used)"))
    if cal_offset is not None:
        print(f"calibration's offset (profile step_offset: its median step on the same ranks "
              f"less its summed backward): {cal_offset:.1f} ms (used)")
    hdr = (f"{'strategy':10s} {'groups s/d':>10s} {'pred ms':>8s} {'pred+off':>8s} "
           f"{'meas ms':>8s} {'rounds':>15s} {'meas/pred':>9s} {'meas/(p+o)':>10s} "
           f"{'vs dense':>8s}")
    print(hdr)
    print("-" * len(hdr))
    for s in strategies:
        p = plans.get(s)
        if p is None:
            continue
        pred = p["predicted_ms"]
        gtxt = f"{p['sparse']}/{p['dense']}"
        if s not in mean:
            print(f"{s:10s} {gtxt:>10s} {pred:8.1f} {'':>8s} {'FAILED':>8s}")
            continue
        m = mean[s]
        po = pred + offset if offset is not None else float("nan")
        rtxt = "/".join(f"{v:.0f}" for v in round_means[s])
        vs = f"{m / dense_ms:8.3f}" if dense_ms else f"{'n/a':>8s}"
        print(f"{s:10s} {gtxt:>10s} {pred:8.1f} {po:8.1f} {m:8.1f} {rtxt:>15s} "
              f"{m / pred:9.3f} {m / po:10.3f} {vs}")
    print("groups s/d: sparse (allgather, gtopk or sparse-allreduce) / dense (allreduce) groups "
          "of the plan; pred: "
          "mgs-plan predicted_seconds (backprop pipeline only); pred+off: plus the measured "
          "forward/update offset; meas: mean ms/iteration of rank 0 over the windows, rounds: "
          "each round's mean")
    print(f"load average (1 min) at start {load_start[0]:.1f}, at end {os.getloadavg()[0]:.1f}; "
          f"wall {time.time() - t_start:.0f} s")
    print("commands:")
    if args.network == "netcluster":
        print(f"  {q([cluster.tool, 'up', P, args.rate])}   (and '{cluster.tool} down' at the end)")
    print(f"  {q(cal_compile)}")
    print(f"  {q(cal_run)}")
    print(f"  {q(plan_cmd('S'))}")
    print(f"  {q(compile_cmd('S', os.path.join(work, 'train-S')))}")
    print(f"  {q(train_cmd(os.path.join(work, 'train-S')))}")
    print(f"  {q(none_compile)}")
    print(f"  {P} x: OMP_NUM_THREADS={args.omp_threads} {q(none_cmd)}")
    data_text = ("synthetic token sequences (scripts/make_token_data.py), seed 0" if tokens
                 else "synthetic CIFAR-10 records, numpy seed 0")
    print(f"  (S in {', '.join(strategies)}; data: {data_text}, "
          f"{gb * args.iters} and {B * (args.iters + args.progress_every)} samples; the none "
          f"copies' first and last windows are left out)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": os.path.basename(model), "network": cluster.text,
                       "rate": args.rate if args.network == "netcluster" else None,
                       "workers": P, "density": rho, "batch_size": B, "profile": profile,
                       "profile_data": prof, "backward_ms": backward_ms,
                       "compute_only_ms": mean.get("(none)"), "offset_ms": offset,
                       "none_offset_ms": none_offset, "calibration_offset_ms": cal_offset,
                       "strategies": {s: dict(plans[s], measured_ms=mean.get(s),
                                              round_means=round_means.get(s, []))
                                      for s in strategies if s in plans}}, f, indent=1)
        print(f"json: {os.path.abspath(args.json)}")
    if args.plot:
        model_name = os.path.basename(model).replace("-opset15.onnx", "").replace(".onnx", "")
        net_name = f"netcluster {args.rate}" if args.network == "netcluster" else "loopback"
        title = (f"{model_name}: {net_name}, P = {P} workers, density {rho}, batch {B}/worker\n"
                 f"predicted (mgs-plan) vs measured ms/iteration, {args.iters} iters x "
                 f"{args.rounds} rounds")
        try:
            plot_bars(args.plot, title, strategies, plans, mean, round_means, offset)
            print(f"plot: {os.path.abspath(args.plot)}")
        except Exception as e:  # the table above is the result; a plot failure is reported
            failures.append(f"plot {args.plot}: {type(e).__name__}: {e}")
    if failures:
        print(f"\n{len(failures)} failure(s):")
        for f in failures:
            print("  " + f.splitlines()[0])
        sys.exit(1)


if __name__ == "__main__":
    main()
