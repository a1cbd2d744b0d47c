#!/usr/bin/python3
"""Forward-value conformance of mgsc over ONNX's own node tests.

Run with Debian's /usr/bin/python3 (it has `onnx` and `numpy`):

    onnx_node_forward.py MGSC MGS_IMPORT_ONNX NODE_TEST_DIR EXPECTED_FAILURES WORK_DIR
                         [--write-expected] [-j N] [--filter REGEX]

e.g. onnx_node_forward.py build/bin/mgsc build/bin/mgs-import-onnx \\
         /usr/share/libonnx-testdata/data/node \\
         test/onnx_node/expected-forward-failures.txt /tmp/node-forward

A node test is "accepted" when it is in scope for scripts/onnx_node_tests.py
(every op in `mgs-import-onnx --list-supported-ops`) and mgs-import-onnx
imports it (exit status 0). Every accepted test is compiled with
`mgsc --inference` into WORK_DIR/<test>/, its test_data_set_0 inputs are
written as raw float32 files (a graph input that @forward does not take, such
as a Reshape shape the importer folded, is left out), the executable runs the forward once (60 s at
most), and each output that has reference data must match it elementwise
within ONNX's backend-test tolerance:

    |ours - ref| <= ATOL + RTOL * |ref|     (RTOL 1e-3, ATOL 1e-7; NaN == NaN)

The executable writes every output as float32. A BOOL reference output passes
when the file holds exactly its 1.0 / 0.0 as float32 (a comparison computed at
run time). A reference output of another
element type passes only if the file written holds exactly its element count
times its item size and, read as that type, equals the reference; otherwise
the test fails as "non-float32 output NAME (DTYPE)". The work directory of a
passing test is removed; that of a failing one is kept for inspection.

The expected-failures file lists the accepted tests that are known to fail,
one per line as `test_name: reason` (`#` starts a comment). The run fails
(exit 1) when
  * an accepted test fails and is not listed (a regression, or a new test),
  * a listed test now passes (remove it from the list),
  * a listed test does not exist or is not accepted.

--write-expected rewrites the file from the current failures, keeping the
reason of every entry already listed and using the failure itself for new
entries (edit those into something shorter).
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_node_tests as nt  # noqa: E402  (supported ops, scope, file format)

RTOL = 1e-3
ATOL = 1e-7
TIMEOUT_S = 60
JOBS = 2

HEADER = """\
# Accepted ONNX node tests (in scope and imported by mgs-import-onnx) whose
# forward, compiled by `mgsc --inference`, does not reproduce test_data_set_0
# within rtol 1e-3, atol 1e-7, with the reason. Checked by
# scripts/onnx_node_forward.py (test/onnx_node/node-forward.test): a test that
# fails and is not listed here, or is listed here and now passes, fails the
# run. Regenerate with --write-expected (reasons of existing entries are kept).
#
# Format: test_name: reason

"""


class Failure(Exception):
    """A test failure; `stage` is 'compile' or 'run' (compile failures do not
    count as compiled)."""

    def __init__(self, stage, reason):
        Exception.__init__(self, reason)
        self.stage = stage
        self.reason = reason


def run_tool(argv, cwd=None):
    """(returncode or None on timeout, stdout, stderr)."""
    try:
        proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, errors="replace", timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return proc.returncode, proc.stdout, proc.stderr


def error_line(text, strip=()):
    """The most telling line of a tool's stderr, shortened."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    m = next((re.search(r"undefined reference to (.*)", l) for l in lines
              if "undefined reference to" in l), None)
    if m:
        return "link: undefined reference to " + m.group(1)
    line = next((l for l in lines if "error:" in l), lines[0] if lines else "")
    for s in strip:
        line = line.replace(s, "")
    line = re.sub(r"^(\S+: )?error: ", "", line)  # "mgsc: error: ", "model: error: "
    return line[:200]


def status_text(rc, what):
    if rc is None:
        return "%s timed out after %d s" % (what, TIMEOUT_S)
    if rc < 0:
        return "%s CRASH (signal %d)" % (what, -rc)
    return "%s exit %d" % (what, rc)


def forward_inputs(tool, test_dir):
    """The names of @forward's arguments if mgs-import-onnx imports the test,
    else None. (A graph input the importer folds away, such as a Reshape
    shape it reads from the model's declared shapes, is not among them.)"""
    rc, out, _ = run_tool([tool, os.path.join(test_dir, "model.onnx")])
    if rc != 0:
        return None
    header = next((l for l in out.splitlines() if "func.func @forward" in l), "")
    args = header.partition(") -> (")[0]
    return {n for _, n in nt.SIG_VALUE.findall(args)}


