#!/usr/bin/python3
"""Sparse collectives on a slow network: dense all-reduce, all-gather (omgs),
global top-k and the balanced sparse all-reduce, measured and predicted side
by side at several link rates of the netcluster.

    bench/sparse_collectives_bench.py [BUILD_DIR] [--rates 100mbit,1gbit]
        [--reference-rate 10gbit] [--model widemlp] [--workers 8] [--density 0.001]
        [--strategies dense,omgs,gtopk,sparse-allreduce] [--batch-size 16] [--iters 8]
        [--progress-every 2] [--rounds 2] [--tolerance 0.15] [--logs DIR]
        [--netcluster PATH/netcluster.sh]

For each rate (and the reference rate, a link fast enough that the CPU
bounds every strategy: on a 2-core machine 8 ranks share the cores) it runs
bench/strategies_bench.py --network netcluster: a calibration on that
cluster (the executable's --calibrate, which measures the global top-k's and
the sparse all-reduce's message costs too: profile keys gtopk and
sparse_allreduce), mgs-plan --strategy S on that profile, and S trained end
to end; each run's full output and JSON go to --logs. Then one table: per
rate and strategy, the prediction (mgs-plan's backprop pipeline plus the
measured forward/update offset, strategies_bench.py's pred+off), the
measurement, whether it is within --tolerance, and the share of the
measured time the same strategy takes at the reference rate (the CPU's: the
network there costs little). The strategies' names are mgs-plan's: omgs is
the exact optimum over groupings where every sparse group is all-gathered,
gtopk and sparse-allreduce the same with that collective.
"""
import argparse
import json
import os
import subprocess
import sys

from benchlib import NETCLUSTER_ENV, ROOT, q


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rates", default="100mbit,1gbit")
    ap.add_argument("--reference-rate", default="10gbit",
                    help="a rate where the network costs little (empty: none)")
    ap.add_argument("--model", default="widemlp")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--strategies", default="dense,omgs,gtopk,sparse-allreduce")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--iters", type=int, default=8)
    ap.add_argument("--progress-every", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=600, help="seconds per training run")
    ap.add_argument("--tolerance", type=float, default=0.15)
    ap.add_argument("--logs", default="/tmp/mgs-sparse-collectives-bench",
                    help="folder for each rate's output and JSON")
    ap.add_argument("--netcluster", metavar="PATH",
                    help=f"netcluster.sh (default: ${NETCLUSTER_ENV})")
    args = ap.parse_args()

    rates = [r for r in args.rates.split(",") if r]
    ref = args.reference_rate or None
    os.makedirs(args.logs, exist_ok=True)
    results = {}
    for rate in rates + ([ref] if ref and ref not in rates else []):
        out_json = os.path.join(args.logs, f"{args.model}-{rate}.json")
        cmd = [sys.executable, os.path.join(ROOT, "bench", "strategies_bench.py"), args.build,
               "--network", "netcluster", "--rate", rate, "--model", args.model,
               "--workers", args.workers, "--density", args.density,
               "--strategies", args.strategies, "--batch-size", args.batch_size,
               "--iters", args.iters, "--progress-every", args.progress_every,
               "--rounds", args.rounds, "--timeout", args.timeout,
               "--work", os.path.join(args.logs, f"work-{rate}"), "--json", out_json]
        if args.netcluster:
            cmd += ["--netcluster", args.netcluster]
        print(f"=== {rate}: {q(cmd)}", flush=True)
        log = os.path.join(args.logs, f"{args.model}-{rate}.txt")
        with open(log, "w") as f:
            r = subprocess.run([str(c) for c in cmd], stdout=f, stderr=subprocess.STDOUT)
        with open(log) as f:
            text = f.read()
        table = text[text.find("=== "):] if "=== " in text else text[-3000:]
        print(table, flush=True)
        if r.returncode != 0 and not os.path.exists(out_json):
            print(f"sparse_collectives_bench.py: {rate} failed (exit {r.returncode}); "
                  f"see {log}", file=sys.stderr)
            continue
        with open(out_json) as f:
            results[rate] = json.load(f)

    strategies = [s for s in args.strategies.split(",") if s]
    print(f"\n=== {args.model}, P = {args.workers}, density {args.density}, batch "
          f"{args.batch_size}/worker: predicted (mgs-plan on that rate's calibration, + the "
          f"measured forward/update offset) vs measured ms/iteration")
    hdr = (f"{'rate':>8s} {'strategy':16s} {'groups s/d':>10s} {'pred':>8s} {'pred+off':>8s} "
           f"{'meas':>8s} {'meas/(p+o)':>10s} {'within':>6s} {'cpu share':>9s}")
    print(hdr)
    print("-" * len(hdr))
    refres = results.get(ref, {}).get("strategies", {}) if ref else {}
    for rate in rates + ([ref] if ref in results and ref not in rates else []):
        res = results.get(rate)
        if not res:
            print(f"{rate:>8s} FAILED")
            continue
        off = res.get("offset_ms") or 0.0
        for s in strategies:
            p = res["strategies"].get(s)
            if not p:
                continue
            pred, meas = p["predicted_ms"], p.get("measured_ms")
            po = pred + off
            groups = f"{p['sparse']}/{p['dense']}"
            if meas is None:
                print(f"{rate:>8s} {s:16s} {groups:>10s} {pred:8.1f} {po:8.1f} {'FAILED':>8s}")
                continue
            ok = abs(meas / po - 1) <= args.tolerance
            refm = refres.get(s, {}).get("measured_ms")
            share = f"{min(refm / meas, 1.0):9.2f}" if refm else f"{'n/a':>9s}"
            print(f"{rate:>8s} {s:16s} {groups:>10s} {pred:8.1f} {po:8.1f} {meas:8.1f} "
                  f"{meas / po:10.3f} {'yes' if ok else 'NO':>6s} {share}")
        src = ("the calibration's step_offset" if res.get("calibration_offset_ms") is not None
               else "the none copies'")
        print(f"{'':8s} compute-only step {res.get('compute_only_ms') or float('nan'):.1f} ms, "
              f"summed backward (profile) {res['backward_ms']:.1f} ms, offset {off:.1f} ms "
              f"({src}; the none copies' {res.get('none_offset_ms') or float('nan'):.1f} ms)")
        prof = res.get("profile_data", {})
        for key in ("allgather", "allreduce", "gtopk", "sparse_allreduce"):
            if key in prof:
                c = prof[key]
                print(f"{'':8s} profile {key}: alpha {c['alpha']:.3g} s, beta {c['beta']:.3g} s/B, "
                      f"cpu_per_byte {c.get('cpu_per_byte', 0):.3g} s/B, cpu_fraction "
                      f"{c.get('cpu_fraction', float('nan')):.3g}")
    print(f"within: |meas / (pred + offset) - 1| <= {args.tolerance}; cpu share: the same "
          f"strategy's measured ms at {ref} / this rate's (the part of the time the CPU "
          f"bounds: {args.workers} ranks share this machine's cores)")
    print(f"each rate's full output: {args.logs}/{args.model}-RATE.txt")


if __name__ == "__main__":
    main()
