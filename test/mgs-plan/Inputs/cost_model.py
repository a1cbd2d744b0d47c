#!/usr/bin/python3
"""An independent model of docs/design.md's cost model, to check mgs-plan.

    mgs-plan PROFILE [options] | cost_model.py PROFILE [--workers P] [--density RHO]
                                               [--brute-force] [--optimum]
                                               [--expect S=SECONDS ...]

Reads mgs-plan's Plan JSON (one plan or an array) from stdin and, written
from docs/design.md's formulas without the C++ planner library, recomputes
each plan's predicted time from its groups; exits 1 unless every plan's
"predicted_seconds" agrees to 1e-12 relative. --brute-force also checks that
no grouping of the profile's layers with any collective per group (every
plan of at most 10 layers) beats the plan of a strategy that searches them
(auto: all four; omgs, mgwfbp, gtopk, sparse-allreduce: that one).
--optimum does the same for a profile of any size, by an exact dynamic
program over the groupings (see optimum()), and prints the optimal grouping it
found as comm-merge-buckets labels the buckets, so a test can check a plan's
golden bucket boundaries against it. --expect S=SECONDS checks strategy S's
predicted time against a number computed by hand.
"""
import itertools
import json
import math
import sys


def topk_count(n, rho):
    return min(n, max(1, math.floor(rho * n)))


def topk_seconds(points, n):
    if n <= points[0][0] or len(points) == 1:
        return points[0][1]
    for (n0, t0), (n1, t1) in zip(points, points[1:]):
        if n <= n1:
            break
    # beyond the last point: the last segment's line
    return max(0.0, t0 + (n - n0) / (n1 - n0) * (t1 - t0))


def largest_power_of_two(P):
    f = 0
    while 2 ** (f + 1) <= P:
        f += 1
    return f


def gtopk_rounds(P):
    """Butterfly rounds, plus the fold and the unfold when P is not a power of two."""
    f = largest_power_of_two(P)
    return 0 if P == 1 else f if 2 ** f == P else f + 2


def gtopk_merges(P):
    f = largest_power_of_two(P)
    return 0 if P == 1 else f if 2 ** f == P else f + 1


class Model:
    def __init__(self, profile, workers, density):
        self.p = profile
        self.P = workers
        self.rho = density
        self.Pc = profile["workers"]  # the workers the collectives were measured on

    def p2p(self, key):
        """A message of m bytes: a + b * m, and the CPU share per byte."""
        if key in self.p:
            c = self.p[key]
            return c["alpha"], c["beta"], c.get("cpu_per_byte", 0.0)
        ag = self.p["allgather"]
        if self.Pc <= 1:
            return ag["alpha"], ag["beta"], ag.get("cpu_per_byte", 0.0)
        # a ring all-gather on Pc workers: Pc - 1 messages of the same size
        return (ag["alpha"] / (self.Pc - 1), ag["beta"] * self.Pc / (self.Pc - 1),
                ag.get("cpu_per_byte", 0.0))

    def group(self, n, collective):
        """(compute-stream seconds, comm-stream seconds) of a group of n elements."""
        P, k, pts = self.P, topk_count(n, self.rho), self.p["topk"]["points"]
        if collective == "allreduce":
            c = self.p["allreduce"]
            return c.get("cpu_per_byte", 0.0) * 4 * n, c["alpha"] + c["beta"] * 4 * n
        if collective == "allgather":
            c = self.p["allgather"]
            nbytes = 8 * k * P
            return (topk_seconds(pts, n) + c.get("cpu_per_byte", 0.0) * nbytes,
                    c["alpha"] + c["beta"] * nbytes)
        if collective == "gtopk":
            a, b, cpu = self.p2p("gtopk")
            rounds, merges = gtopk_rounds(P), gtopk_merges(P)
            return (topk_seconds(pts, n) + cpu * rounds * 8 * k,
                    rounds * (a + b * 8 * k) + merges * topk_seconds(pts, 2 * k))
        if collective == "sparse-allreduce":
            a, b, cpu = self.p2p("sparse_allreduce")
            rounds = gtopk_rounds(P)                  # the boundaries, folded like gtopk
            up = math.ceil(math.log2(P)) if P > 1 else 0
            reduce_msg = 8 * k / P                    # one region's share of the selection
            gather_msg = min(8 * k, 4 * n / P)        # one reduced region, dense once half full
            nbytes = rounds * 8 * (P - 1) + (P - 1) * (reduce_msg + gather_msg)
            messages = rounds + (P - 1) + up
            return topk_seconds(pts, n) + cpu * nbytes, messages * a + nbytes * b
        raise ValueError(collective)

    def predict(self, groups):
        """groups: (backward seconds, elements, collective) in backprop order."""
        x = y = backward = 0.0
        for b, n, c in groups:
            s, comm = self.group(n, c)
            backward += b
            x += s
            y = max(y, backward + x) + comm
        return y


def plan_groups(profile, plan):
    index = {layer["name"]: layer for layer in profile["layers"]}
    groups = []
    for g in plan["groups"]:
        layers = [index[name] for name in g["layers"]]
        # backward of a group's layers in backprop order (last first)
        b = 0.0
        for layer in reversed(layers):
            b += layer["backward"]
        groups.append((b, sum(l["numel"] for l in layers), g["collective"]))
    return groups


