#!/usr/bin/env python3
"""Writes ONNX node tests of ops whose masks or indices mgs evaluates at import (test_*/model.onnx and
test_data_set_0/*.pb, as ONNX's own node tests are laid out), the reference outputs computed by
ONNX's reference implementation (onnx.reference, ONNX 1.18 or newer: opsets 23-24).

ONNX's own Attention node tests give masks as graph inputs; mgs evaluates a constant mask at
import into one additive bias, whose paths these cover: a BOOL mask joined with is_causal that
masks one query's row entirely (its output is 0), a FLOAT mask shorter than the keys (padded with
-inf) with a cache (past_key, past_value: the causal mask aligned to the bottom right), a
constant nonpad_kv_seqlen (opset 24), and a FLOAT mask computed by the graph with grouped heads.
GatherND's node tests give the indices as graph inputs too; here they are constants (tuples of
one, two and three indices, a negative one among them), as Swin's relative position bias
exports with PyTorch's torch.export-based exporter. And the constants transformers' masking
and embedding code computes at import: GatherElements, GatherND of INT64, CumSum, Log, Exp, a
Cast of -inf to INT64 that a Where discards, ConstantOfShape of BOOL and Flatten. And CumSum of
computed FLOAT data (train.cumsum), Tile of computed data, GatherElements of computed data at
constant indices, and DeBERTa's and BLOOM's constants (Sign, an INT64 Clip, Pow of INT32 powers,
Tile), and Einsums with several free or contracted labels.

And Resize of computed data by constant scales or sizes: ONNX's own Resize node tests
(ONNX_NODE_DIR, e.g. ~/.cache/mgs-deps/onnx-1.19.1/share/onnx/node) with their scales and sizes
made constants, and a few more. And ONNX's own TopK node tests with K a constant, the indices
cast to FLOAT as an output, and TopK's indices read by a Gather and a GatherND (a mixture of
experts' routing). And ONNX's own DFT node tests with the axis a constant, FNet's fftn(x).real,
and a one-sided DFT. And ONNX's own Col2Im node tests with image_shape and block_shape
constants, and a Col2Im of computed data.

    [ONNX_NODE_DIR=DIR] make_constant_input_tests.py OUT_DIR   (a Python with onnx >= 1.18)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

F = TensorProto.FLOAT


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name))


def write(out_dir, name, opset, nodes, inputs, outputs, feeds, expected=None):
    """expected: the reference outputs (default: onnx.reference's)."""
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, F, feeds[n].shape)
                                            for n in inputs],
                              [helper.make_tensor_value_info(n, F, None) for n in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    results = expected or ReferenceEvaluator(model).run(None, feeds)
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    for out, value in zip(model.graph.output, results):
        out.type.tensor_type.shape.Clear()
        for d in value.shape:
            out.type.tensor_type.shape.dim.add().dim_value = d
    onnx.checker.check_model(model, full_check=True)
    test = os.path.join(out_dir, name)
    data = os.path.join(test, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(test, "model.onnx"))
    for i, n in enumerate(inputs):
        onnx.save_tensor(numpy_helper.from_array(feeds[n], n), os.path.join(data, f"input_{i}.pb"))
    for i, (n, value) in enumerate(zip(outputs, results)):
        assert np.all(np.isfinite(value)), (name, n)
        onnx.save_tensor(numpy_helper.from_array(value, n), os.path.join(data, f"output_{i}.pb"))
    print(f"wrote {test}")


def with_constant_inputs(out_dir, node_dir, wanted):
    """Writes each of ONNX's node tests in node_dir (none when it is empty) whose name `wanted`
    takes, with every graph input after the first made a constant (its test data), and its
    reference output, as test_mgs_const_NAME."""
    for name in sorted(os.listdir(node_dir)) if node_dir else []:
        if not wanted(name):
            continue
        model = onnx.load(os.path.join(node_dir, name, "model.onnx"))
        data = os.path.join(node_dir, name, "test_data_set_0")
        tensors = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"input_{i}.pb")))
                   for i in range(len(model.graph.input))]
        expected = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "output_0.pb")))
        node = model.graph.node[0]
        nodes = [const(vi.name, t) for vi, t in zip(model.graph.input[1:], tensors[1:])] + [node]
        write(out_dir, "test_mgs_const_" + name[len("test_"):], model.opset_import[0].version,
              nodes, [model.graph.input[0].name], [node.output[0]],
              {model.graph.input[0].name: tensors[0]}, expected=[expected])


