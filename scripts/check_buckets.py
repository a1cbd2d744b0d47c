#!/usr/bin/python3
"""Checks that the buckets comm-merge-buckets made in an MLIR module are the
groups mgs-plan prints for the same profile and strategy (one planner library,
two front ends: the pass and the CLI must agree), and that each group's
comm.all_reduce_start, in backprop order, carries the plan's collective
(comm.dense for allreduce, comm.collective = "gtopk" / "sparse-allreduce",
nothing for allgather).

    check_buckets.py MODULE.mlir PLAN.json

A bucket is labelled "first..last" (comm.bucket); groups of one layer get no
bucket. Exits 1 naming the first difference.
"""
import json
import re
import sys


def main():
    module, plan_path = sys.argv[1], sys.argv[2]
    with open(module) as f:
        text = f.read()
    buckets = re.findall(r'comm\.bucket = "([^"]*)"', text)
    with open(plan_path) as f:
        plan = json.load(f)
    expected = [f"{g['layers'][0]}..{g['layers'][-1]}" for g in plan["groups"]
                if len(g["layers"]) > 1]
    if buckets != expected:
        print(f"buckets in {module}:\n  {buckets}\nmgs-plan's multi-layer groups:\n  {expected}")
        sys.exit(1)
    collectives = []
    for start in re.findall(r"comm\.all_reduce_start[^\n]*", text):
        named = re.search(r'comm\.collective = "([^"]*)"', start)
        collectives.append("allreduce" if "comm.dense" in start
                           else named.group(1) if named else "allgather")
    planned = [g["collective"] for g in plan["groups"]]
    if collectives != planned:
        print(f"collectives in {module}:\n  {collectives}\nmgs-plan's:\n  {planned}")
        sys.exit(1)
    print(f"{len(buckets)} buckets match mgs-plan's {len(plan['groups'])} groups")


if __name__ == "__main__":
    main()
