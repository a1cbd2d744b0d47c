#!/usr/bin/python3
"""Conformance run of mgs-import-onnx over ONNX's own node tests.

Run with Debian's /usr/bin/python3 (it has the `onnx` package):

    onnx_node_tests.py MGS_IMPORT_ONNX NODE_TEST_DIR EXPECTED_FAILURES [--write-expected]

e.g. onnx_node_tests.py build/bin/mgs-import-onnx \\
         /usr/share/libonnx-testdata/data/node test/onnx_node/expected-failures.txt

A node test is "in scope" when every op of its model (default ONNX domain, any
nested subgraph included) is in `mgs-import-onnx --list-supported-ops`. Every
in-scope model is imported (no --batch-size); the importer verifies the module
it builds, so exit status 0 means "imports and verifies". A test then passes
when, besides, every graph input and output that has a tensor in
test_data_set_0 appears in @forward (by its train.name) with that tensor's
shape and element type. Out-of-scope tests are only counted.

The expected-failures file lists the in-scope tests that are known not to
import, one per line as `test_name: reason` (`#` starts a comment). The run
fails (exit 1) when
  * an in-scope test fails and is not listed (a regression, or a new test),
  * a listed test now imports (remove it from the list),
  * a listed test does not exist or is out of scope.

--write-expected rewrites the file from the current failures, keeping the
reason of every entry already listed and guessing one for new entries.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

import onnx

TIMEOUT_S = 60
JOBS = 2

HEADER = """\
# In-scope ONNX node tests (every op in `mgs-import-onnx --list-supported-ops`)
# that mgs-import-onnx does not import, with the reason. Checked by
# scripts/onnx_node_tests.py (test/onnx_node/node-tests.test): a test that
# fails and is not listed here, or is listed here and now imports, fails the
# run. Regenerate with --write-expected (reasons of existing entries are kept).
#
# Format: test_name: reason

