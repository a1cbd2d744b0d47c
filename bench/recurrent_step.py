#!/usr/bin/python3
"""Training-step time of the recurrent models: mgs against PyTorch CPU with
the same model, batch and threads, in one run.

    bench/recurrent_step.py [BUILD_DIR] [--models lstmlm_medium,gru,bilstm]
        [--batch-size 16] [--threads 2] [--iters 60] [--rounds 3]
        [--python /usr/bin/python3,VENV/bin/python] [--mgsc PATH]
        [--baseline-mgsc PATH] [--out FILE]
        [--device cuda --exe NAME=EXE ... --digits DIGITS.csv.gz]

mgs: mgsc compiles the model of scripts/export_models.py (opset 15) into a
training executable, which trains on synthetic data (lstmlm*: token
sequences with a label per token; the digits models: sklearn's digits); its
ms/step comes from its own samples/s over the progress windows after the
first (which includes primitive creation). PyTorch: the module itself, same
seed, SGD with momentum, --iters steps timed after 3 warm-up steps, with
torch.set_num_threads(--threads), under each interpreter of --python (one
PyTorch version each; by default Debian's torch 1.13 and the PyTorch 2.x venv
that scripts/setup.sh --bench makes, when there is one; columns named by
their torch version). --mgsc: another build's mgsc (its runtime is the one
the executables link); --baseline-mgsc: a second one measured in the same
rounds (column "mgs base"), e.g. main's build against a branch's. Both run
with OMP_NUM_THREADS=--threads. Runs of a round alternate; the table shows
each model's median over --rounds rounds and the ratio mgs/PyTorch (goal <=
1.0) of the medians.

--device cuda: both sides on the GPU (mgsc --target=cuda executables, given
by --exe where no mgsc is at hand, e.g. bench/gpu_check.sh's bundle; PyTorch
--python's, default python3, fp32 without TF32, its loss read back each step
as the executables do), and the executables once more with --cuda-graph
(column "graph ms": the step captured once as a CUDA graph and replayed; a
line says why where it runs kernel by kernel).

Each model's "cpu" line gives the CPU time (user + system, all threads) per
step, medians over the rounds: PyTorch's over its timed steps, mgs's over its
whole run (start-up, data loading and the first step included, so it is an
upper bound). On a machine shared with other work the wall times vary with
the load while the CPU times mostly do not; with 1 thread the CPU time is the
work itself, with more it also counts the time threads spin at barriers.
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import benchlib  # noqa: E402
TOKEN_MODELS = {"lstmlm": (50, 12), "lstmlm_medium": (2000, 20)}


def torch_child(model_name, batch, threads, iters, device):
    """Runs in a child process: prints PyTorch's ms/step, its CPU ms/step and its version."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import export_models
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model, _ = export_models.build(model_name)
    gen = torch.Generator().manual_seed(1)
    if model_name in TOKEN_MODELS:
        vocab, length = TOKEN_MODELS[model_name]
        batches = [(torch.randint(0, vocab, (batch, length), generator=gen),
                    torch.randint(0, vocab, (batch * length,), generator=gen)) for _ in range(8)]
    else:
        batches = [(torch.rand(batch, 1, 8, 8, generator=gen),
                    torch.randint(0, 10, (batch,), generator=gen)) for _ in range(8)]
    ms, cpu_ms = benchlib.torch_sgd_step_ms(model, batches, iters, device=device)
    print(f"{ms:.4f} {cpu_ms:.4f} {torch.__version__}")


def run(cmd, env=None):
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.returncode:
        sys.exit(f"recurrent_step: failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout[-3000:]}")
    return r.stdout


