"""What the distributed benchmarks share: running a command with a bound,
reading the executables' progress lines, synthetic CIFAR-10 data, exporting a
model with torch, and a netcluster (the netcluster.sh that --netcluster or
$MGS_NETCLUSTER names; docs/benchmarks.md) that is taken down whatever
happens."""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The netcluster tool is not part of the repository: --network netcluster
# needs the path of a netcluster.sh (docs/benchmarks.md, "The netcluster"),
# given by the benches' --netcluster option or this environment variable.
NETCLUSTER_ENV = "MGS_NETCLUSTER"
# Debian's scikit-learn ships the digits (1,797 8x8 images) as a CSV.
DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
SETUP_HINT = "run scripts/setup.sh --bench"
NETCLUSTER_STATE = os.environ.get("NC_STATE", "/tmp/netcluster-state")
# The runtime's collectives are nonblocking (MPI_Iallreduce / MPI_Iallgather),
# which Open MPI 4.1 runs in coll/libnbc: its ring allreduce is what reaches
# the link rate (coll/tuned's settings only reach the blocking broadcast).
RING = ["--mca", "coll_libnbc_iallreduce_algorithm", "1",
        "--mca", "coll_tuned_use_dynamic_rules", "1",
        "--mca", "coll_tuned_allreduce_algorithm", "4",
        "--mca", "coll_tuned_allgather_algorithm", "4"]
RING_TEXT = ("ring iallreduce (coll_libnbc_iallreduce_algorithm 1), libnbc's default "
             "iallgather")
RATE_RE = re.compile(r"iter (\d+)/\d+ loss \S+\s+([0-9.]+) samples/s")


def q(cmd):
    return shlex.join(str(c) for c in cmd)


def run_checked(cmd, what, timeout=600, env=None, cwd=None):
    """Runs cmd in its own process group; returns its stdout+stderr; on
    failure (or after timeout seconds, when the whole group is killed)
    raises RuntimeError with what happened and the output's tail."""
    p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, universal_newlines=True, env=env, cwd=cwd,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        raise RuntimeError(f"{what}: timed out after {timeout} s: {q(cmd)}\n{out[-3000:]}")
    if p.returncode != 0:
        raise RuntimeError(f"{what}: exit status {p.returncode}: {q(cmd)}\n{out[-3000:]}")
    return out


def window_rates(output, drop_last=False):
    """samples/s of every progress window of an mgs executable's output but
    the first (and the last, with drop_last)."""
    rates = [float(r) for _, r in RATE_RE.findall(output)]
    if len(rates) < 2 + drop_last:
        raise RuntimeError(f"too few progress windows in the output:\n{output[-2000:]}")
    return rates[1:len(rates) - drop_last]


def window_ms(output, global_batch, drop_last=False):
    """ms per iteration of every progress window of an mgs executable's
    output but the first (and the last, with drop_last)."""
    return [global_batch / r * 1000.0 for r in window_rates(output, drop_last)]


def torch_sgd_step_ms(model, batches, iters, warmup=3, device="cpu"):
    """PyTorch's wall-clock and CPU (user + system, all threads) ms per
    training step of model (cross-entropy, SGD with momentum 0.9, lr 0.01):
    warmup steps on the first batches, then iters timed steps cycling
    through batches, a list of (input, label) pairs. Imports torch here, so
    that it runs in whichever interpreter calls it. device "cuda": the model
    on the GPU, fp32 without TF32, each step copying its batch to the GPU
    and reading its loss back (as mgs's executables do)."""
    import time
    import torch
    import torch.nn.functional as F
    gpu = device == "cuda"
    if gpu:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        model = model.cuda()
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step(x, y):
        if gpu:
            x, y = x.cuda(), y.cuda()
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if gpu:
            loss.item()
    for x, y in batches[:warmup]:
        step(x, y)
    if gpu:
        torch.cuda.synchronize()
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(iters):
        step(*batches[i % len(batches)])
    if gpu:
        torch.cuda.synchronize()
    return ((time.perf_counter() - start) / iters * 1000,
            (time.process_time() - cpu) / iters * 1000)


def write_cifar(path, n, seed=0):
    """n synthetic CIFAR-10 binary records (1 label byte + 3072 pixel bytes)."""
    rng = np.random.default_rng(seed)
    records = np.concatenate([rng.integers(0, 10, (n, 1)), rng.integers(0, 256, (n, 3072))], 1)
    records.astype(np.uint8).tofile(path)


