#!/usr/bin/env python3
"""Structured mutation testing of the ONNX importer (and optionally mgsc).

libFuzzer (onnx_import/fuzz) mutates protobuf bytes, which rarely gets past
the parser into the converters. This script mutates real models one field at a
time (an attribute's value or type, a node's inputs, outputs, op type, domain
or order, an initializer's dims, type or data, a graph input's shape, the
opset) so that every mutant is a well-formed protobuf that reaches the
converters, and runs mgs-import-onnx on each. What must hold for every mutant
(the developers' guide: bad input gets a clear error, a non-zero exit, never a
crash or a hang):
  - the process exits normally: no signal (a crash), no timeout (a hang);
  - a non-zero exit prints an `error:` line, and nothing that says an internal
    invariant broke (an LLVM fatal error, an assertion, a stack dump);
  - a mutant that imports (exit 0) verified (the importer verifies the module).
With --mgsc, a share of the mutants that import are also compiled (the same
rules, and the compiler may only exit with an error or build the executable).

  scripts/mutate_onnx.py BUILD/bin MODEL.onnx... [--mutants N] [--seed S]
      [--batch-size B] [--timeout SECONDS] [--keep DIR] [--mgsc-share F]

Prints one line per failing mutant (its mutation and the tool's last stderr
line) and a summary line per model; exits non-zero on any failure. --keep
saves the failing mutants (and a note of each mutation) for replay.
"""

import argparse
import copy
import os
import random
import re
import subprocess
import sys
import tempfile

import onnx
from onnx import AttributeProto, TensorProto

# What stderr may never contain, exit code aside.
INTERNAL = re.compile(r"LLVM ERROR|UNREACHABLE|Stack dump|"
                      r"PLEASE submit a bug report|terminate called|Segmentation fault|"
                      r"AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|an mgs bug|internal error")

INT_VALUES = [0, -1, -2, 1, 2, 3, 7, 1 << 31, (1 << 31) - 1, -(1 << 31), 1 << 40, -(1 << 62)]
FLOAT_VALUES = [0.0, -1.0, 1e30, -1e30, float("nan"), float("inf"), float("-inf"), 1e-45]
DTYPES = [TensorProto.UNDEFINED, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT8,
          TensorProto.UINT8, TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL,
          TensorProto.STRING, TensorProto.BFLOAT16, TensorProto.COMPLEX64, 99]