def test_io(test_dir):
    """([(input name, array)], [(output name, array)]) of test_data_set_0."""
    tensors = nt.reference_tensors(test_dir)
    return tuple([(name, numpy_helper.to_array(t)) for name, t in tensors[kind]]
                 for kind in ("input", "output"))


def fmt(x):
    return "%.4g" % x


def compare(name, got_bytes, ref, shape_text):
    """'' when the output matches, else why not."""
    ref = np.asarray(ref)
    if ref.dtype == np.bool_ and len(got_bytes) == ref.size * 4:
        # A BOOL computed at run time (a comparison of FLOAT data) is 1.0 / 0.0.
        got = np.frombuffer(got_bytes, dtype="<f4").reshape(ref.shape)
        if np.array_equal(got, ref.astype(np.float32)):
            return ""
        return "BOOL output %s held as 1.0 / 0.0 differs at %d of %d elements" % (
            name, int(np.sum(got != ref.astype(np.float32))), ref.size)
    if ref.dtype != np.float32:
        itemsize = ref.dtype.itemsize
        if len(got_bytes) == ref.size * itemsize:
            got = np.frombuffer(got_bytes, dtype=ref.dtype.newbyteorder("<")).reshape(ref.shape)
            if np.array_equal(got, ref):
                return ""
        return "non-float32 output %s (%s; %d bytes written for %d elements)" % (
            name, ref.dtype, len(got_bytes), ref.size)
    if len(got_bytes) != ref.size * 4:
        return "output %s: %d bytes written, reference %s needs %d" % (
            name, len(got_bytes), list(ref.shape), ref.size * 4)
    want_shape = "[%s]" % ", ".join(str(d) for d in ref.shape)
    if shape_text is not None and shape_text != want_shape:
        shape_note = " (compiled shape %s, reference %s)" % (shape_text, want_shape)
    else:
        shape_note = ""
    got = np.frombuffer(got_bytes, dtype="<f4").astype(np.float64).reshape(ref.shape)
    want = ref.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(got - want)
        tol = ATOL + RTOL * np.abs(want)
        ok = (diff <= tol) | (np.isnan(got) & np.isnan(want)) | (got == want)
    if ok.all():
        return "" if not shape_note else "output %s%s" % (name, shape_note)
    bad = ~ok
    # The worst element: the largest error relative to its tolerance (NaN or
    # a mismatched infinity counts as infinitely bad).
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(np.isnan(diff), np.inf, diff / tol)
    score = np.where(bad, score, -1.0)
    worst = np.unravel_index(int(np.argmax(score)), ref.shape)
    finite = bad & np.isfinite(diff)
    max_abs = diff[finite].max() if finite.any() else float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(want != 0, diff / np.abs(want), np.inf)
    max_rel = rel[finite].max() if finite.any() else float("nan")
    return ("output %s: %d/%d wrong, max abs err %s (rel %s), worst [%s] got %s want %s%s"
            % (name, int(bad.sum()), ref.size, fmt(max_abs), fmt(max_rel),
               ",".join(str(int(i)) for i in worst), fmt(got[worst]), fmt(want[worst]),
               shape_note))


def run_test(mgsc, data_dir, work_dir, name, forward_args):
    """'' on success, else raises Failure."""
    test_dir = os.path.join(data_dir, name)
    out_dir = os.path.join(work_dir, name)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    model = os.path.join(test_dir, "model.onnx")
    exe = os.path.join(out_dir, "model")

    rc, _, err = run_tool([mgsc, model, "--inference", "-o", exe, "--quiet"])
    if rc != 0 or not os.path.isfile(exe):
        msg = error_line(err, strip=(model + ": ",))
        raise Failure("compile", "compile: " + (msg or status_text(rc, "mgsc")))

    try:
        inputs, outputs = test_io(test_dir)
    except Exception as e:  # noqa: BLE001  (unreadable reference data)
        raise Failure("run", "reference data: " + nt.first_line(str(e)))
    argv = [exe]
    for i, (iname, value) in enumerate(inputs):
        if iname not in forward_args:
            continue  # folded away by the importer
        if value.dtype not in (np.float32, np.int64):
            raise Failure("run", "non-float32 input %s (%s)" % (iname, value.dtype))
        path = os.path.join(out_dir, "in_%d.bin" % i)
        # int64 inputs (Gather indices) are read as raw int64, the rest float32
        value.astype("<i8" if value.dtype == np.int64 else "<f4").tofile(path)
        argv += ["--input", "%s=%s" % (iname, path)]
    for i, (oname, _) in enumerate(outputs):
        argv += ["--output", "%s=%s" % (oname, os.path.join(out_dir, "out_%d.bin" % i))]
    rc, out, err = run_tool(argv, cwd=out_dir)
    if rc != 0:
        msg = error_line(err, strip=(out_dir + "/",))
        raise Failure("run", "runtime: " + status_text(rc, "executable")
                      + (": " + msg if msg else ""))

    shapes = dict(re.findall(r"^output (\S+) (\[[^\]]*\])", out, re.M))
    reasons = []
    for i, (oname, ref) in enumerate(outputs):
        path = os.path.join(out_dir, "out_%d.bin" % i)
        if not os.path.isfile(path):
            reasons.append("output %s not written" % oname)
            continue
        with open(path, "rb") as f:
            reason = compare(oname, f.read(), ref, shapes.get(oname))
        if reason:
            reasons.append(reason)
    if reasons:
        more = " (+%d more outputs wrong)" % (len(reasons) - 1) if len(reasons) > 1 else ""
        raise Failure("run", reasons[0] + more)
    shutil.rmtree(out_dir, ignore_errors=True)
    return ""