"""


def supported_ops(tool):
    out = subprocess.run([tool, "--list-supported-ops"], check=True,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    return {line.strip() for line in out.splitlines() if line.strip()}


def graph_ops(graph):
    """(domain, op_type) of every node in graph and its subgraphs."""
    ops = set()
    for node in graph.node:
        ops.add((node.domain, node.op_type))
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                ops |= graph_ops(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    ops |= graph_ops(g)
    return ops


def model_ops_and_opset(path):
    """(the ops of the model at path, its opset of the default domain (0 if it names none))."""
    model = onnx.load(path, load_external_data=False)
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    return graph_ops(model.graph), opset


def supported_opsets(tool):
    """(min, max) of the default domain's opsets the importer reads, from its --version."""
    out = subprocess.run([tool, "--version"], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    m = re.search(r"ONNX \S+ \(opsets (\d+)-(\d+)\)", out)
    if not m:
        raise SystemExit("%s --version names no opset range:\n%s" % (tool, out))
    return int(m.group(1)), int(m.group(2))


def in_scope(ops, supported):
    return all(domain in ("", "ai.onnx") and op in supported for domain, op in ops)


def scope_of(data_dir, tests, tool, min_opset=0):
    """(in-scope tests, {unreadable test: why}): a test is in scope when every op of its model
    is supported and its opset is at least min_opset and at most the newest the importer
    reads (a newer release's tests of newer opsets are out of scope, not failures)."""
    supported = supported_ops(tool)
    newest = supported_opsets(tool)[1]
    scope, unreadable = [], {}
    for name in tests:
        path = os.path.join(data_dir, name, "model.onnx")
        try:
            ops, opset = model_ops_and_opset(path)
        except Exception as e:  # a model this onnx cannot read is out of scope
            unreadable[name] = first_line(str(e))
            continue
        if in_scope(ops, supported) and min_opset <= opset <= newest:
            scope.append(name)
    return scope, unreadable


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


MLIR_ELEM = {
    onnx.TensorProto.FLOAT: "f32", onnx.TensorProto.DOUBLE: "f64",
    onnx.TensorProto.FLOAT16: "f16", onnx.TensorProto.BFLOAT16: "bf16",
    onnx.TensorProto.INT8: "i8", onnx.TensorProto.INT16: "i16",
    onnx.TensorProto.INT32: "i32", onnx.TensorProto.INT64: "i64",
    onnx.TensorProto.UINT8: "ui8", onnx.TensorProto.UINT16: "ui16",
    onnx.TensorProto.UINT32: "ui32", onnx.TensorProto.UINT64: "ui64",
    onnx.TensorProto.BOOL: "i1",
}


def reference_tensors(test_dir):
    """{"input": [(name, TensorProto)], "output": [...]} of test_data_set_0:
    the i-th input_*.pb / output_*.pb belongs to the i-th graph input
    (initializers excluded) / output; values without a file are left out
    (optional and sequence values)."""
    model = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    names = {"input": [i.name for i in model.graph.input if i.name not in inits],
             "output": [o.name for o in model.graph.output]}
    data = os.path.join(test_dir, "test_data_set_0")
    tensors = {}
    for kind in ("input", "output"):
        tensors[kind] = []
        for i, name in enumerate(names[kind]):
            pb = os.path.join(data, "%s_%d.pb" % (kind, i))
            if os.path.isfile(pb):
                tensors[kind].append((name, onnx.load_tensor(pb)))
    return tensors


def reference_types(test_dir):
    """({input: type}, {output: type}) from test_data_set_0, as MLIR tensor types."""
    def mlir_type(t):
        elem = MLIR_ELEM.get(t.data_type, "dtype%d" % t.data_type)
        return "tensor<%s>" % "x".join([str(d) for d in t.dims] + [elem])
    tensors = reference_tensors(test_dir)
    return tuple({name: mlir_type(t) for name, t in tensors[kind]} for kind in ("input", "output"))


SIG_VALUE = re.compile(r'(tensor<[^>]*>)\s*\{[^}]*train\.name\s*=\s*"([^"]*)"')


def check_signature(mlir, test_dir):
    """'' when @forward's named arguments and results have the shapes and
    element types of the test's reference data, else what differs."""
    header = next((l for l in mlir.splitlines() if "func.func @forward" in l), None)
    if header is None:
        return "no func.func @forward in the output"
    args, sep, results = header.partition(") -> (")
    got = {"input": dict((n, t) for t, n in SIG_VALUE.findall(args)),
           "output": dict((n, t) for t, n in SIG_VALUE.findall(results))}
    want = dict(zip(("input", "output"), reference_types(test_dir)))
    for kind in ("input", "output"):
        for name, ty in want[kind].items():
            if name not in got[kind]:
                return "signature: %s '%s' missing from @forward" % (kind, name)
            # A BOOL result computed at run time (a comparison of FLOAT data)
            # is held as 1.0 / 0.0: f32 of the reference's shape.
            bool_as_f32 = (kind == "output" and (ty.endswith("xi1>") or ty == "tensor<i1>")
                           and got[kind][name] == ty[:-len("i1>")] + "f32>")
            if got[kind][name] != ty and not bool_as_f32:
                return "signature: %s '%s' is %s, reference data is %s" % (
                    kind, name, got[kind][name], ty)
    return ""


def run_import(tool, test_dir):
    """(ok, error): error is the first line of the diagnostic on failure."""
    model = os.path.join(test_dir, "model.onnx")
    try:
        proc = subprocess.run([tool, model], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True,
                              errors="replace", timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, "timed out after %d s" % TIMEOUT_S
    if proc.returncode == 0:
        mismatch = check_signature(proc.stdout, test_dir)
        return not mismatch, mismatch
    # Drop the "path/model.onnx: error: " prefix: the test name says it.
    err = first_line(proc.stderr).replace(model + ": ", "", 1)
    if err.startswith("error: "):
        err = err[len("error: "):]
    if proc.returncode < 0:
        return False, "CRASH (signal %d): %s" % (-proc.returncode, err)
    if proc.returncode != 1:
        return False, "exit %d: %s" % (proc.returncode, err)
    return False, err or "exit 1, no diagnostic"


# A short reason guessed from the importer's diagnostic, for --write-expected
# on tests not yet in the list (edit it by hand to something better).
def guess_reason(error):
    m = re.match(r"graph input '[^']*' has unsupported dtype (\w+)", error)
    if m:
        return "input dtype " + m.group(1)
    m = re.match(r"node .*\((\w+)\): input \d+ \('([^']*)'\) must be a constant", error)
    if m:
        return "%s input '%s' given as a graph input, not a constant" % m.groups()
    if re.match(r"graph input '[^']*' is not a tensor", error):
        return "non-tensor graph input"
    if error.startswith("CRASH"):
        return "importer crash"
    return error


def read_expected(path):
    """{test: reason} in file order; raises on a malformed line."""
    expected = {}
    if not os.path.exists(path):
        return expected
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            name, sep, reason = line.partition(":")
            if not sep or not name.strip():
                raise SystemExit("%s:%d: expected `test_name: reason`, got %r"
                                 % (path, lineno, raw.rstrip("\n")))
            expected[name.strip()] = reason.strip()
    return expected


def write_expected(path, failures, old):
    with open(path, "w") as f:
        f.write(HEADER)
        for name in sorted(failures):
            reason = old.get(name) or guess_reason(failures[name])
            f.write("%s: %s\n" % (name, reason))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tool", help="path to mgs-import-onnx")
    ap.add_argument("data_dir", help="ONNX node-test directory (test_*/model.onnx)")
    ap.add_argument("expected", help="expected-failures file")
    ap.add_argument("--write-expected", action="store_true",
                    help="rewrite the expected-failures file from this run")
    ap.add_argument("-j", "--jobs", type=int, default=JOBS)
    ap.add_argument("--min-opset", type=int, default=0,
                    help="only the tests of this opset or newer are in scope")
    args = ap.parse_args()

    tests = sorted(d for d in os.listdir(args.data_dir)
                   if os.path.isfile(os.path.join(args.data_dir, d, "model.onnx")))
    if not tests:
        raise SystemExit("no node tests (*/model.onnx) under %s" % args.data_dir)
    scope, unreadable = scope_of(args.data_dir, tests, args.tool, args.min_opset)

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(zip(scope, pool.map(
            lambda n: run_import(args.tool, os.path.join(args.data_dir, n)),
            scope)))
    failures = {n: err for n, (ok, err) in results.items() if not ok}
    expected = read_expected(args.expected)

    print("node tests: %d" % len(tests))
    print("in scope: %d (all ops supported; %d out of scope%s)"
          % (len(scope), len(tests) - len(scope),
             ", %d unreadable by onnx" % len(unreadable) if unreadable else ""))
    print("imported: %d" % (len(scope) - len(failures)))
    print("failed: %d (%d listed as expected failures)"
          % (len(failures), sum(1 for n in failures if n in expected)))

    if failures:
        print("\nfailures:")
        width = max(len(n) for n in failures)
        for name in sorted(failures):
            reason = expected.get(name, "NOT LISTED")
            print("  %-*s  [%s] %s" % (width, name, reason, failures[name]))

    if args.write_expected:
        write_expected(args.expected, failures, expected)
        print("\nwrote %d entries to %s" % (len(failures), args.expected))
        return 0

    return check_expected(failures, {n for n, r in results.items() if r[0]}, expected,
                          lambda n: "out of scope" if n in tests else "no such node test",
                          "in-scope")


def check_expected(failures, passed, expected, why_not_run, scope):
    """Compares the results with the expected-failures list; prints what does
    not match (on stderr, so lit shows it with stdout piped to FileCheck) and
    returns the exit status. `failures` maps a test to its reason, `passed` is
    the set of tests that passed, `why_not_run(name)` says why a listed test
    was not run."""
    problems = []
    for name in sorted(failures):
        if name not in expected:
            problems.append("%s: UNEXPECTED FAILURE: %s" % (name, failures[name]))
    for name in expected:
        if name in passed:
            problems.append("%s: now passes, remove it from the list" % name)
        elif name not in failures:
            problems.append("%s: listed but %s" % (name, why_not_run(name)))
    if problems:
        sys.stdout.flush()
        print("\nunexpected results: %d" % len(problems), file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    print("\nall %s results as expected" % scope)
    return 0


if __name__ == "__main__":
    sys.exit(main())
