#!/usr/bin/python3
"""One rank of the PyTorch baselines that bench/torch_baseline_bench.py runs
against mgs (torch.distributed, gloo, env:// rendezvous: RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT, as netcluster.sh spawn sets them).

    torch_baseline_worker.py --model NAME --mode ddp|plan [--plan PLAN.json]
        [--batch-size 16] [--density 0.001] [--iters 24] [--warmup 4]
        [--threads 1] [--lr 0.01]

--mode ddp: torch.nn.parallel.DistributedDataParallel (dense, bucketed
allreduce overlapped with backward: PyTorch's own data parallelism).
--mode plan: the paper's way of running merged gradient sparsification in
PyTorch (a hook per parameter copies its gradient into its group's merged
buffer; when a group's last gradient arrives, error feedback, torch.topk of
the magnitudes, and an asynchronous allgather of values and int32 indices
start; after backward every group is waited for, scatter-added with
index_add_ and averaged), with the grouping of an mgs-plan PLAN.json, so it
runs the same algorithm on the same groups as the mgs executable. A group
whose collective is "allreduce" is summed densely with an asynchronous
all_reduce instead.

--local-ranks P: run P ranks on this host (a free port on 127.0.0.1) instead
of being one; the job fails as soon as one rank fails. --save FILE: rank 0
writes the trained parameters (numpy .npz, by name).

Both train SGD (momentum 0.9) on preloaded random batches of the model's
example shape (token ids and a label per token for language models; so
data loading costs PyTorch nothing), with torch.set_num_threads(--threads).
Rank 0 prints one line: "torch-baseline: ms/iter X over N iterations (first W
skipped)[, of which top-k with error feedback T], loss A -> B".
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts"))
import export_models  # noqa: E402  (the same model definitions mgs compiles)


class MergedExchange:
    """The gradient exchange of an mgs plan, done the way PyTorch code does
    it: per-parameter hooks, merged buffers, torch.topk, async collectives."""

    def __init__(self, model, groups, density, workers):
        named = dict(model.named_parameters())
        seen = set()
        self.groups = []
        self.sparsify_seconds = 0.0  # error feedback + torch.topk, summed
        self.workers = workers
        for gi, g in enumerate(groups):
            params = []
            for name in g["layers"]:
                if name not in named:
                    raise SystemExit(f"torch_baseline_worker.py: error: plan group {gi}: layer "
                                     f"'{name}' is not a parameter of the model")
                if name in seen:
                    raise SystemExit(f"torch_baseline_worker.py: error: plan: layer '{name}' "
                                     f"is in two groups")
                seen.add(name)
                params.append(named[name])
            n = sum(p.numel() for p in params)
            sparse = g.get("collective", "allgather") == "allgather"
            group = {"params": params, "n": n, "k": max(1, int(density * n)), "sparse": sparse,
                     "buf": torch.zeros(n), "residual": torch.zeros(n) if sparse else None,
                     "ready": 0, "works": [], "slices": []}
            off = 0
            for p in params:
                group["slices"].append((p, off, p.numel()))
                p.register_hook(self._hook(group, off, p.numel()))
                off += p.numel()
            self.groups.append(group)
        missing = [n for n in named if n not in seen]
        if missing:
            raise SystemExit(f"torch_baseline_worker.py: error: plan: parameters in no group: "
                             f"{', '.join(missing)}")

    def _hook(self, group, off, numel):
        def on_grad(grad):
            group["buf"][off:off + numel].copy_(grad.reshape(-1))
            group["ready"] += 1
            if group["ready"] == len(group["params"]):
                self._start(group)
            return None
        return on_grad

    def _start(self, g):
        if not g["sparse"]:
            g["works"] = [dist.all_reduce(g["buf"], async_op=True)]
            return
        t0 = time.perf_counter()
        acc = g["residual"]
        acc.add_(g["buf"])  # error feedback
        _, idx = torch.topk(acc.abs(), g["k"], sorted=False)
        values = acc[idx]
        acc[idx] = 0.0
        self.sparsify_seconds += time.perf_counter() - t0
        g["values"] = [torch.empty_like(values) for _ in range(self.workers)]
        g["indices"] = [torch.empty(g["k"], dtype=torch.int32) for _ in range(self.workers)]
        g["works"] = [dist.all_gather(g["values"], values, async_op=True),
                      dist.all_gather(g["indices"], idx.to(torch.int32), async_op=True)]

    def finish(self):
        """Waits for every group's collective and sets the parameters'
        gradients to the averaged result."""
        for g in self.groups:
            for w in g["works"]:
                w.wait()
            if g["sparse"]:
                total = torch.zeros(g["n"])
                for v, i in zip(g["values"], g["indices"]):
                    total.index_add_(0, i.to(torch.int64), v)
            else:
                total = g["buf"]
            total.div_(self.workers)
            for p, off, numel in g["slices"]:
                p.grad = total[off:off + numel].view_as(p).clone()
            g["ready"], g["works"] = 0, []


def run_local(ranks, argv):
    """Runs this script as `ranks` processes on this host (env:// rendezvous
    on a free port of 127.0.0.1); returns the first failing exit status, or
    0. When one rank fails the others are ended: they would wait for it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__)] + argv,
                              env=dict(os.environ, RANK=str(r), WORLD_SIZE=str(ranks),
                                       LOCAL_RANK=str(r), MASTER_ADDR="127.0.0.1",
                                       MASTER_PORT=str(port)))
             for r in range(ranks)]
    status = 0
    while any(p.poll() is None for p in procs):
        failed = [p.returncode for p in procs if p.returncode]
        if failed and not status:
            status = failed[0]
            for p in procs:
                if p.poll() is None:
                    p.kill()
        time.sleep(0.05)
    return status or next((p.returncode for p in procs if p.returncode), 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--mode", choices=["ddp", "plan"], required=True)
    ap.add_argument("--plan", help="mgs-plan output (JSON) for --mode plan")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--iters", type=int, default=24)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--local-ranks", type=int, metavar="P",
                    help="run P ranks on this host instead of being one")
    ap.add_argument("--save", metavar="FILE.npz", help="rank 0 writes the trained parameters")
    args = ap.parse_args()
    if args.mode == "plan" and not args.plan:
        ap.error("--mode plan needs --plan PLAN.json")
    if args.iters <= args.warmup:
        ap.error("--iters must be more than --warmup")

    if args.local_ranks:
        if args.local_ranks < 1:
            ap.error("--local-ranks must be at least 1")
        argv, skip = [], False
        for a in sys.argv[1:]:  # the same arguments, less --local-ranks P
            if skip or a.startswith("--local-ranks"):
                skip = not skip and a == "--local-ranks"
                continue
            argv.append(a)
        sys.exit(run_local(args.local_ranks, argv))
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        if var not in os.environ:
            ap.error(f"{var} is not set: launch one process per rank with RANK, WORLD_SIZE, "
                     f"MASTER_ADDR and MASTER_PORT (netcluster.sh spawn, torchrun), or use "
                     f"--local-ranks P")

    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo")
    rank, workers = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model, example = export_models.build(args.model)
    model.train()
    gen = torch.Generator().manual_seed(1 + rank)
    shape = (args.batch_size,) + tuple(example.shape[1:])
    if example.is_floating_point():
        batches = [(torch.randn(shape, generator=gen),
                    torch.randint(0, 10, (args.batch_size,), generator=gen))
                   for _ in range(args.iters)]
    else:  # a language model: token ids, and a label per token
        vocab = model.embed.num_embeddings
        batches = [(torch.randint(0, vocab, shape, generator=gen),
                    torch.randint(0, vocab, (args.batch_size * shape[1],), generator=gen))
                   for _ in range(args.iters)]

    if args.mode == "ddp":
        net, exchange = torch.nn.parallel.DistributedDataParallel(model), None
    else:
        with open(args.plan) as f:
            plan = json.load(f)
        for p in model.parameters():  # every worker starts from rank 0's parameters
            dist.broadcast(p.data, 0)
        net, exchange = model, MergedExchange(model, plan["groups"], args.density, workers)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    losses = []
    for it, (x, y) in enumerate(batches):
        if it == args.warmup:
            dist.barrier()
            t0 = time.perf_counter()
            if exchange:
                exchange.sparsify_seconds = 0.0
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        if exchange:
            exchange.finish()
        opt.step()
        losses.append(loss.item())
    timed = args.iters - args.warmup
    ms = (time.perf_counter() - t0) * 1e3 / timed
    if rank == 0:
        topk = (f", of which top-k with error feedback {exchange.sparsify_seconds * 1e3 / timed:.2f}"
                if exchange else "")
        print(f"torch-baseline: ms/iter {ms:.2f} over {timed} iterations (first {args.warmup} "
              f"skipped){topk}, loss {losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
        if args.save:
            import numpy as np
            np.savez(args.save, **{n: p.detach().numpy() for n, p in model.named_parameters()})
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