def best_plan(model, layers, collectives):
    """The least predicted time over every grouping and every per-group choice."""
    order = list(reversed(layers))  # backprop order
    best = math.inf
    L = len(order)
    for cuts in range(2 ** (L - 1)):
        runs, start = [], 0
        for q in range(L):
            if q == L - 1 or cuts >> q & 1:
                runs.append(order[start:q + 1])
                start = q + 1
        for choice in itertools.product(collectives, repeat=len(runs)):
            groups = []
            for run, c in zip(runs, choice):
                b = 0.0
                for layer in run:
                    b += layer["backward"]
                groups.append((b, sum(l["numel"] for l in run), c))
            best = min(best, model.predict(groups))
    return best


def optimum(model, layers, collectives):
    """The least predicted time over every grouping and every per-group choice, and a grouping
    that reaches it: (seconds, [(run in backprop order, collective)]).

    Exact for any number of layers: after the groups that end at a layer, the rest of the
    pipeline depends only on (x, y) (the compute and communication streams' clocks; backward is
    the same for every grouping), and predict() never decreases in either, so a state that is no
    better in both than another (dominated) is dropped. The Pareto front of (x, y) at each cut
    replaces brute force's 2^(L-1) groupings."""
    order = list(reversed(layers))  # backprop order
    L = len(order)
    backward = [0.0]
    for layer in order:
        backward.append(backward[-1] + layer["backward"])
    fronts = [[(0.0, 0.0, None)]]  # per cut: (x, y, (previous cut, state index, collective))
    for i in range(1, L + 1):
        states = []
        for j in range(i):
            n = sum(l["numel"] for l in order[j:i])
            for c in collectives:
                s, comm = model.group(n, c)
                for q, (x, y, _) in enumerate(fronts[j]):
                    x2 = x + s
                    states.append((x2, max(y, backward[i] + x2) + comm, (j, q, c)))
        states.sort(key=lambda t: (t[0], t[1]))
        front = []
        for st in states:  # increasing x: keep each state whose y is below every earlier one
            if not front or st[1] < front[-1][1]:
                front.append(st)
        fronts.append(front)
    q = min(range(len(fronts[L])), key=lambda k: fronts[L][k][1])
    best, runs, i = fronts[L][q][1], [], L
    while i > 0:
        j, q, c = fronts[i][q][2]
        runs.append((order[j:i], c))
        i = j
    return best, runs[::-1]


SEARCHED = {"auto": ["allgather", "allreduce", "gtopk", "sparse-allreduce"],
            "omgs": ["allgather"], "mgwfbp": ["allreduce"], "gtopk": ["gtopk"],
            "sparse-allreduce": ["sparse-allreduce"]}


def main(argv):
    profile = json.load(open(argv[1]))
    workers, density, brute, exact, expect = (profile["workers"], profile["density"], False,
                                              False, {})
    args = iter(argv[2:])
    for a in args:
        if a == "--workers":
            workers = int(next(args))
        elif a == "--density":
            density = float(next(args))
        elif a == "--brute-force":
            brute = True
        elif a == "--optimum":
            exact = True
        elif a == "--expect":
            name, value = next(args).split("=")
            expect[name] = float(value)
        else:
            sys.exit(f"cost_model.py: unknown option {a}")
    plans = json.load(sys.stdin)
    if isinstance(plans, dict):
        plans = [plans]
    model = Model(profile, workers, density)
    ok = True
    for plan in plans:
        mine = model.predict(plan_groups(profile, plan))
        theirs = plan["predicted_seconds"]
        line = f"{plan['strategy']}: mgs-plan {theirs!r}, model {mine!r}"
        if abs(mine - theirs) > 1e-12 * max(abs(mine), abs(theirs)):
            print("MISMATCH " + line)
            ok = False
        else:
            print("ok " + line)
        if plan["strategy"] in expect and abs(expect[plan["strategy"]] - theirs) > 1e-12 * theirs:
            print(f"MISMATCH {plan['strategy']}: expected {expect[plan['strategy']]!r}")
            ok = False
        if brute and plan["strategy"] in SEARCHED:
            best = best_plan(model, profile["layers"], SEARCHED[plan["strategy"]])
            if theirs > best * (1 + 1e-12):
                print(f"NOT OPTIMAL {plan['strategy']}: brute force finds {best!r}")
                ok = False
        if exact and plan["strategy"] in SEARCHED:
            best, runs = optimum(model, profile["layers"], SEARCHED[plan["strategy"]])
            # the grouping found, recomputed as a plan is (the cut's sums round differently)
            seconds = model.predict([(sum(l["backward"] for l in reversed(run)),
                                      sum(l["numel"] for l in run), c) for run, c in runs])
            print(f"optimum {plan['strategy']}: {seconds!r} in {len(runs)} groups")
            for run, c in runs:
                label = (f'comm.bucket = "{run[-1]["name"]}..{run[0]["name"]}"' if len(run) > 1
                         else run[0]["name"])
                print(f'  {label} comm.collective = "{c}"')
            if abs(theirs - seconds) > 1e-12 * seconds:
                print(f"NOT OPTIMAL {plan['strategy']}: mgs-plan {theirs!r}, the optimum {seconds!r}"
                      if theirs > seconds else
                      f"MISMATCH {plan['strategy']}: mgs-plan {theirs!r} beats the optimum {seconds!r}")
                ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main(sys.argv)