def write_expected(path, failures, old):
    with open(path, "w") as f:
        f.write(HEADER)
        for name in sorted(failures):
            f.write("%s: %s\n" % (name, old.get(name) or failures[name].reason))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mgsc", help="path to mgsc")
    ap.add_argument("importer", help="path to mgs-import-onnx")
    ap.add_argument("data_dir", help="ONNX node-test directory (test_*/model.onnx)")
    ap.add_argument("expected", help="expected-failures file")
    ap.add_argument("work_dir", help="scratch directory for the executables")
    ap.add_argument("--write-expected", action="store_true",
                    help="rewrite the expected-failures file from this run")
    ap.add_argument("-j", "--jobs", type=int, default=JOBS)
    ap.add_argument("--filter", help="only the tests whose name matches this regex "
                    "(for debugging; the expected-failures check is skipped)")
    ap.add_argument("--min-opset", type=int, default=0,
                    help="only the tests of this opset or newer are in scope")
    ap.add_argument("--all-in-scope", action="store_true",
                    help="every test is in scope, also one with an op mgs evaluates only "
                    "at import (mgs's own tests of folded constants)")
    args = ap.parse_args()

    tests = sorted(d for d in os.listdir(args.data_dir)
                   if os.path.isfile(os.path.join(args.data_dir, d, "model.onnx")))
    if not tests:
        raise SystemExit("no node tests (*/model.onnx) under %s" % args.data_dir)
    if args.filter:
        tests = [t for t in tests if re.search(args.filter, t)]

    scope = tests if args.all_in_scope else \
        nt.scope_of(args.data_dir, tests, args.importer, args.min_opset)[0]

    os.makedirs(args.work_dir, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        signature = dict(zip(scope, pool.map(
            lambda n: forward_inputs(args.importer, os.path.join(args.data_dir, n)), scope)))
        accepted = [n for n in scope if signature[n] is not None]

        def one(name):
            try:
                return run_test(args.mgsc, args.data_dir, args.work_dir, name, signature[name])
            except Failure as f:
                return f
            except Exception as e:  # noqa: BLE001  (a bug here must not hide the others)
                return Failure("run", "script error: %s: %s" % (type(e).__name__, e))

        results = dict(zip(accepted, pool.map(one, accepted)))
    failures = {n: r for n, r in results.items() if isinstance(r, Failure)}
    compiled = sum(1 for r in results.values()
                   if not (isinstance(r, Failure) and r.stage == "compile"))
    expected = nt.read_expected(args.expected)

    print("accepted: %d, compiled: %d, passed: %d, failed: %d (%d listed as expected failures)"
          % (len(accepted), compiled, len(accepted) - len(failures), len(failures),
             sum(1 for n in failures if n in expected)))
    if failures:
        print("\nfailures:")
        for name in sorted(failures):
            print("  %s: %s" % (name, failures[name].reason))

    if args.write_expected:
        write_expected(args.expected, failures, expected)
        print("\nwrote %d entries to %s" % (len(failures), args.expected))
        return 0
    if args.filter:
        return 1 if failures else 0

    return nt.check_expected(
        {n: f.reason for n, f in failures.items()},
        {n for n, r in results.items() if not isinstance(r, Failure)}, expected,
        lambda n: ("not accepted (out of scope or not imported)" if n in tests
                   else "no such node test"),
        "accepted")

if __name__ == "__main__":
    sys.exit(main())
