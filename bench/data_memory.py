#!/usr/bin/python3
"""The memory a node's workers hold for their training data: NumPy data read
in place (a read-only mapping each worker shares, mgs's default) against read
whole into each worker's own memory (MGSRT_READ_DATA=1: as mgs did before,
less the float32 copy it then also made, and as a PyTorch script's
torch.from_numpy(numpy.load(X)) does), for 1, 2 and 4 MPI workers on one
host, in one run.

    bench/data_memory.py [BUILD_DIR] [--samples 4000000] [--dtype float32|uint8]
        [--workers 1,2,4] [--work DIR]

The data is synthetic: --samples 8x8 images (the default CNN's input, the
digits' shape) in --dtype, labels int64. Each configuration starts the
training executable (the default CNN compiled with --strategy dense) under
mpirun, waits until it has loaded and checked the data and started training
("training on ..."), samples every worker's memory from /proc/PID/smaps_rollup
every 50 ms for a second more, and ends the job. It reports the peak over
the samples of the workers' summed PSS (proportional set size: a page two
workers share counts half to each, so the sum is what the node holds for
them) and of the largest RSS, and the time from the start to the first
training line (the load, mpirun's start included).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402



def smaps(pid):
    """(PSS, RSS) of a process in bytes, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    kb = lambda key: int(fields[key].split()[0]) * 1024  # noqa: E731
    return kb("Pss"), kb("Rss")


def descendants(root, name):
    """The PIDs under `root` whose command line's first word ends with `name`."""
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                children = [int(c) for c in f.read().split()]
        except FileNotFoundError:
            continue
        for c in children:
            try:
                with open(f"/proc/{c}/cmdline", "rb") as f:
                    argv0 = f.read().split(b"\0")[0].decode()
            except FileNotFoundError:
                continue
            if argv0.endswith(name):
                found.append(c)
            frontier.append(c)
    return found


def measure(cmd, name, workers, env, lines=1):
    """Starts `cmd`, samples its `workers` processes named `name` until a
    second after `lines` 'training on' lines, then ends it."""
    start = time.time()
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
    peak_pss = peak_rss = 0
    loaded = None
    try:
        while time.time() - start < 600:
            pids = descendants(proc.pid, name)
            figures = [f for f in (smaps(p) for p in pids) if f]
            if len(figures) == workers:
                peak_pss = max(peak_pss, sum(f[0] for f in figures))
                peak_rss = max(peak_rss, max(f[1] for f in figures))
            if loaded is None:
                log.seek(0)
                if log.read().count("training on") >= lines:
                    loaded = time.time() - start
            elif time.time() - start > loaded + 1.0:
                break
            if proc.poll() is not None:
                log.seek(0)
                raise SystemExit(f"{' '.join(cmd)} ended early:\n{log.read()}")
            time.sleep(0.05)
    finally:
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
        proc.wait()
    if loaded is None:
        raise SystemExit(f"{' '.join(cmd)}: no training line in 600 s")
    return peak_pss, peak_rss, loaded


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--samples", type=int, default=4_000_000)
    ap.add_argument("--dtype", choices=["float32", "uint8"], default="float32")
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    work = args.work or tempfile.mkdtemp(prefix="mgs-data-memory-")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(0)
    x_path, y_path = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    if args.dtype == "uint8":
        x = rng.integers(0, 256, size=(args.samples, 1, 8, 8), dtype=np.uint8)
    else:
        x = rng.random((args.samples, 1, 8, 8), dtype=np.float32)
    np.save(x_path, x)
    np.save(y_path, rng.integers(0, 10, size=args.samples, dtype=np.int64))
    data_mb = os.path.getsize(x_path) / 2**20
    del x
    exe = os.path.join(work, "cnn")
    benchlib.run_checked([os.path.join(build, "bin", "mgsc"),
                          os.path.join(build, "test", "models", "cnn-opset15.onnx"),
                          "--batch-size", "32", "--strategy", "dense", "-o", exe, "--quiet"],
                         "mgsc")
    print(f"# bench/data_memory.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPUs; {args.samples} samples of 1x8x8 {args.dtype}: inputs "
          f"{data_mb:.0f} MiB on disk, labels {os.path.getsize(y_path) / 2**20:.0f} MiB")
    print("| workers | reader | workers' PSS, summed (MiB) | largest RSS (MiB) | load (s) |")
    print("|---|---|---|---|---|")
    for p in [int(w) for w in args.workers.split(",")]:
        rows = {}
        for mode in ("whole", "in place"):
            env = dict(os.environ, OMP_NUM_THREADS="1")
            if mode == "whole":
                env["MGSRT_READ_DATA"] = "1"
            cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(p),
                   "-x", "OMP_NUM_THREADS"]
            if mode == "whole":
                cmd += ["-x", "MGSRT_READ_DATA"]
            cmd += [exe, "--data", x_path, "--labels", y_path, "--epochs", "1", "--holdout", "0",
                    "--progress-every", "0"]
            rows[mode] = measure(cmd, "/cnn", p, env)
        for mode, (pss, rss, loaded) in rows.items():
            print(f"| {p} | {mode} | {pss / 2**20:.0f} | {rss / 2**20:.0f} | {loaded:.2f} |")
        ratio = rows["in place"][0] / rows["whole"][0]
        print(f"| {p} | in place / whole | {ratio:.3f} | | |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
