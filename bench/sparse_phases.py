#!/usr/bin/python3
"""The balanced sparse all-reduce's phases in training against the cost model's
terms, per group of the plan.

    bench/sparse_phases.py TRACE.json --profile PROFILE.json --plan PLAN.json

TRACE.json is a training executable's --trace of a plan whose groups all use
the sparse all-reduce (mgsc --strategy sparse-allreduce), with the other
ranks' timelines beside it (TRACE.json.rank1, ...); PLAN.json is mgs-plan's
plan for that strategy on PROFILE.json (the groups, in backprop order, as
compiled). Each sparse all-reduce leaves five phases on the communication
thread (docs/design.md, "Balanced sparse all-reduce"); this prints, per group
and phase, the median over every rank and step of its time and of the bytes
the rank received, beside the model's term for it:

    regions       R a_p + 8 R (P-1) b_p         (R: the global top-k's rounds)
    reduce        (P-1) a_p + (P-1) 8k/P b_p
    dense result  u n                            (u: per_element)
    gather        ceil(log2 P) a_p + (P-1) min(8k, 4n/P) b_p
    unpack        (not in the model)

These are Profile::sparseAllreduceSeconds's terms (lib/Planner/Profile.cpp)
split by phase; their sum is its time. The regions phase also holds the wait
for the last rank to start the collective (the ranks' skew), which the
pipeline model charges before the collective, not in it. The reduce's last
column is its time less b_p times the bytes received, over its P - 1
messages: the start-up of a message as training sees it, against a_p.
"""
import argparse
import glob
import json
import math
import statistics

PHASES = ["regions", "reduce", "dense result", "gather", "unpack"]


def rounds(p):
    """The global top-k's rounds on p workers (Profile::gtopkRounds)."""
    if p <= 1:
        return 0
    f = int(math.log2(p))
    return f + (0 if p & (p - 1) == 0 else 2)


def model_terms(profile, n):
    """Seconds and bytes received of each phase for a group of n elements."""
    p = profile["workers"]
    k = max(1, min(n, int(profile["density"] * n)))
    cost = profile.get("sparse_allreduce")
    if cost is None:  # derived from the all-gather's ring (Profile::pointToPoint)
        ag = profile["allgather"]
        a, b, u = ag["alpha"] / (p - 1), ag["beta"] * p / (p - 1), 0.0
    else:
        a, b, u = cost["alpha"], cost["beta"], cost.get("per_element", 0.0)
    r, g = rounds(p), math.ceil(math.log2(p))
    regions = 8.0 * r * (p - 1)
    reduce = (p - 1) * 8.0 * k / p
    gather = (p - 1) * min(8.0 * k, 4.0 * n / p)
    return k, a, b, {
        "regions": (r * a + regions * b, regions),
        "reduce": ((p - 1) * a + reduce * b, reduce),
        "dense result": (u * n, 0.0),
        "gather": (g * a + gather * b, gather),
        "unpack": (0.0, 0.0),
    }


def rank_files(trace):
    more = glob.glob(glob.escape(trace) + ".rank*")
    return [trace] + sorted(more, key=lambda f: int(f.rsplit("rank", 1)[1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--profile", required=True)
    ap.add_argument("--plan", required=True)
    args = ap.parse_args()
    with open(args.profile) as f:
        profile = json.load(f)
    with open(args.plan) as f:
        plan = json.load(f)
    if isinstance(plan, list):
        plan = next(p for p in plan if p["strategy"] == "sparse-allreduce")
    numel = {layer["name"]: layer["numel"] for layer in profile["layers"]}
    groups = [sum(numel[name] for name in g["layers"]) for g in plan["groups"]]
    if any(g["collective"] != "sparse-allreduce" for g in plan["groups"]):
        raise SystemExit("sparse_phases: the plan has groups that are not sparse all-reduces")

    # Per group and phase: (seconds, bytes received) of every rank and step.
    seen = {(g, ph): [] for g in range(len(groups)) for ph in PHASES}
    files = rank_files(args.trace)
    for path in files:
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        phases = [e for e in events if e.get("ph") == "X" and e.get("tid") == 2]
        if len(phases) % (len(PHASES) * len(groups)):
            raise SystemExit(f"sparse_phases: {path}: {len(phases)} phase spans, not "
                             f"{len(PHASES)} for each of {len(groups)} groups a step")
        for i, e in enumerate(phases):  # file order: each wait's phases, groups in order
            group = (i // len(PHASES)) % len(groups)
            name = e["name"].removeprefix("sparse_allreduce ")
            seen[(group, name)].append((e["dur"] / 1e6, e["args"]["bytes_received"]))

    p = profile["workers"]
    print(f"{args.trace} ({len(files)} ranks), {args.profile}: P = {p}, "
          f"density {profile['density']}")
    print(f"{'group':>5} {'n':>9} {'k':>6} {'phase':<13} {'model ms':>9} {'meas ms':>8} "
          f"{'p25-p75':>13} {'model B':>9} {'meas B':>9} {'ms/message':>10}")
    for g, n in enumerate(groups):
        k, a, b, terms = model_terms(profile, n)
        for ph in PHASES:
            runs = seen[(g, ph)]
            secs = sorted(s for s, _ in runs)
            med = statistics.median(secs)
            got = statistics.median(b_ for _, b_ in runs)
            q = f"{secs[len(secs) // 4] * 1e3:.1f}-{secs[3 * len(secs) // 4] * 1e3:.1f}"
            per = ""
            if ph == "reduce" and p > 1:
                per = f"{max(0.0, med - b * got) / (p - 1) * 1e3:.2f}"
            model_s, model_b = terms[ph]
            print(f"{g:>5} {n:>9} {k:>6} {ph:<13} {model_s * 1e3:9.2f} {med * 1e3:8.2f} "
                  f"{q:>13} {model_b:9.0f} {got:9.0f} {per:>10}")
        print(f"{'':>22} a_p = {a * 1e3:.3f} ms, b_p = {b:.3g} s/B")


if __name__ == "__main__":
    main()
