"""Op versions of opsets 1-6 that onnx's version converter has no adapter for
(convert/onnx_unadapted.py): Pad-1, Split-1, Cast-1, Tile-1, LpPool-1, GlobalLpPool-1,
RNN-1, GRU-1/3, LSTM-1, and And/Or/Xor/Equal/Greater/Less-1 with an `axis` broadcast.

onnxruntime runs no model older than opset 7, so each old model is checked against
ONNX's reference implementation where it has the old version (Pad-1) and otherwise
against the same computation written in the op's current version (the operand
reshaped, the repeats spelled out by numpy, ...) and run by onnxruntime.
"""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.convert.onnx_unadapted import UNADAPTED_BEFORE
from onegraph.errors import ConversionError

vi = helper.make_tensor_value_info
RNG = np.random.default_rng(7)


def _model(nodes, inputs, outputs, opset, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    # IR 3 for the old opsets, as their exporters wrote (initializers not listed as
    # inputs: the importer states such models as IR 4)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=3 if opset < 7 else 7)


def _onegraph(model, feeds):
    sess = og.Session(from_onnx(model))
    return sess.run([o.name for o in model.graph.output], feeds)


def _ort(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _same(got, want, tol=1e-6):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_every_op_without_an_adapter_is_handled():
    """The list is onnx's own: every op version below 13 whose upgrade onnx's
    converter refuses for want of an adapter is one the importer spells itself."""
    from onnx import defs, version_converter

    versions = {}
    for s in defs.get_all_schemas_with_history():
        if s.domain == "" and not s.deprecated:
            versions.setdefault(s.name, set()).add(s.since_version)
    missing = {}
    for name, vs in versions.items():
        vs = sorted(vs)
        for old, new in zip(vs, vs[1:]):
            if new > 13:
                break
            schema = defs.get_schema(name, old)
            ins = [f"i{k}" for k in range(max(1, schema.min_input))]
            outs = [f"o{k}" for k in range(max(1, schema.min_output))]
            model = _model([helper.make_node(name, ins, outs)],
                           [vi(i, T.FLOAT, None) for i in ins],
                           [vi(o, T.FLOAT, None) for o in outs], old)
            try:
                version_converter.convert_version(model, new)
            except Exception as e:  # noqa: BLE001 - the converter raises several kinds
                if "No Adapter" in str(e):
                    missing[name] = max(missing.get(name, 0), new)
    assert missing == UNADAPTED_BEFORE


@pytest.mark.parametrize("mode,value", [("constant", 0.0), ("constant", -2.5),
                                        ("reflect", 0.0), ("edge", 0.0)])
def test_pad_1_against_onnx_reference(mode, value):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    node = helper.make_node("Pad", ["x"], ["y"], paddings=[0, 1, 2, 1, 2, 0], mode=mode,
                            value=value)
    model = _model([node], [vi("x", T.FLOAT, [2, 3, 4])], [vi("y", T.FLOAT, None)], 1)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    _same(_onegraph(model, {"x": x}), want, 0)


def test_pad_1_feeding_an_old_broadcast_add():
    """The converter's Add 6 -> 7 adapter needs its inputs' shapes: the Pad-1 waiting
    for opset 11 has its output declared, from its opset-11 spelling."""
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    b = RNG.standard_normal(2).astype(np.float32)
    nodes = [helper.make_node("Pad", ["x"], ["p"], paddings=[0, 1, 0, 2], value=1.5),
             helper.make_node("Add", ["p", "b"], ["y"], broadcast=1, axis=0)]
    model = _model(nodes, [vi("x", T.FLOAT, [2, 3]), vi("b", T.FLOAT, [2])],
                   [vi("y", T.FLOAT, None)], 1)
    want = np.pad(x, [(0, 0), (1, 2)], constant_values=1.5) + b[:, None]
    _same(_onegraph(model, {"x": x, "b": b}), [want])


@pytest.mark.parametrize("to,number", [("FLOAT", T.FLOAT), ("int32", T.INT32),
                                       ("Double", T.DOUBLE), ("BOOL", T.BOOL),
                                       ("UINT8", T.UINT8)])
def test_cast_1_names_its_type(to, number):
    x = (RNG.standard_normal((3, 4)) * 5).astype(np.float32)
    old = _model([helper.make_node("Cast", ["x"], ["y"], to=to)],
                 [vi("x", T.FLOAT, [3, 4])], [vi("y", number, None)], 1)
    new = _model([helper.make_node("Cast", ["x"], ["y"], to=number)],
                 [vi("x", T.FLOAT, [3, 4])], [vi("y", number, None)], 7)
    _same(_onegraph(old, {"x": x}), _ort(new, {"x": x}), 0)


def test_cast_1_chain_through_a_standard_op():
    """Cast-1 -> Relu -> Cast-1: the second is declared once the first is."""
    x = (RNG.standard_normal((3, 4)) * 5).astype(np.float32)
    nodes = [helper.make_node("Cast", ["x"], ["d"], to="DOUBLE"),
             helper.make_node("Relu", ["d"], ["r"]),
             helper.make_node("Cast", ["r"], ["y"], to="INT64")]
    model = _model(nodes, [vi("x", T.FLOAT, [3, 4])], [vi("y", T.INT64, None)], 1)
    _same(_onegraph(model, {"x": x}),
          [np.maximum(x.astype(np.float64), 0).astype(np.int64)], 0)


def test_cast_1_with_an_unknown_type_name_is_refused():
    model = _model([helper.make_node("Cast", ["x"], ["y"], to="FLOAT7", name="c")],
                   [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, None)], 1)
    with pytest.raises(ConversionError, match=r"Cast node 'c'.*'FLOAT7'"):
        from_onnx(model)


@pytest.mark.parametrize("given", ["attribute", "constant input", "runtime input", None])
def test_split_1(given):
    x = RNG.standard_normal((2, 7)).astype(np.float32)
    lengths = np.array([2, 4, 1], np.float32)
    inputs, inits, extra, feeds = [vi("x", T.FLOAT, [2, 7])], [], {}, {"x": x}
    names = ["x"]
    if given == "attribute":
        extra["split"] = [2, 4, 1]
    elif given == "constant input":
        inits.append(numpy_helper.from_array(lengths, "s"))
        names.append("s")
    elif given == "runtime input":
        inputs.append(vi("s", T.FLOAT, [3]))
        feeds["s"] = lengths
        names.append("s")
    outs = ["a", "b", "c"] if given else ["a"]
    model = _model([helper.make_node("Split", names, outs, axis=1, **extra)], inputs,
                   [vi(o, T.FLOAT, None) for o in outs], 1, inits)
    split = {"split": [2, 4, 1]} if given else {}
    new = _model([helper.make_node("Split", ["x"], outs, axis=1, **split)],
                 [vi("x", T.FLOAT, [2, 7])], [vi(o, T.FLOAT, None) for o in outs], 7)
    _same(_onegraph(model, feeds), _ort(new, {"x": x}), 0)


def test_split_1_with_lengths_twice_is_refused():
    model = _model([helper.make_node("Split", ["x", "s"], ["a", "b"], split=[1, 1],
                                     name="sp")],
                   [vi("x", T.FLOAT, [2]), vi("s", T.FLOAT, [2])],
                   [vi("a", T.FLOAT, None), vi("b", T.FLOAT, None)], 1)
    with pytest.raises(ConversionError, match=r"Split node 'sp'.*not both"):
        from_onnx(model)


@pytest.mark.parametrize("tiles,axis", [(3, 0), (2, 1), (4, -1), (1, 2)])
def test_tile_1(tiles, axis):
    x = RNG.standard_normal((2, 3, 2)).astype(np.float32)
    model = _model([helper.make_node("Tile", ["x", "t", "a"], ["y"])],
                   [vi("x", T.FLOAT, [2, 3, 2]), vi("t", T.FLOAT, []),
                    vi("a", T.FLOAT, [])], [vi("y", T.FLOAT, None)], 1)
    repeats = np.ones(3, np.int64)
    repeats[axis] = tiles
    new = _model([helper.make_node("Tile", ["x", "r"], ["y"])],
                 [vi("x", T.FLOAT, [2, 3, 2]), vi("r", T.INT64, [3])],
                 [vi("y", T.FLOAT, None)], 7)
    got = _onegraph(model, {"x": x, "t": np.array(tiles, np.float32),
                            "a": np.array(axis, np.float32)})
    _same(got, _ort(new, {"x": x, "r": repeats}), 0)


@pytest.mark.parametrize("op,dtype", [("And", T.BOOL), ("Or", T.BOOL), ("Xor", T.BOOL),
                                      ("Equal", T.INT32), ("Greater", T.FLOAT),
                                      ("Less", T.FLOAT)])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_logic_1_broadcast_at_an_axis(op, dtype, axis):
    """B of shape (3,) [or (2, 3)] broadcast at `axis` of A (2, 3, 4): aligned there,
    as Add-1 was; the oracle reshapes B by hand for opset 7's numpy broadcasting."""
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    a = (RNG.standard_normal((2, 3, 4)) * 2).round().astype(np_type)
    b_shape = {0: (2, 3), 1: (3,), None: (4,)}[axis]
    b = (RNG.standard_normal(b_shape) * 2).round().astype(np_type)
    attrs = {"broadcast": 1} if axis is None else {"broadcast": 1, "axis": axis}
    old = _model([helper.make_node(op, ["a", "b"], ["y"], **attrs)],
                 [vi("a", dtype, [2, 3, 4]), vi("b", dtype, list(b_shape))],
                 [vi("y", T.BOOL, None)], 1)
    at = 3 - len(b_shape) if axis is None else axis   # no axis: trailing alignment
    trailing = 3 - at - len(b_shape)
    b_new = b.reshape(b_shape + (1,) * trailing)
    new = _model([helper.make_node(op, ["a", "b"], ["y"])],
                 [vi("a", dtype, [2, 3, 4]), vi("b", dtype, list(b_new.shape))],
                 [vi("y", T.BOOL, None)], 7)
    _same(_onegraph(old, {"a": a, "b": b}), _ort(new, {"a": a, "b": b_new}), 0)


def test_logic_1_axis_broadcast_of_unknown_ranks_is_refused():
    model = _model([helper.make_node("And", ["a", "b"], ["y"], broadcast=1, axis=0,
                                     name="and")],
                   [vi("a", T.BOOL, None), vi("b", T.BOOL, None)],
                   [vi("y", T.BOOL, None)], 1)
    with pytest.raises(ConversionError, match=r"And node 'and'.*axis 0.*ranks"):
        from_onnx(model)


@pytest.mark.parametrize("op,attrs", [("GlobalLpPool", {"p": 3.0}), ("GlobalLpPool", {}),
                                      ("LpPool", {"kernel_shape": [2, 2], "p": 1.0}),
                                      ("LpPool", {"kernel_shape": [3, 3], "strides": [2, 2],
                                                  "pads": [1, 1, 1, 1]})])
def test_lp_pool_1_float_p(op, attrs):
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
    old = _model([helper.make_node(op, ["x"], ["y"], **attrs)],
                 [vi("x", T.FLOAT, [1, 2, 5, 5])], [vi("y", T.FLOAT, None)], 1)
    new_attrs = dict(attrs, p=int(attrs.get("p", 2.0)))
    new = _model([helper.make_node(op, ["x"], ["y"], **new_attrs)],
                 [vi("x", T.FLOAT, [1, 2, 5, 5])], [vi("y", T.FLOAT, None)], 11)
    _same(_onegraph(old, {"x": x}), _ort(new, {"x": x}), 1e-5)


def test_lp_pool_1_fractional_p_is_refused():
    model = _model([helper.make_node("GlobalLpPool", ["x"], ["y"], p=2.5, name="lp")],
                   [vi("x", T.FLOAT, [1, 2, 3, 3])], [vi("y", T.FLOAT, None)], 1)
    with pytest.raises(ConversionError, match=r"GlobalLpPool node 'lp'.*whole number"):
        from_onnx(model)


@pytest.mark.parametrize("op,opset", [("RNN", 1), ("GRU", 1), ("GRU", 3), ("LSTM", 1)])
def test_recurrent_1_output_sequence(op, opset):
    """RNN-1, GRU-1/3 and LSTM-1 carry `output_sequence`, which version 7 dropped."""
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    hidden, size, steps, batch = 4, 3, 5, 2
    weights = [numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32), n)
               for n, shape in (("W", (1, gates * hidden, size)),
                                ("R", (1, gates * hidden, hidden)),
                                ("B", (1, 2 * gates * hidden)))]
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])

    def model(version, extra):
        node = helper.make_node(op, ["x", "W", "R", "B"], outs, hidden_size=hidden,
                                **extra)
        return _model([node], [vi("x", T.FLOAT, [steps, batch, size])],
                      [vi(o, T.FLOAT, None) for o in outs], version, weights)

    x = RNG.standard_normal((steps, batch, size)).astype(np.float32)
    _same(_onegraph(model(opset, {"output_sequence": 1}), {"x": x}),
          _ort(model(7, {}), {"x": x}), 1e-5)