def scatter_elements(out_dir, name, axis, idx, reduction, x, u):
    """test_mgs_scatterelements_NAME: ScatterElements of x * x at the constant indices `idx` of
    sin(u), opset 18."""
    write(out_dir, f"test_mgs_scatterelements_{name}", 18,
          [const("idx", np.array(idx, np.int64)),
           helper.make_node("Mul", ["x", "x"], ["sq"]),
           helper.make_node("Sin", ["u"], ["upd"]),
           helper.make_node("ScatterElements", ["sq", "idx", "upd"], ["y"], axis=axis,
                            reduction=reduction)],
          ["x", "u"], ["y"], {"x": x, "u": u})


def main(out_dir):
    rng = np.random.default_rng(23)
    r = lambda *shape: rng.standard_normal(shape).astype(np.float32)

    # 3-D, 4 query heads sharing 2 key/value heads, softcap, a BOOL mask joined with
    # is_causal: query 0's only causal key is masked, so its row is masked entirely.
    mask = np.ones((3, 3), dtype=bool)
    mask[0, 0] = False
    write(out_dir, "test_mgs_attention_3d_gqa_bool_mask_causal_softcap", 23,
          [const("mask", mask),
           helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"], q_num_heads=4,
                            kv_num_heads=2, is_causal=1, softcap=5.0)],
          ["q", "k", "v"], ["y"], {"q": r(2, 3, 8), "k": r(2, 3, 4), "v": r(2, 3, 4)})

    # 4-D with a cache of 2 steps, a FLOAT mask of 4 of the 5 keys (the 5th padded with -inf)
    # and is_causal (query i attends keys j <= i + 2); present_key and present_value out too.
    write(out_dir, "test_mgs_attention_4d_past_short_float_mask_causal", 23,
          [const("mask", r(3, 4)),
           helper.make_node("Attention", ["q", "k", "v", "mask", "pk", "pv"],
                            ["y", "present_k", "present_v"], is_causal=1, scale=0.3)],
          ["q", "k", "v", "pk", "pv"], ["y", "present_k", "present_v"],
          {"q": r(2, 2, 3, 4), "k": r(2, 2, 3, 4), "v": r(2, 2, 3, 5), "pk": r(2, 2, 2, 4),
           "pv": r(2, 2, 2, 5)})

    # Opset 24: a constant nonpad_kv_seqlen (batch 0 sees 3 of 4 keys, batch 1 all 4) with
    # is_causal aligned to each batch's last valid key.
    write(out_dir, "test_mgs_attention_4d_nonpad_causal", 24,
          [const("lens", np.array([3, 4], dtype=np.int64)),
           helper.make_node("Attention", ["q", "k", "v", "", "", "", "lens"], ["y"],
                            is_causal=1)],
          ["q", "k", "v"], ["y"], {"q": r(2, 2, 2, 4), "k": r(2, 2, 4, 4), "v": r(2, 2, 4, 4)})

    # A FLOAT mask computed by the graph (a graph input), one value per query head, with
    # 4 query heads sharing 2 key/value heads: split into (kv heads, group) like the scores.
    write(out_dir, "test_mgs_attention_4d_gqa_computed_mask", 23,
          [helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"])],
          ["q", "k", "v", "mask"], ["y"],
          {"q": r(2, 4, 3, 4), "k": r(2, 2, 3, 4), "v": r(2, 2, 3, 4), "mask": r(1, 4, 3, 3)})

    # GatherND at constant indices of depth 1, 2 (one negative) and 3, each a gather of the
    # data's leading dimensions flattened.
    for depth, indices in ((1, [[[2], [0]], [[1], [2]]]),
                           (2, [[[2, -1], [0, 3]], [[1, 1], [2, 0]]]),
                           (3, [[0, 1, 4], [2, 3, 0], [1, 0, 2]])):
        write(out_dir, f"test_mgs_gathernd_constant_depth{depth}", 13,
              [const("indices", np.array(indices, dtype=np.int64)),
               helper.make_node("GatherND", ["data", "indices"], ["y"])],
              ["data"], ["y"], {"data": r(3, 4, 5)})

    # What transformers' masking and embedding code computes on constant position ids and
    # buffers, evaluated at import and added to a graph input so the result is compared.
    i64 = lambda a: np.array(a, dtype=np.int64)
    folded = {
        # BERT's token_type_ids buffer read at constant positions (one negative), axis 1 and 0.
        "gatherelements_axis1": [
            const("buf", i64([[5, 6, 7, 8], [9, 10, 11, 12]])),
            const("pos", i64([[3, 0, -1], [1, 1, 2]])),
            helper.make_node("GatherElements", ["buf", "pos"], ["g"], axis=1)],
        "gatherelements_axis0": [
            const("buf", i64([[5, 6, 7], [9, 10, 11]])),
            const("pos", i64([[1, 0, 1], [0, 0, -1]])),
            helper.make_node("GatherElements", ["buf", "pos"], ["g"], axis=0)],
        # GatherND of INT64 data (position ids) at constant indices.
        "gathernd_int64": [
            const("buf", i64([[0, 1, 2], [3, 4, 5]])),
            const("idx", i64([[[0, 2], [1, 0]], [[1, -1], [0, 1]]])),
            helper.make_node("GatherND", ["buf", "idx"], ["g"])],
        # Packed-sequence detection: CumSum of INT64, each of exclusive and reverse, and of FLOAT.
        **{f"cumsum_int64_excl{e}_rev{v}": [
            const("buf", i64([[1, 0, 2], [3, 1, 1]])), const("axis", i64(-1)),
            helper.make_node("CumSum", ["buf", "axis"], ["g"], exclusive=e, reverse=v)]
           for e in (0, 1) for v in (0, 1)},
        "cumsum_float_axis0_excl_rev": [
            const("buf", np.array([[0.5, 1.0, 2.0], [3.0, -1.0, 0.25]], dtype=np.float32)),
            const("axis", i64(0)),
            helper.make_node("CumSum", ["buf", "axis"], ["g"], exclusive=1, reverse=1)],
        # T5's relative position buckets: Log of constants, and the -inf of log(0) cast to
        # INT64 in a lane a Where discards; Exp too.
        "log_cast_where": [
            const("buf", np.array([[0.0, 1.0, 8.0], [2.0, 0.0, 16.0]], dtype=np.float32)),
            helper.make_node("Log", ["buf"], ["l"]),
            helper.make_node("Cast", ["l"], ["li"], to=TensorProto.INT64),
            helper.make_node("Exp", ["buf"], ["e"]),
            helper.make_node("Cast", ["e"], ["ei"], to=TensorProto.INT64),
            const("zero", np.array([[True, False, False], [False, True, False]])),
            helper.make_node("Where", ["zero", "ei", "li"], ["g"])],
        # transformers' all-ones BOOL mask: ConstantOfShape of a BOOL value, Flatten, And.
        "constantofshape_bool_flatten": [
            const("shape", i64([2, 1, 3])),
            helper.make_node("ConstantOfShape", ["shape"], ["ones"],
                             value=numpy_helper.from_array(np.array([True]))),
            helper.make_node("Flatten", ["ones"], ["flat"], axis=2),
            const("tri", np.array([[True, False, True], [False, True, True]])),
            helper.make_node("And", ["flat", "tri"], ["m"]),
            const("one", np.array(1.0, dtype=np.float32)),
            const("big", np.array(-3.0, dtype=np.float32)),
            helper.make_node("Where", ["m", "one", "big"], ["g"])],
        # DeBERTa's relative positions: Sign and an INT64 Clip of constants; BLOOM's ALiBi: a
        # FLOAT base to INT32 powers (Range), tiled.
        "sign_clip_int64": [
            const("rel", i64([[0, -3, 5], [2, -1, 0]])),
            helper.make_node("Sign", ["rel"], ["s"]),
            const("lo", i64(-2)), const("hi", i64(3)),
            helper.make_node("Clip", ["rel", "lo", "hi"], ["c"]),
            helper.make_node("Mul", ["s", "c"], ["g"])],
        "pow_int32_exponent_tile": [
            const("base", np.array(0.5, dtype=np.float32)),
            const("start", np.array(1, dtype=np.int32)), const("limit", np.array(4, dtype=np.int32)),
            const("delta", np.array(1, dtype=np.int32)),
            helper.make_node("Range", ["start", "limit", "delta"], ["e"]),
            helper.make_node("Pow", ["base", "e"], ["p"]),
            const("shape", i64([1, 3])),
            helper.make_node("Reshape", ["p", "shape"], ["p2"]),
            const("reps", i64([2, 2])),
            helper.make_node("Tile", ["p2", "reps"], ["g"])],
    }
    for name, nodes in folded.items():
        value = ReferenceEvaluator(helper.make_model(
            helper.make_graph(nodes, name, [], [helper.make_tensor_value_info("g", 0, None)]),
            opset_imports=[helper.make_opsetid("", 20)])).run(None, {})[0]
        if name.startswith("gatherelements"):  # checked against NumPy too
            ref = dict((n.output[0], numpy_helper.to_array(n.attribute[0].t)) for n in nodes[:2])
            axis = 1 if name.endswith("1") else 0
            pos = ref["pos"] % ref["buf"].shape[axis]
            assert np.array_equal(value, np.take_along_axis(ref["buf"], pos, axis)), name
        cast = [] if value.dtype == np.float32 else [
            helper.make_node("Cast", ["g"], ["gf"], to=TensorProto.FLOAT)]
        write(out_dir, f"test_mgs_fold_{name}", 20,
              nodes + cast + [helper.make_node("Add", ["x", "gf" if cast else "g"], ["y"])],
              ["x"], ["y"], {"x": r(*value.shape)})

    # Tile of computed FLOAT data (DeBERTa's .repeat, GPT-J's repeat_interleave of its rotary
    # caches), and GatherElements of computed data at constant indices (DeBERTa's torch.gather
    # of its relative-position scores; a negative index among them).
    for name, shape, reps in [("2d", (2, 3), (2, 1)), ("3d", (2, 1, 3), (1, 3, 2))]:
        write(out_dir, f"test_mgs_tile_data_{name}", 13,
              [const("reps", np.array(reps, np.int64)),
               helper.make_node("Mul", ["x", "x"], ["sq"]),
               helper.make_node("Tile", ["sq", "reps"], ["y"])],
              ["x"], ["y"], {"x": r(*shape)})
    for axis, idx in [(0, [[1, 0, 1], [0, -2, 1], [1, 1, 0]]), (1, [[2, -1], [0, 0]])]:
        write(out_dir, f"test_mgs_gatherelements_data_axis{axis}", 13,
              [const("idx", np.array(idx, np.int64)),
               helper.make_node("Mul", ["x", "x"], ["sq"]),
               helper.make_node("GatherElements", ["sq", "idx"], ["y"], axis=axis)],
              ["x"], ["y"], {"x": r(2, 3)})

    # CumSum of computed FLOAT data (train.cumsum): each of exclusive and reverse, along the
    # middle axis of a 3-D tensor and, with a negative axis, the last.
    for e in (0, 1):
        for v in (0, 1):
            write(out_dir, f"test_mgs_cumsum_float_data_exclusive{e}_reverse{v}", 14,
                  [const("axis", np.array(1 if v == e else -1, np.int64)),
                   helper.make_node("Mul", ["x", "x"], ["sq"]),
                   helper.make_node("CumSum", ["sq", "axis"], ["y"], exclusive=e, reverse=v)],
                  ["x"], ["y"], {"x": r(2, 5, 3)})

    # ONNX's own Resize node tests (ONNX_NODE_DIR) with their roi, scales and sizes as
    # constants (their graph inputs there; mgs resizes by constant ones), X still the input,
    # and ONNX's reference outputs. Not tf_crop_and_resize (its region of interest: mgs refuses
    # it). And resizes ONNX's tests do not cover, with onnx.reference's outputs: a 3-D linear
    # resize of the last axis, a nearest one of the channel axis (a transpose each way), cubic
    # with antialias and exclude_outside together, and a resize that keeps every axis.
    # Einsums that are products with several free or contracted labels (each group merged by
    # a Reshape around the MatMul): XLNet's and Funnel's, a matrix-vector product, a batched dot
    # product, two contracted labels, and an outer product batched over a trailing label.
    for name, equation, sa, sb in [
            ("xlnet", "ibh,hnd->ibnd", (3, 2, 4), (4, 2, 3)),
            ("funnel", "td,dnh->tnh", (5, 4), (4, 2, 3)),
            ("matvec", "ij,j->i", (3, 4), (4,)),
            ("batched_dot", "bi,bi->b", (2, 5), (2, 5)),
            ("two_contracted", "ijk,jkl->il", (2, 3, 4), (3, 4, 5)),
            ("heads", "bnij,bjd->bnid", (2, 3, 4, 5), (2, 5, 6)),
            ("outer_trailing_batch", "ib,jb->ijb", (3, 2), (4, 2))]:
        write(out_dir, f"test_mgs_einsum_{name}", 13,
              [helper.make_node("Einsum", ["a", "b"], ["y"], equation=equation)],
              ["a", "b"], ["y"], {"a": r(*sa), "b": r(*sb)})

    node_dir = os.environ.get("ONNX_NODE_DIR", "")
    with_constant_inputs(out_dir, node_dir,
                         lambda n: n.startswith("test_resize_") and "tf_crop_and_resize" not in n)
    for name, shape, attrs, scales in [
            ("linear_3d_last_axis", (2, 3, 5), dict(mode="linear"), [1, 1, 1.6]),
            ("nearest_channel_axis", (1, 3, 2, 2), dict(mode="nearest"), [1, 2, 1, 1]),
            ("cubic_antialias_exclude_outside", (1, 1, 6, 7),
             dict(mode="cubic", antialias=1, exclude_outside=1), [1, 1, 0.5, 0.6]),
            ("keeps_every_axis", (1, 2, 3, 3), dict(mode="linear"), [1, 1, 1, 1])]:
        write(out_dir, f"test_mgs_resize_{name}", 19,
              [const("scales", np.array(scales, np.float32)),
               helper.make_node("Mul", ["x", "x"], ["sq"]),
               helper.make_node("Resize", ["sq", "", "scales"], ["y"], **attrs)],
              ["x"], ["y"], {"x": r(*shape)})

    # ONNX's own TopK node tests with K a constant (its graph input there; mgs selects a
    # constant number of entries) and the indices cast to FLOAT as a second output (mgs's
    # outputs are FLOAT), ONNX's reference outputs; not test_top_k_uint64 (mgs computes FLOAT).
    # And TopK's indices read as a mixture of experts reads them: a Gather of a table at them,
    # a GatherND at them as one-coordinate tuples through Expand and a one-input Max (PyTorch
    # 2.x's exporter), on an axis that is not the last; a GatherElements of computed data.
    for name in sorted(os.listdir(node_dir)) if node_dir else []:
        if not name.startswith("test_top_k") or name == "test_top_k_uint64":
            continue
        model = onnx.load(os.path.join(node_dir, name, "model.onnx"))
        data = os.path.join(node_dir, name, "test_data_set_0")
        x, k = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"input_{i}.pb")))
                for i in range(2)]
        values, indices = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"output_{i}.pb")))
                           for i in range(2)]
        node = model.graph.node[0]
        write(out_dir, "test_mgs_const_" + name[len("test_"):], model.opset_import[0].version,
              [const(model.graph.input[1].name, k), node,
               helper.make_node("Cast", [node.output[1]], ["indices_as_float"], to=F)],
              [model.graph.input[0].name], [node.output[0], "indices_as_float"],
              {model.graph.input[0].name: x.astype(np.float32)},  # same_values: INT64
              expected=[values.astype(np.float32), indices.astype(np.float32)])
    table = r(5, 3)
    write(out_dir, "test_mgs_topk_gather_table", 13,
          [const("k", np.array([2], np.int64)), const("table", table),
           helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
           helper.make_node("Gather", ["table", "i"], ["rows"]),
           helper.make_node("Mul", ["rows", "rows"], ["y"])],
          ["x"], ["v", "y"], {"x": r(4, 5)})
    write(out_dir, "test_mgs_topk_gathernd_axis0", 18,
          [const("k", np.array([2], np.int64)), const("table", table),
           const("shape", np.array([3, 4, 1], np.int64)), const("last", np.array([-1], np.int64)),
           const("minus_one", np.array([-1], np.int64)),
           helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=0, largest=0),
           helper.make_node("Transpose", ["v"], ["vt"], perm=[1, 0]),
           helper.make_node("Reshape", ["i", "minus_one"], ["flat"]),
           helper.make_node("Max", ["flat"], ["same"]),
           helper.make_node("Unsqueeze", ["same", "last"], ["tuples1"]),
           helper.make_node("Expand", ["tuples1", "shape"], ["tuples"]),
           helper.make_node("Concat", ["tuples"], ["tuples_c"], axis=-1),
           helper.make_node("GatherND", ["table", "tuples_c"], ["y"])],
          ["x"], ["vt", "y"], {"x": r(5, 2)})
    # torch.gather(probs, -1, idx) of TopK's indices: GatherElements of computed data at
    # indices computed at run time (the data squared first: computed), along axis 1 of three.
    write(out_dir, "test_mgs_topk_gatherelements", 13,
          [const("k", np.array([2], np.int64)),
           helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
           helper.make_node("Mul", ["x", "x"], ["sq"]),
           helper.make_node("GatherElements", ["sq", "i"], ["y"], axis=1)],
          ["x"], ["y"], {"x": r(3, 4, 2)})

    # ONNX's own DFT node tests (opset 20's axis input made a constant), their outputs computed
    # in float64 (NumPy's FFT; ONNX's stored ones are float32 results, 1.9e-7 off the inverse's
    # exact zeros, past the forward tests' atol 1e-7); and
    # FNet's mixing as torch.export writes torch.fft.fftn(x).real: the data made complex, DFTs
    # along two axes, the real part; a one-sided DFT of a real signal on the middle axis.
    for name in sorted(os.listdir(node_dir)) if node_dir else []:
        if not name.startswith("test_dft"):
            continue
        model = onnx.load(os.path.join(node_dir, name, "model.onnx"))
        data = os.path.join(node_dir, name, "test_data_set_0")
        tensors = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"input_{i}.pb")))
                   for i in range(len(model.graph.input))]
        node = model.graph.node[0]
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        opset = model.opset_import[0].version
        axis = int(tensors[1]) if opset >= 20 else attrs.get("axis", 1)
        x = tensors[0].astype(np.float64)
        signal = x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)
        transform = np.fft.ifft if attrs.get("inverse", 0) else np.fft.fft
        spectrum = transform(signal, axis=axis)
        expected = np.stack([spectrum.real, spectrum.imag], axis=-1).astype(np.float32)
        nodes = [const(vi.name, t) for vi, t in zip(model.graph.input[1:], tensors[1:])]
        nodes.append(node)
        write(out_dir, "test_mgs_const_" + name[len("test_"):], opset,
              nodes, [model.graph.input[0].name], [node.output[0]],
              {model.graph.input[0].name: tensors[0]}, expected=[expected])
    write(out_dir, "test_mgs_dft_fnet_fftn_real", 20,
          [const("last", np.array([-1], np.int64)), const("zero", np.array(0, np.float32)),
           const("a2", np.array(2, np.int64)), const("a1", np.array(1, np.int64)),
           const("s0", np.array([0], np.int64)), const("s1", np.array([1], np.int64)),
           helper.make_node("Mul", ["x", "x"], ["sq"]),
           helper.make_node("Unsqueeze", ["sq", "last"], ["re"]),
           helper.make_node("Mul", ["re", "zero"], ["im"]),
           helper.make_node("Concat", ["re", "im"], ["c"], axis=-1),
           helper.make_node("DFT", ["c", "", "a2"], ["f2"]),
           helper.make_node("DFT", ["f2", "", "a1"], ["f"]),
           helper.make_node("Slice", ["f", "s0", "s1", "last"], ["r"]),
           helper.make_node("Squeeze", ["r", "last"], ["y"])],
          ["x"], ["y"], {"x": r(2, 6, 5)})
    write(out_dir, "test_mgs_dft_onesided_middle_axis", 20,
          [const("last", np.array([-1], np.int64)), const("a1", np.array(1, np.int64)),
           helper.make_node("Unsqueeze", ["x", "last"], ["re"]),
           helper.make_node("DFT", ["re", "", "a1"], ["y"], onesided=1)],
          ["x"], ["y"], {"x": r(3, 7, 2)})

    # ScatterElements of computed data at constant indices (the last update written to a place
    # wins; reduction add sums duplicates; a negative index) and at TopK's indices, computed at
    # run time (none and add); OneHot of TopK's indices with FLOAT off and on values.
    for name, axis, idx, reduction in [("none_dup", 1, [[1, 1], [0, -1]], "none"),
                                       ("add_dup", 1, [[1, 1, 0], [2, 2, 2]], "add"),
                                       ("none_axis0", 0, [[1, 0, 1]], "none")]:
        scatter_elements(out_dir, name, axis, idx, reduction, r(2, 3), r(*np.array(idx).shape))
    for reduction in ("none", "add"):
        write(out_dir, f"test_mgs_topk_scatterelements_{reduction}", 18,
              [const("k", np.array([2], np.int64)),
               helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
               helper.make_node("Mul", ["x", "x"], ["sq"]),
               helper.make_node("Sin", ["v"], ["upd"]),
               helper.make_node("ScatterElements", ["sq", "i", "upd"], ["y"], axis=1,
                                reduction=reduction)],
              ["x"], ["y"], {"x": r(3, 5, 2)})
    write(out_dir, "test_mgs_topk_onehot", 11,
          [const("k", np.array([2], np.int64)), const("depth", np.array(4, np.int64)),
           const("values", np.array([-0.5, 2.0], np.float32)),
           helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
           helper.make_node("OneHot", ["i", "depth", "values"], ["y"], axis=1)],
          ["x"], ["y"], {"x": r(3, 4)})

    # ONNX's own Col2Im node tests (F.fold) with image_shape and block_shape made constants
    # (graph inputs there; mgs lowers a Col2Im of known shapes to a ConvTranspose at import),
    # ONNX's reference outputs; and a Col2Im of computed data whose blocks leave the image's last
    # row and column to the padding.
    with_constant_inputs(out_dir, node_dir, lambda n: n.startswith("test_col2im"))
    write(out_dir, "test_mgs_col2im_computed_output_padding", 18,
          [const("image", np.array([5, 5], np.int64)), const("block", np.array([2, 2], np.int64)),
           helper.make_node("Mul", ["x", "x"], ["sq"]),
           helper.make_node("Col2Im", ["sq", "image", "block"], ["y"], strides=[2, 2],
                            pads=[1, 1, 1, 1])],
          ["x"], ["y"], {"x": r(2, 8, 9)})

    # ONNX's own ScatterElements node tests (reductions none, add, max, min) with the indices and
    # updates made constants; and computed data with max and min at repeated places (some
    # updates tie, of a Sin of equal inputs) and add with indices smaller than the data but
    # along the axis (PyG's aggregations, the global pools).
    with_constant_inputs(out_dir, node_dir, lambda n: n.startswith("test_scatter_elements"))
    for name, axis, idx, reduction in [("max_dup", 1, [[1, 1, 0, 1], [2, 2, 2, 0]], "max"),
                                       ("min_dup", 1, [[1, 1, 0, 1], [2, 2, 2, 0]], "min"),
                                       ("add_partial", 1, [[1, 0]], "add")]:
        u = r(*np.array(idx).shape)
        u[0, 1] = u[0, 0]  # two updates of one value at one place
        scatter_elements(out_dir, name, axis, idx, reduction, r(2, 3), u)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
