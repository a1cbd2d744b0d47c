#!/usr/bin/python3
"""Predicted iteration time against the number of workers, per strategy, for
ResNet-50-, VGG-16- and GPT-2-small-shaped profiles at 1, 10 and 100 Gbit/s
(bench/model_profiles.py says how they are made), with the planner's choice
(auto) marked:

    bench/collectives_scaling.py [BUILD_DIR]        (default: build)

Writes bench/results/collectives-scaling.txt (mgs-plan --sweep's tables and
auto's growth from P = 16 to P = 4096) and bench/results/collectives-scaling.png
(needs python3-matplotlib: scripts/setup.sh --bench). Predictions only: the
times are mgs-plan's cost model, nothing is run on a network.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import model_profiles  # noqa: E402

WORKERS = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
PLOTTED = ["dense", "mgwfbp", "omgs", "gtopk", "sparse-allreduce", "auto"]
MARKERS = {"allgather": "o", "allreduce": "s", "gtopk": "^", "sparse-allreduce": "D"}
TITLES = {"resnet50": "ResNet-50", "vgg16": "VGG-16", "gpt2": "GPT-2 small"}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    subprocess.run(["ninja", "-C", build, "-j2", "mgs-plan"], check=True,
                   stdout=subprocess.DEVNULL)
    mgs_plan = os.path.join(build, "bin", "mgs-plan")
    results = os.path.join(ROOT, "bench", "results")
    os.makedirs(results, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="mgs-scaling-")
    model_profiles.main(["model_profiles.py", "--all", tmp])

    text, data = [], {}
    for model in model_profiles.MODELS:
        for gbits in model_profiles.LATENCY:
            path = os.path.join(tmp, f"{model}-{gbits}Gbit.json")
            sweep = subprocess.run([mgs_plan, path, "--sweep"], check=True, capture_output=True,
                                   text=True).stdout
            text.append(f"== {TITLES[model]}, {gbits} Gbit/s: mgs-plan {model}-{gbits}Gbit.json "
                        f"--sweep\n{sweep}")
            layers = {l["name"]: l["numel"] for l in json.load(open(path))["layers"]}
            series = {}
            for p in WORKERS:
                plans = json.loads(subprocess.run(
                    [mgs_plan, path, "--workers", str(p), "--strategy", ",".join(PLOTTED)],
                    check=True, capture_output=True, text=True).stdout)
                for plan in plans:
                    series.setdefault(plan["strategy"], []).append(plan["predicted_seconds"])
                    if plan["strategy"] == "auto":
                        # the collective that carries most of the model's elements
                        weight = {}
                        for g in plan["groups"]:
                            weight[g["collective"]] = weight.get(g["collective"], 0) + sum(
                                layers[name] for name in g["layers"])
                        series.setdefault("choice", []).append(max(weight, key=weight.get))
            data[model, gbits] = series
            auto = series["auto"]
            growth = auto[WORKERS.index(4096)] / auto[WORKERS.index(16)]
            text.append(f"auto: {auto[WORKERS.index(16)]:.4f} s at P = 16, "
                        f"{auto[WORKERS.index(4096)]:.4f} s at P = 4096: {growth:.3f}x\n")
    with open(os.path.join(results, "collectives-scaling.txt"), "w") as f:
        f.write("\n".join(text))
    print("\n".join(text))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models, bandwidths = list(model_profiles.MODELS), list(model_profiles.LATENCY)
    fig, axes = plt.subplots(len(models), len(bandwidths), figsize=(15, 13), squeeze=False)
    for r, model in enumerate(models):
        for c, gbits in enumerate(bandwidths):
            ax, series = axes[r][c], data[model, gbits]
            for name in PLOTTED:
                style = dict(lw=2.5, color="black", zorder=3) if name == "auto" else dict(lw=1.2)
                ax.plot(WORKERS, series[name], label=name, **style)
            for choice, marker in MARKERS.items():
                xs = [p for p, ch in zip(WORKERS, series["choice"]) if ch == choice]
                ys = [t for t, ch in zip(series["auto"], series["choice"]) if ch == choice]
                if xs:
                    ax.scatter(xs, ys, marker=marker, s=60, color="black", zorder=4,
                               label=f"auto's main collective: {choice}")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{TITLES[model]}, {gbits} Gbit/s")
            ax.set_xlabel("workers P")
            ax.set_ylabel("predicted iteration time (s)")
            ax.grid(True, which="both", alpha=0.3)
    handles, labels = [], []
    for ax in axes.flat:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    fig.legend(handles, labels, loc="lower center", ncol=5)
    fig.suptitle("mgs-plan: predicted time of backprop + gradient exchange against P "
                 "(density 0.001; markers: the collective of most of auto's elements)")
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    out = os.path.join(results, "collectives-scaling.png")
    fig.savefig(out, dpi=90)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