def test_unadapted_ops_in_if_branches():
    """Deferred nodes inside If bodies are spelled too (the bodies are rewritten before
    the graph holding them, whose node list is then replaced)."""
    then = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["t"], to="INT32"),
         helper.make_node("Pad", ["x"], ["tp"], paddings=[1, 1], value=2.0)],
        "then", [], [vi("t", T.INT32, None), vi("tp", T.FLOAT, None)])
    other = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["e"], to="int32"),
         helper.make_node("Pad", ["x"], ["ep"], paddings=[0, 2], mode="edge")],
        "else", [], [vi("e", T.INT32, None), vi("ep", T.FLOAT, None)])
    model = _model([helper.make_node("If", ["c"], ["y", "z"], then_branch=then,
                                     else_branch=other)],
                   [vi("c", T.BOOL, []), vi("x", T.FLOAT, [3])],
                   [vi("y", T.INT32, None), vi("z", T.FLOAT, None)], 1)
    x = np.array([1.5, -2.7, 3.2], np.float32)
    sess = og.Session(from_onnx(model))
    y, z = sess.run(["y", "z"], {"c": np.array(True), "x": x})
    _same([y, z], [x.astype(np.int32), np.pad(x, 1, constant_values=2.0)], 0)
    y, z = sess.run(["y", "z"], {"c": np.array(False), "x": x})
    _same([y, z], [x.astype(np.int32), np.pad(x, (0, 2), mode="edge")], 0)


def test_early_op_in_an_if_branch_against_onnxruntime():
    """ThresholdedRelu before opset 10 (onnx has no schema for it then; onnxruntime
    runs it) inside an If body also waits for opset 11 and is spelled there."""
    branch = helper.make_graph([helper.make_node("ThresholdedRelu", ["x"], ["t"],
                                                 alpha=0.5)],
                               "then", [], [vi("t", T.FLOAT, [4])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [vi("e", T.FLOAT, [4])])
    model = _model([helper.make_node("If", ["c"], ["y"], then_branch=branch,
                                     else_branch=other)],
                   [vi("c", T.BOOL, []), vi("x", T.FLOAT, [4])], [vi("y", T.FLOAT, [4])],
                   9)
    x = np.array([0.2, 0.7, -1.0, 3.0], np.float32)
    for c in (True, False):
        feeds = {"c": np.array(c), "x": x}
        _same(_onegraph(model, feeds), _ort(model, feeds), 0)