def export_model(name, out_dir):
    """Exports scripts/export_models.py's model NAME (opset 15, seed 0) with
    /usr/bin/python3 into out_dir; returns (path, parameter count)."""
    out = run_checked(["/usr/bin/python3", os.path.join(ROOT, "scripts", "export_models.py"),
                       out_dir, name], f"exporting {name} (/usr/bin/python3, torch)",
                      timeout=300)
    m = re.search(r"exported (\S+) \(([0-9,]+) parameters\)", out)
    if not m:
        raise RuntimeError(f"exporting {name}: unexpected output:\n{out[-2000:]}")
    return m.group(1), int(m.group(2).replace(",", ""))


class NetCluster:
    """P network namespaces joined by a RATE-limited switch, up for the
    duration of a with-block (needs root). It is taken down on leaving the
    block, also on an exception, SIGTERM or SIGHUP; one that someone else
    left up is refused, not taken over. With network "loopback" nothing is
    brought up and `text` is `loopback_text`. `tool` is the netcluster.sh
    to use (None: $MGS_NETCLUSTER)."""

    def __init__(self, prog, network, workers, rate, loopback_text, tool=None):
        self.prog, self.workers, self.rate = prog, workers, rate
        self.tool = tool or os.environ.get(NETCLUSTER_ENV) or None
        self.enabled = network == "netcluster"
        self.up = False
        self.text = "" if self.enabled else loopback_text

    def check(self):
        """Why this cluster cannot be brought up, or None."""
        if not self.enabled:
            return None
        if not self.tool:
            return (f"--network netcluster needs the netcluster tool: set {NETCLUSTER_ENV} (or "
                    f"pass --netcluster) to the path of netcluster.sh (docs/benchmarks.md)")
        if not os.path.isfile(self.tool) or not os.access(self.tool, os.X_OK):
            return (f"{NETCLUSTER_ENV} / --netcluster: {self.tool} is not an executable file "
                    f"(set it to the path of netcluster.sh; docs/benchmarks.md)")
        if os.geteuid() != 0:
            return "--network netcluster needs root (network namespaces, tc)"
        if os.path.exists(os.path.join(NETCLUSTER_STATE, "config")):
            return (f"a netcluster is already up ({NETCLUSTER_STATE}): someone may be using it; "
                    f"take it down first ({self.tool} down)")
        for tool in ("ip", "tc", "ping"):
            if not shutil.which(tool):
                return (f"netcluster.sh up needs '{tool}', which is not installed "
                        f"({SETUP_HINT}; ping: iputils-ping, ip/tc: iproute2)")
        return None

    def __enter__(self):
        if not self.enabled:
            return self

        def on_signal(signum, _frame):
            raise SystemExit(128 + signum)
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGHUP, on_signal)
        self.up = True  # from here on, take it down whatever happens
        try:
            out = run_checked([self.tool, "up", self.workers, self.rate], "netcluster.sh up",
                              timeout=120)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        m = re.search(r"netcluster: (up: .*)", out)
        self.text = (f"netcluster {self.rate}: {self.workers} namespaces, one rank each, "
                     f"TCP over rate-limited veth/bridge; {m.group(1) if m else out.strip()}")
        return self

    def __exit__(self, *exc):
        if self.up:
            self.up = False
            r = subprocess.run([self.tool, "down"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, universal_newlines=True)
            if r.returncode != 0:
                print(f"{self.prog}: netcluster.sh down failed:\n{r.stdout}", file=sys.stderr)
        return False


def torch2_python():
    """The Python of the PyTorch 2.x venv that `scripts/setup.sh --bench` makes
    ($MGS_TORCH2_VENV, default ~/.cache/mgs-torch2), or None when there is none."""
    venv = os.environ.get("MGS_TORCH2_VENV", os.path.expanduser("~/.cache/mgs-torch2"))
    python = os.path.join(venv, "bin", "python")
    return python if os.path.exists(python) else None


def default_pythons():
    """The --python default of the benches that time PyTorch beside mgs:
    Debian's torch 1.13, then the PyTorch 2.x venv when there is one."""
    torch2 = torch2_python()
    return "/usr/bin/python3" + (f",{torch2}" if torch2 else "")


TORCH_SIDE = "torch-side"


def print_torch_side(*fields):
    """A PyTorch child's result line, read back by torch_side()."""
    import torch
    print(TORCH_SIDE, *fields, torch.__version__, flush=True)


def torch_side(python, argv, env=None, timeout=1200):
    """Runs a bench's PyTorch side (argv: the script and its arguments) under
    `python`; returns (the fields print_torch_side() printed, "torch VERSION")."""
    out = run_checked([python] + list(argv), f"the PyTorch side under {python}",
                      timeout=timeout, env=env)
    lines = [line.split()[1:] for line in out.splitlines() if line.startswith(TORCH_SIDE + " ")]
    if not lines:
        raise RuntimeError(f"the PyTorch side under {python} printed no result:\n{out[-3000:]}")
    return lines[-1][:-1], "torch " + lines[-1][-1]


def require_matplotlib(option):
    """Raises RuntimeError, naming `option` and the set-up step, when
    matplotlib cannot be imported (checked at start-up, not after the run)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise RuntimeError(f"{option} needs matplotlib, which cannot be imported ({e}): "
                           f"{SETUP_HINT} (python3-matplotlib)")


def check_setup(args):
    """Checks what every distributed benchmark needs (args.build, args.iters,
    args.progress_every); returns the paths of mgsc and mgs-plan, or raises
    RuntimeError saying what is missing."""
    if args.iters < 2 * args.progress_every:
        raise RuntimeError("--iters must be at least 2 x --progress-every (the first window is "
                           "skipped)")
    bin_dir = os.path.join(os.path.abspath(args.build), "bin")
    tools = os.path.join(bin_dir, "mgsc"), os.path.join(bin_dir, "mgs-plan")
    for tool in tools:
        if not os.access(tool, os.X_OK):
            raise RuntimeError(f"{tool} not found (build the project first)")
    if not shutil.which("mpirun"):
        raise RuntimeError("mpirun not found (run scripts/setup.sh: openmpi-bin)")
    return tools


def mpi_launch(network, workers, coll="ring", omp_threads=1, tool=None):
    """The command prefix that starts an mgs executable on `workers` MPI
    ranks: loopback = mpirun on this machine, netcluster = one rank per host
    of a netcluster that is up (`tool`: its netcluster.sh, NetCluster.tool).
    Returns (prefix, text on the collectives)."""
    if network == "loopback":
        launcher = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(workers),
                    "--mca", "mpi_yield_when_idle", "1"]
    else:
        launcher = [tool, "run", str(workers), "--"]
    coll_flags = RING if coll == "ring" else []
    coll_text = RING_TEXT if coll == "ring" else "Open MPI 4.1 coll/libnbc defaults"
    return launcher + coll_flags + ["-x", f"OMP_NUM_THREADS={omp_threads}"], coll_text


# The language models of scripts/export_models.py: (vocabulary, tokens a sequence).
TOKEN_MODELS = {"lstmlm": (50, 12), "lstmlm_medium": (2000, 20)}


def token_data(model_name, out_dir, samples):
    """Writes synthetic token sequences for a language model (scripts/
    make_token_data.py) into out_dir; returns the executable's data options."""
    vocab, length = TOKEN_MODELS[model_name]
    run_checked(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_token_data.py"), out_dir,
                 "--samples", str(samples), "--vocab", str(vocab), "--length", str(length)],
                "writing token data")
    return ["--data", os.path.join(out_dir, "tokens.npy"), "--labels",
            os.path.join(out_dir, "next.npy"), "--data-format", "npy"]


def calibrate(mgsc, model, batch, launch, data, density, work, profile, timeout,
              data_args=None):
    """Builds the instrumented executable (mgsc --profile-generate) and runs
    its --calibrate under `launch` on CIFAR-10 `data` (or on `data_args`, the
    executable's data options), writing `profile`.
    Returns (the calibration's summary line, compile command, run command)."""
    cal = os.path.join(work, "calibrate")
    cal_compile = [mgsc, model, "--batch-size", batch, "--profile-generate", "-o", cal, "--quiet"]
    data_args = data_args or ["--data", data, "--data-format", "cifar10"]
    cal_run = launch + [cal] + data_args + ["--calibrate-density", density,
                                            "--calibrate", profile]
    run_checked(cal_compile, "compiling the calibration build")
    print(f"calibrating: {q(cal_run)}", flush=True)
    out = run_checked(cal_run, "calibration", timeout=timeout, cwd=work)
    cal_line = next((l for l in out.splitlines() if l.startswith("backward:")), "")
    return cal_line, cal_compile, cal_run
