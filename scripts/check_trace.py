#!/usr/bin/python3
"""Checks a timeline written by a training executable's --trace.

    check_trace.py TRACE.json [--collectives] [--overlap] [--ends-at-completion] [--marks N]
        [--phases]

Always: valid JSON in chrome://tracing's format with kernel spans. With
--collectives: collective spans on thread 1. With --overlap: some kernel runs
entirely inside a collective's span (communication overlapping backprop).
With --ends-at-completion: every collective's span ends no later than the
comm_wait kernel that closed it (the span ends when the collective
completed, not after its wait; each span is written right after its wait).
With --marks N: N gradient marks and one start-of-backprop mark per
iteration. With --phases: every sparse all-reduce's span on thread 1 holds its
phases on thread 2 (the communication thread), in order: regions, reduce,
dense result, gather, unpack, each with the bytes it received, the reduce's
and the gather's more than none. Prints a one-line summary; exits 1 naming
what is missing.
"""
import argparse
import json
import sys


PHASES = ["regions", "reduce", "dense result", "gather", "unpack"]
# The timeline's times are printed to the nanosecond: a phase may end that
# much after its collective's span.
SLACK_US = 0.002


def check_phases(colls, phases):
    """What --phases finds wrong: phases not in runs of PHASES, one run
    inside each sparse all-reduce's span."""
    spans = sorted((c for c in colls if c["name"].startswith("sparse_allreduce")),
                   key=lambda c: c["ts"])
    if not spans:
        return ["no sparse all-reduce spans"]
    runs = [phases[i:i + len(PHASES)] for i in range(0, len(phases), len(PHASES))]
    if len(runs) != len(spans):
        return [f"{len(phases)} phase spans for {len(spans)} sparse all-reduces, expected "
                f"{len(PHASES)} each"]
    problems = []
    for i, run in enumerate(runs):
        names = [p["name"].removeprefix("sparse_allreduce ") for p in run]
        if names != PHASES:
            problems.append(f"sparse all-reduce {i}: phases {names}, expected {PHASES}")
            continue
        if not any(c["ts"] - SLACK_US <= run[0]["ts"] and
                   run[-1]["ts"] + run[-1]["dur"] <= c["ts"] + c["dur"] + SLACK_US
                   for c in spans):
            problems.append(f"sparse all-reduce {i}: its phases lie outside every sparse "
                            "all-reduce span")
        for p in run:
            got = p.get("args", {}).get("bytes_received")
            if not isinstance(got, int) or got < 0:
                problems.append(f"sparse all-reduce {i}: {p['name']} has no bytes_received")
            elif got == 0 and p["name"].endswith(("reduce", "gather")):
                problems.append(f"sparse all-reduce {i}: {p['name']} received nothing")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--collectives", action="store_true")
    ap.add_argument("--overlap", action="store_true")
    ap.add_argument("--ends-at-completion", action="store_true")
    ap.add_argument("--marks", type=int)
    ap.add_argument("--phases", action="store_true")
    args = ap.parse_args()
    with open(args.trace) as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e["ph"] == "X" and e["tid"] == 0]
    colls = [e for e in events if e["ph"] == "X" and e["tid"] == 1]
    marks = [e for e in events if e["ph"] == "i"]
    phases = [e for e in events if e["ph"] == "X" and e["tid"] == 2]
    problems = []
    if not kernels:
        problems.append("no kernel spans")
    if args.collectives and not colls:
        problems.append("no collective spans")
    if args.overlap:
        inside = [k for k in kernels for c in colls
                  if c["ts"] < k["ts"] and k["ts"] + k["dur"] < c["ts"] + c["dur"]]
        if not inside:
            problems.append("no kernel runs while a collective is in flight")
    if args.ends_at_completion:
        wait, late = None, []
        for e in events:  # file order: a wait, then the span it closed
            if e["ph"] != "X":
                continue
            if e["tid"] == 0 and e["name"] == "comm_wait":
                wait = e
            elif e["tid"] == 1 and (wait is None or
                                    e["ts"] + e["dur"] > wait["ts"] + wait["dur"]):
                late.append(e["name"])
        if late:
            problems.append(f"{len(late)} collective span(s) end after their wait "
                            f"(first: {late[0]})")
    if args.marks is not None:
        grads = [m for m in marks if m["name"].startswith("gradient ")]
        starts = [m for m in marks if m["name"] == "backprop starts"]
        if not starts or len(grads) != args.marks * len(starts):
            problems.append(f"{len(grads)} gradient marks for {len(starts)} iterations, "
                            f"expected {args.marks} each")
    if args.phases:
        problems += check_phases(colls, phases)
    print(f"{len(kernels)} kernel spans, {len(colls)} collective spans, {len(marks)} marks, "
          f"{len(phases)} phase spans")
    if problems:
        print("check_trace: " + "; ".join(problems))
        sys.exit(1)


if __name__ == "__main__":
    main()