def children_cpu():
    """CPU seconds (user + system) of the children waited for so far."""
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def prepare(model_name, build, mgsc, work, batch, iters, exe=None, cuda=False,
            digits=benchlib.DIGITS):
    """Exports and compiles the model (unless exe is given); returns the
    executable's command."""
    if exe:
        return command(model_name, exe, work, batch, iters, digits)
    models = os.path.join(build, "test", "models")
    onnx = os.path.join(models, f"{model_name}-opset15.onnx")
    if not os.path.exists(onnx):
        os.makedirs(work, exist_ok=True)
        onnx = os.path.join(work, f"{model_name}-opset15.onnx")
        if not os.path.exists(onnx):
            run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "export_models.py"), work,
                 f"{model_name}:15"])
    exe = os.path.join(work, f"train_{model_name}" + ("_cuda" if cuda else ""))
    run([mgsc, onnx, "--batch-size", str(batch), "-o", exe, "--quiet",
         *(["--target=cuda"] if cuda else [])])
    return command(model_name, exe, work, batch, iters, digits)


def command(model_name, exe, work, batch, iters, digits):
    """The training command of exe, with its synthetic data made in work."""
    if model_name in TOKEN_MODELS:
        vocab, length = TOKEN_MODELS[model_name]
        data = os.path.join(work, f"tokens-{model_name}")
        run([sys.executable, os.path.join(ROOT, "scripts", "make_token_data.py"), data,
             "--samples", str(batch * (iters + 8)), "--vocab", str(vocab), "--length",
             str(length)])
        args = ["--data", os.path.join(data, "tokens.npy"), "--labels",
                os.path.join(data, "next.npy"), "--data-format", "npy"]
        epochs = 1
    else:
        args = ["--data", digits]
        # 1797 digits, 10% held out: enough epochs for --iters steps
        epochs = max(1, -(-iters * batch // 1617))
    return [exe] + args + ["--epochs", str(epochs), "--holdout", "0", "--lr", "0.01",
                           "--progress-every", "10"]


def mgs_ms(cmd, batch, env):
    """The executable's ms/step (steady windows) and CPU ms/step (whole run)."""
    cpu = children_cpu()
    out = run(cmd, env)
    cpu = children_cpu() - cpu
    for line in out.splitlines():
        if line.startswith("--cuda-graph: "):  # it ran kernel by kernel: say why
            print(line, flush=True)
    rates = [float(m) for m in re.findall(r"([0-9.]+) samples/s", out)]
    if not rates:
        sys.exit(f"recurrent_step: no samples/s in the output of {' '.join(cmd)}:\n{out[-2000:]}")
    per_epoch = re.search(r"(\d+) iterations per epoch", out)
    steps = int(per_epoch.group(1)) * int(cmd[cmd.index("--epochs") + 1]) if per_epoch else 1
    steady = rates[1:] if len(rates) > 1 else rates
    return batch / statistics.median(steady) * 1000, cpu / steps * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", default="lstmlm_medium,gru,bilstm")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--python", default=benchlib.default_pythons(),
                    help="comma-separated interpreters, one PyTorch each (default: Debian's "
                         "torch 1.13 and the PyTorch 2.x venv of scripts/setup.sh --bench, when "
                         "there is one)")
    ap.add_argument("--mgsc", help="the mgsc to use (default: BUILD/bin/mgsc)")
    ap.add_argument("--baseline-mgsc", help="a second mgsc measured alongside")
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--exe", action="append", default=[], metavar="NAME=EXE",
                    help="a compiled executable of model NAME (no mgsc then)")
    ap.add_argument("--digits", default=benchlib.DIGITS, help="the digits CSV (.gz)")
    ap.add_argument("--torch-child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_child:
        torch_child(args.torch_child, args.batch_size, args.threads, args.iters, args.device)
        return
    cuda = args.device == "cuda"
    if cuda and args.python == ap.get_default("python"):
        args.python = "python3"  # Debian's torch 1.13 has no CUDA
    prebuilt = {}
    for item in args.exe:
        name, sep, path = item.partition("=")
        if not sep or not os.path.exists(path):
            sys.exit(f"recurrent_step: --exe {item}: expected NAME=EXE, EXE an existing file")
        prebuilt[name] = os.path.abspath(path)

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    mgsc = os.path.abspath(args.mgsc or os.path.join(args.build, "bin", "mgsc"))
    work = os.path.join(args.build, "bench", "recurrent")
    os.makedirs(work, exist_ok=True)
    models = args.models.split(",")
    pythons = args.python.split(",")
    cmds = {m: prepare(m, args.build, mgsc, work, args.batch_size, args.iters,
                       prebuilt.get(m), cuda, args.digits) for m in models}
    sides = ["mgs"]
    if cuda:  # the same executables with --cuda-graph (the step captured once, replayed)
        sides.append("mgs graph")
        graph_cmds = {m: cmds[m] + ["--cuda-graph"] for m in models}
    if args.baseline_mgsc:
        sides.append("mgs base")
        base_work = os.path.join(work, "baseline")
        os.makedirs(base_work, exist_ok=True)
        base_cmds = {m: prepare(m, args.build, os.path.abspath(args.baseline_mgsc), base_work,
                                args.batch_size, args.iters) for m in models}
    times = {(m, s): [] for m in models for s in sides + pythons}
    cpus = {(m, s): [] for m in models for s in sides + pythons}
    versions = {s: s for s in sides}
    for rnd in range(args.rounds):
        for m in models:
            for side, side_cmds in [("mgs", cmds)] + (
                    [("mgs graph", graph_cmds)] if cuda else []) + (
                    [("mgs base", base_cmds)] if args.baseline_mgsc else []):
                wall, cpu = mgs_ms(side_cmds[m], args.batch_size, env)
                times[(m, side)].append(wall)
                cpus[(m, side)].append(cpu)
            for py in pythons:
                out = run([py, os.path.abspath(__file__), args.build, "--batch-size",
                           str(args.batch_size), "--threads", str(args.threads), "--iters",
                           str(args.iters), "--device", args.device, "--torch-child", m],
                          env).split()
                times[(m, py)].append(float(out[-3]))
                cpus[(m, py)].append(float(out[-2]))
                versions[py] = "torch " + out[-1]
            print(f"round {rnd + 1} {m}: " + ", ".join(
                f"{versions[s]} {times[(m, s)][-1]:.2f}" for s in sides + pythons), flush=True)

    lines = [f"# bench/recurrent_step.py --models {args.models} --batch-size {args.batch_size} "
             f"--threads {args.threads} --iters {args.iters} --rounds {args.rounds} "
             f"--python {args.python} --device {args.device}" +
             (f" --mgsc {mgsc}" if args.mgsc else "") +
             (f" --baseline-mgsc {args.baseline_mgsc}" if args.baseline_mgsc else ""),
             f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs; "
             f"ms per training step, median of {args.rounds} rounds (each round's values in [])"]
    header = f"{'model':15} {'mgs ms':>8}"
    if cuda:
        header += f" {'graph ms':>9} {'graph/mgs':>9}"
    if args.baseline_mgsc:
        header += f" {'mgs base ms':>11} {'mgs/base':>8}"
    for py in pythons:
        header += f" {versions[py] + ' ms':>22} {'mgs/torch':>9}"
    lines.append(header)
    for m in models:
        med = statistics.median(times[(m, "mgs")])
        row = f"{m:15} {med:8.2f}"
        if cuda:
            gmed = statistics.median(times[(m, "mgs graph")])
            row += f" {gmed:9.2f} {gmed / med:9.3f}"
        if args.baseline_mgsc:
            bmed = statistics.median(times[(m, "mgs base")])
            row += f" {bmed:11.2f} {med / bmed:8.3f}"
        for py in pythons:
            tmed = statistics.median(times[(m, py)])
            row += f" {tmed:22.2f} {med / tmed:9.3f}"
        lines.append(row)
        lines.append("  rounds: " + "; ".join(
            f"{versions[s]} [{' '.join(f'{v:.2f}' for v in times[(m, s)])}]"
            for s in sides + pythons))
        mgs_cpu = statistics.median(cpus[(m, "mgs")])
        lines.append("  cpu ms/step: " + "; ".join(
            f"{versions[s]} {statistics.median(cpus[(m, s)]):.2f}" +
            ("" if s == "mgs" else f" (mgs/that {mgs_cpu / statistics.median(cpus[(m, s)]):.3f})")
            for s in sides + pythons))
    lines.append("mgs/torch <= 1.0: mgs is as fast or faster (the goal).")
    print("\n".join(lines))
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