class Mutator:
    """One mutation of a model, chosen at random among those that apply."""

    def __init__(self, rng):
        self.rng = rng

    def pick(self, seq):
        return seq[self.rng.randrange(len(seq))]

    # Each mutation edits `m` in place and returns a description, or None
    # when it does not apply to this model.
    def attr_value(self, m):
        nodes = [n for n in m.graph.node if n.attribute]
        if not nodes:
            return None
        n = self.pick(nodes)
        a = self.pick(list(n.attribute))
        if a.type == AttributeProto.INT:
            a.i = self.pick(INT_VALUES)
            return f"node '{n.name}' ({n.op_type}): attribute {a.name} = {a.i}"
        if a.type == AttributeProto.INTS:
            vals = list(a.ints)
            how = self.rng.randrange(4)
            if how == 0:
                vals = []
            elif how == 1:
                vals = vals + [self.pick(INT_VALUES)]
            elif how == 2 and vals:
                vals = vals[:-1]
            elif vals:
                vals[self.rng.randrange(len(vals))] = self.pick(INT_VALUES)
            del a.ints[:]
            a.ints.extend(vals)
            return f"node '{n.name}' ({n.op_type}): attribute {a.name} = {vals}"
        if a.type == AttributeProto.FLOAT:
            a.f = self.pick(FLOAT_VALUES)
            return f"node '{n.name}' ({n.op_type}): attribute {a.name} = {a.f}"
        if a.type == AttributeProto.FLOATS:
            vals = [self.pick(FLOAT_VALUES) for _ in range(self.rng.randrange(4))]
            del a.floats[:]
            a.floats.extend(vals)
            return f"node '{n.name}' ({n.op_type}): attribute {a.name} = {vals}"
        if a.type == AttributeProto.STRING:
            a.s = self.pick([b"", b"bogus", b"NOTSET", b"\xff\xfe"])
            return f"node '{n.name}' ({n.op_type}): attribute {a.name} = {a.s!r}"
        if a.type == AttributeProto.TENSOR:
            return self.tensor(a.t, f"node '{n.name}' ({n.op_type}): attribute {a.name}")
        return None

    def attr_type(self, m):
        nodes = [n for n in m.graph.node if n.attribute]
        if not nodes:
            return None
        n = self.pick(nodes)
        a = self.pick(list(n.attribute))
        name = a.name
        n.attribute.remove(a)
        new = n.attribute.add()
        new.name = name
        kind = self.rng.randrange(4)
        if kind == 0:
            new.type = AttributeProto.STRING
            new.s = b"7"
        elif kind == 1:
            new.type = AttributeProto.FLOAT
            new.f = 2.5
        elif kind == 2:
            new.type = AttributeProto.INTS
            new.ints.extend([1, 2])
        else:
            new.type = AttributeProto.GRAPH
            new.g.name = "empty"
        return f"node '{n.name}' ({n.op_type}): attribute {name} retyped to {new.type}"

    def attr_drop(self, m):
        nodes = [n for n in m.graph.node if n.attribute]
        if not nodes:
            return None
        n = self.pick(nodes)
        a = self.pick(list(n.attribute))
        n.attribute.remove(a)
        return f"node '{n.name}' ({n.op_type}): attribute {a.name} dropped"

    def attr_add(self, m):
        n = self.pick(list(m.graph.node))
        a = n.attribute.add()
        a.name = self.pick(["axis", "axes", "perm", "alpha", "mode", "bogus_attr"])
        a.type = AttributeProto.INT
        a.i = self.pick(INT_VALUES)
        return f"node '{n.name}' ({n.op_type}): attribute {a.name} = {a.i} added"

    def input_edit(self, m):
        n = self.pick(list(m.graph.node))
        how = self.rng.randrange(5)
        names = [v for node in m.graph.node for v in node.output] + \
                [i.name for i in m.graph.input] + [t.name for t in m.graph.initializer]
        if how == 0 and n.input:
            dropped = n.input[-1]
            del n.input[-1]
            return f"node '{n.name}' ({n.op_type}): last input '{dropped}' dropped"
        if how == 1 and n.input:
            k = self.rng.randrange(len(n.input))
            n.input[k] = ""
            return f"node '{n.name}' ({n.op_type}): input {k} made optional-empty"
        if how == 2 and n.input:
            k = self.rng.randrange(len(n.input))
            n.input[k] = "no_such_value"
            return f"node '{n.name}' ({n.op_type}): input {k} dangling"
        if how == 3 and n.input and names:
            k = self.rng.randrange(len(n.input))
            n.input[k] = self.pick(names)
            return f"node '{n.name}' ({n.op_type}): input {k} = '{n.input[k]}'"
        n.input.append(self.pick(names) if names else "x")
        return f"node '{n.name}' ({n.op_type}): extra input '{n.input[-1]}'"

    def output_edit(self, m):
        n = self.pick(list(m.graph.node))
        how = self.rng.randrange(3)
        if how == 0 and n.output:
            k = self.rng.randrange(len(n.output))
            other = self.pick([o for node in m.graph.node for o in node.output])
            n.output[k] = other
            return f"node '{n.name}' ({n.op_type}): output {k} renamed to '{other}' (duplicate)"
        if how == 1 and n.input and n.output:
            n.input[0] = n.output[0]
            return f"node '{n.name}' ({n.op_type}): reads its own output (a cycle)"
        n.output.append(n.output[0] + "_extra" if n.output else "extra")
        return f"node '{n.name}' ({n.op_type}): extra output"

    def node_edit(self, m):
        nodes = m.graph.node
        how = self.rng.randrange(4)
        if how == 0 and len(nodes) > 1:
            a, b = self.rng.randrange(len(nodes)), self.rng.randrange(len(nodes))
            na, nb = copy.deepcopy(nodes[a]), copy.deepcopy(nodes[b])
            nodes[a].CopyFrom(nb)
            nodes[b].CopyFrom(na)
            return f"nodes {a} and {b} swapped (order)"
        n = self.pick(list(nodes))
        if how == 1:
            old = n.op_type
            n.op_type = self.pick([node.op_type for node in nodes] + ["NoSuchOp"])
            return f"node '{n.name}': op {old} -> {n.op_type}"
        if how == 2:
            n.domain = self.pick(["com.microsoft", "ai.onnx.ml", "bogus"])
            return f"node '{n.name}' ({n.op_type}): domain '{n.domain}'"
        k = self.rng.randrange(len(nodes))
        del nodes[k]
        return f"node {k} deleted"

    def tensor(self, t, where):
        how = self.rng.randrange(5)
        if how == 0 and t.dims:
            k = self.rng.randrange(len(t.dims))
            t.dims[k] = self.pick([0, -1, t.dims[k] * 2, t.dims[k] + 1, 1 << 40])
            return f"{where}: dims {list(t.dims)}"
        if how == 1:
            t.data_type = self.pick(DTYPES)
            return f"{where}: data_type {t.data_type}"
        if how == 2 and t.raw_data:
            t.raw_data = t.raw_data[: self.rng.randrange(len(t.raw_data))]
            return f"{where}: raw_data truncated to {len(t.raw_data)} bytes"
        if how == 3:
            t.dims.append(self.pick([1, 2, 0]))
            return f"{where}: dims {list(t.dims)} (one more)"
        del t.dims[:]
        return f"{where}: dims [] (a scalar)"

    def initializer(self, m):
        if not m.graph.initializer:
            return None
        t = self.pick(list(m.graph.initializer))
        return self.tensor(t, f"initializer '{t.name}'")

    def constant(self, m):
        consts = [n for n in m.graph.node if n.op_type == "Constant"]
        if not consts:
            return None
        n = self.pick(consts)
        for a in n.attribute:
            if a.type == AttributeProto.TENSOR:
                return self.tensor(a.t, f"Constant '{n.name}'")
        return None

    def graph_input(self, m):
        inits = {t.name for t in m.graph.initializer}
        inputs = [i for i in m.graph.input if i.name not in inits]
        if not inputs:
            return None
        i = self.pick(inputs)
        tt = i.type.tensor_type
        how = self.rng.randrange(4)
        if how == 0 and tt.shape.dim:
            d = self.pick(list(tt.shape.dim))
            d.dim_value = self.pick([0, 1, 3, 1 << 40])
            return f"graph input '{i.name}': a dim = {d.dim_value}"
        if how == 1 and tt.shape.dim:
            d = self.pick(list(tt.shape.dim))
            d.dim_param = "M"
            return f"graph input '{i.name}': a dim symbolic 'M'"
        if how == 2:
            tt.elem_type = self.pick(DTYPES)
            return f"graph input '{i.name}': elem_type {tt.elem_type}"
        tt.ClearField("shape")
        return f"graph input '{i.name}': no shape"

    def opset(self, m):
        for o in m.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = self.pick([1, 6, 10, 12, 16, 21, 23, 99])
                return f"opset {o.version}"
        return None

    def apply(self, m):
        kinds = [self.attr_value, self.attr_value, self.attr_type, self.attr_drop, self.attr_add,
                 self.input_edit, self.input_edit, self.output_edit, self.node_edit,
                 self.initializer, self.initializer, self.constant, self.graph_input, self.opset]
        for _ in range(20):
            what = self.pick(kinds)(m)
            if what:
                return what
        return None


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", f"no exit within {timeout} s"
    err = p.stderr.decode("utf-8", "replace")
    last = err.strip().splitlines()[-1] if err.strip() else ""
    if p.returncode < 0:
        return "crash", f"signal {-p.returncode}: {last}"
    if INTERNAL.search(err):
        return "internal", INTERNAL.search(err).group(0) + ": " + last
    if p.returncode != 0 and "error:" not in err:
        return "no-message", f"exit {p.returncode} without an 'error:' line: {last}"
    return ("ok" if p.returncode == 0 else "refused"), last


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bindir", help="folder with mgs-import-onnx (and mgsc)")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--mutants", type=int, default=100, help="mutants per model")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--keep", help="folder for the failing mutants")
    ap.add_argument("--mgsc-share", type=float, default=0.0,
                    help="share of the imported mutants also compiled with mgsc (0..1)")
    ap.add_argument("--import-args", default="",
                    help="more options for both tools, space-separated (e.g. '--dim sequence=12 "
                         "--bind-input attention_mask=input_ids!=0')")
    args = ap.parse_args()
    extra = args.import_args.split()

    importer = os.path.join(args.bindir, "mgs-import-onnx")
    mgsc = os.path.join(args.bindir, "mgsc")
    rng = random.Random(args.seed)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.models:
            base = onnx.load(path)
            counts = {}
            for k in range(args.mutants):
                m = copy.deepcopy(base)
                what = Mutator(rng).apply(m)
                if what is None:
                    continue
                mutant = os.path.join(tmp, f"m{k}.onnx")
                with open(mutant, "wb") as f:
                    f.write(m.SerializeToString())
                checks = [("import", [importer, mutant, "-o", os.devnull,
                                      f"--batch-size={args.batch_size}", *extra])]
                status, last = run(checks[0][1], args.timeout)
                if status == "ok" and rng.random() < args.mgsc_share:
                    exe = os.path.join(tmp, f"m{k}.exe")
                    checks.append(("mgsc", [mgsc, mutant, f"--batch-size={args.batch_size}",
                                            *extra, "-o", exe, "--quiet"]))
                    status, last = run(checks[1][1], args.timeout * 5)
                    if os.path.exists(exe):
                        os.remove(exe)
                tool = checks[-1][0]
                counts[status] = counts.get(status, 0) + 1
                if status in ("ok", "refused"):
                    continue
                failures += 1
                print(f"FAIL {os.path.basename(path)} mutant {k} ({tool}, {status}): {what}\n"
                      f"     {last}")
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    stem = f"{os.path.splitext(os.path.basename(path))[0]}-m{k}"
                    os.replace(mutant, os.path.join(args.keep, stem + ".onnx"))
                    with open(os.path.join(args.keep, stem + ".txt"), "w") as f:
                        f.write(f"{what}\n{tool}: {status}: {last}\n")
            summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
            print(f"{os.path.basename(path)}: {sum(counts.values())} mutants: {summary}")
    print(f"failures: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
