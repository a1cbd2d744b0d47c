#!/usr/bin/python3
"""Checks a timeline written by a training executable's --trace.

    check_trace.py TRACE.json [--collectives] [--overlap] [--ends-at-completion] [--marks N]

Always: valid JSON in chrome://tracing's format with kernel spans. With
--collectives: collective spans on thread 1. With --overlap: some kernel runs
entirely inside a collective's span (communication overlapping backprop).
With --ends-at-completion: every collective's span ends no later than the
comm_wait kernel that closed it (the span ends when the collective
completed, not after its wait; each span is written right after its wait).
With --marks N: N gradient marks and one start-of-backprop mark per
iteration. Prints a one-line summary; exits 1 naming what is missing.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--collectives", action="store_true")
    ap.add_argument("--overlap", action="store_true")
    ap.add_argument("--ends-at-completion", action="store_true")
    ap.add_argument("--marks", type=int)
    args = ap.parse_args()
    with open(args.trace) as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e["ph"] == "X" and e["tid"] == 0]
    colls = [e for e in events if e["ph"] == "X" and e["tid"] == 1]
    marks = [e for e in events if e["ph"] == "i"]
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
    print(f"{len(kernels)} kernel spans, {len(colls)} collective spans, {len(marks)} marks")
    if problems:
        print("check_trace: " + "; ".join(problems))
        sys.exit(1)


if __name__ == "__main__":
    main()
