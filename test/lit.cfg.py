# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "mgs"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mgs_obj_root, "test")
# The unit tests are their own suite (test/unit/lit.cfg.py).
config.excludes = ["unit", "Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%models", config.mgs_models_dir))
config.substitutions.append(("%python", config.mgs_python))
# OpenMPI's launcher; root is allowed (CI runs as root), more ranks than cores too.
config.substitutions.append(("%mpirun", "mpirun --allow-run-as-root --oversubscribe"))
config.substitutions.append(("%mgs_src", config.mgs_src_root))
# The folder of the tools, for scripts that run several of them.
config.substitutions.append(("%mgs_bin", config.mgs_tools_dir))
config.substitutions.append(
    ("%digits", "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"))
# Fashion-MNIST's IDX files (train-* and t10k-*, gzip): Debian's
# dataset-fashion-mnist, which scripts/setup.sh installs.
config.substitutions.append(("%fashion_mnist", "/usr/share/datasets/fashion-mnist"))

# The runtime's kernel tests (GoogleTest), run again under another environment
# (test/runtime/bf16-rounded-kernels.test).
config.substitutions.append(
    ("%mgsrt_kernel_tests",
     os.path.join(config.mgs_obj_root, "test", "unit", "MGSRuntimeKernelTests")))
# The runtime's MPI check runs under mpirun (test/runtime/mpi.test).
config.substitutions.append(
    ("%mgsrt_mpi_check", os.path.join(config.mgs_tools_dir, "mgsrt_mpi_check")))
# The driver readers' fuzz target over its corpus (test/runtime/fuzz-replay.test).
config.substitutions.append(
    ("%mgsrt_fuzz_replay", os.path.join(config.mgs_tools_dir, "mgsrt_fuzz_replay")))
config.substitutions.append(
    ("%mgs_import_fuzz_replay", os.path.join(config.mgs_tools_dir, "mgs_import_fuzz_replay")))
config.substitutions.append(
    ("%mgs_profile_fuzz_replay", os.path.join(config.mgs_tools_dir, "mgs_profile_fuzz_replay")))

# OpenMP threads that spin while they wait make a loaded machine many times
# slower (2 lit workers of 2 threads each on 2 cores: a ShuffleNetV2 step
# took 2075 ms spinning, 40 ms waiting passively). No result depends on it.
config.environment["OMP_WAIT_POLICY"] = os.environ.get("OMP_WAIT_POLICY", "PASSIVE")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["mgs-opt", "mgs-import-onnx", "mgsc", "mgs-plan"], [config.mgs_tools_dir])

# A usable NVIDIA GPU: the GPU end-to-end tests need one; the no-GPU error
# tests run only without one.
import shutil
import subprocess
if shutil.which("nvidia-smi"):
    try:
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20).returncode == 0:
            config.available_features.add("cuda-gpu")
    except (OSError, subprocess.SubprocessError):
        pass

# The newest ONNX opset mgs-import-onnx reads: 24 when scripts/build_onnx.sh built a current
# ONNX, 17 when the build fell back to Debian's ONNX 1.12 (no PyPI). Tests of opsets 18-22
# need `onnx-opset-22`, of opsets 23-24 `onnx-opset-24`.
import re
try:
    version = subprocess.run([os.path.join(config.mgs_tools_dir, "mgs-import-onnx"), "--version"],
                             capture_output=True, text=True, timeout=60).stdout
    match = re.search(r"ONNX \S+ \(opsets (\d+)-(\d+)\)", version)
    for opset in (22, 24):
        if match and int(match.group(2)) >= opset:
            config.available_features.add(f"onnx-opset-{opset}")
except (OSError, subprocess.SubprocessError):
    pass
