#!/usr/bin/python3
"""Checks that the buckets comm-merge-buckets made in an MLIR module are the
groups mgs-plan prints for the same profile and strategy (one planner library,
two front ends: the pass and the CLI must agree).

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
        buckets = re.findall(r'comm\.bucket = "([^"]*)"', f.read())
    with open(plan_path) as f:
        plan = json.load(f)
    expected = [f"{g['layers'][0]}..{g['layers'][-1]}" for g in plan["groups"]
                if len(g["layers"]) > 1]
    if buckets != expected:
        print(f"buckets in {module}:\n  {buckets}\nmgs-plan's multi-layer groups:\n  {expected}")
        sys.exit(1)
    print(f"{len(buckets)} buckets match mgs-plan's {len(plan['groups'])} groups")


if __name__ == "__main__":
    main()
