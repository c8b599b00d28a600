"""Hostile or malformed ONNX models: each gives a ConversionError that names what is
wrong and where, or (a valid model) imports; never a raw exception or a silent misread.
One test per finding of the hostile-model audit of the ONNX importer."""

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T, helper, numpy_helper  # noqa: E402

import onegraph as og  # noqa: E402
from onegraph.convert import from_onnx  # noqa: E402
from onegraph.errors import ConversionError  # noqa: E402

N = helper.make_node


def _model(nodes, inputs, outputs, inits=(), opset=21):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def _vi(name, elem=T.FLOAT, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def _const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def _external_model(tmp_path, location):
    t = onnx.TensorProto(name="w", data_type=T.FLOAT, dims=[2, 3],
                         data_location=T.EXTERNAL)
    e = t.external_data.add()
    e.key, e.value = "location", location
    m = _model([N("Add", ["x", "w"], ["y"])], [_vi("x", T.FLOAT, [2, 3])],
               [_vi("y", T.FLOAT, None)], [t])
    path = tmp_path / "model.onnx"
    onnx.save(m, str(path))
    return str(path)


# #1: a string field (op_type, attribute name, value name) that is not valid UTF-8
# (protobuf hands Python bytes for it) is refused up front, naming the node
@pytest.mark.parametrize("old, new, field", [
    (b"LeakyRelu", b"LeakyRel\xff", "op_type"),
    (b"alpha", b"alph\xff", "attribute[0].name"),
    (b"\n\x01x", b"\n\x01\xff", "input[0]"),
], ids=["op_type", "attribute-name", "input-name"])
def test_non_utf8_strings_are_refused(old, new, field):
    m = _model([N("LeakyRelu", ["x"], ["y"], alpha=0.5)], [_vi("x", T.FLOAT, [2, 3])],
               [_vi("y", T.FLOAT, None)])
    data = m.SerializeToString()
    assert old in data
    with pytest.raises(ConversionError, match="not valid UTF-8") as err:
        from_onnx(data.replace(old, new, 1))
    assert "node 0" in str(err.value) and field in str(err.value)


# #2: an external-data location with a NUL byte
def test_external_location_with_nul_byte(tmp_path):
    (tmp_path / "w.bin").write_bytes(np.arange(6, dtype=np.float32).tobytes())
    with pytest.raises(ConversionError, match="'w.bin\\\\x00junk' contains a NUL byte"):
        from_onnx(_external_model(tmp_path, "w.bin\x00junk"))


# #9: tensor data that does not fit its dims and element type exactly
def _raw(dtype, dims, raw=None, i32=None):
    t = onnx.TensorProto(name="w", data_type=dtype, dims=dims)
    if raw is not None:
        t.raw_data = raw
    if i32 is not None:
        t.int32_data.extend(i32)
    return t


@pytest.mark.parametrize("tensor, match", [
    (_raw(T.UINT4, [2], raw=b"\x12\x34\x56"), "raw_data has 3 bytes, .* need 1"),
    (_raw(T.INT4, [3], raw=b"\x12"), "raw_data has 1 bytes, .* need 2"),
    (_raw(T.FLOAT16, [3], i32=[2 ** 31 - 1, -(2 ** 31), 70000]),
     r"int32_data\[0\] = 2147483647 is out of range for FLOAT16"),
    (_raw(T.BFLOAT16, [1], i32=[70000]), "out of range for BFLOAT16"),
    (_raw(T.FLOAT8E4M3FN, [1], i32=[256]), "out of range for FLOAT8E4M3FN"),
    (_raw(T.UINT4, [2], i32=[1, 2]), "int32_data has 2 entries, .* need 1"),
    (_raw(T.UINT4, [2], i32=[256]), "out of range for UINT4"),
    (_raw(T.INT8, [1], i32=[200]), "out of range for INT8"),
    (_raw(T.UINT16, [1], i32=[-1]), "out of range for UINT16"),
    (_raw(T.BOOL, [1], i32=[2]), "out of range for BOOL"),
], ids=["uint4-raw-long", "int4-raw-short", "float16-i32", "bfloat16-i32", "float8-i32",
        "uint4-i32-count", "uint4-i32-range", "int8-i32", "uint16-i32", "bool-i32"])
def test_initializer_payload_must_fit_its_type(tensor, match):
    m = _model([N("Identity", ["w"], ["y"])], [], [_vi("y", tensor.data_type, None)],
               [tensor])
    with pytest.raises(ConversionError, match="initializer 'w': .*" + match):
        from_onnx(m)


# #10: declarations that contradict the initializer or the producing node
@pytest.mark.parametrize("op, inputs, types, bad", [
    ("Add", ["a", "b"], [T.INT32, T.FLOAT], (0, "int32", 1, "float32")),
    ("Mul", ["a", "b"], [T.UINT8, T.INT8], (0, "uint8", 1, "int8")),
    ("Equal", ["a", "b"], [T.FLOAT, T.INT64], (0, "float32", 1, "int64")),
    ("Where", ["c", "a", "b"], [T.BOOL, T.FLOAT, T.INT32], (1, "float32", 2, "int32")),
    ("Sum", ["a", "b", "c"], [T.DOUBLE, T.DOUBLE, T.FLOAT16], (0, "float64", 2, "float16")),
])
def test_inputs_of_one_type_parameter_must_agree(op, inputs, types, bad):
    """(math audit finding 1: an int32 + float32 Add ran in int32, 1.7 -> 1)"""
    declared = [_vi(name, elem, [2]) for name, elem in zip(inputs, types)]
    out_type = T.BOOL if op == "Equal" else types[-1]   # stated, and not the first's
    model = _model([N(op, inputs, ["y"], name="n")], declared, [_vi("y", out_type)])
    i, first, j, second = bad
    with pytest.raises(ConversionError, match=(
            rf"node 'n' \({op}\): input {i} \('{inputs[i]}'\) is {first} but input {j} "
            rf"\('{inputs[j]}'\) is {second}; {op} takes one type for both")):
        from_onnx(model)


def test_a_stale_type_declaration_is_named_before_a_type_conflict_it_would_make():
    """(review: the conflict check read the stale value_info and blamed the Add)"""
    relu, add = N("Relu", ["x"], ["c"]), N("Add", ["c", "x"], ["y"])
    model = _model([relu, add], [_vi("x", T.FLOAT, [2])], [_vi("y", T.FLOAT)])
    model.graph.value_info.append(_vi("c", T.INT64, [2]))
    with pytest.raises(ConversionError, match="value 'c' is declared with element type "
                                              "INT64, but node 0 'Relu_0'"):
        from_onnx(model)


def test_a_type_conflict_between_computed_values_is_refused():
    """A Cast's int64 added to a float: no declaration says so, the inference does"""
    cast, add = N("Cast", ["x"], ["c"], to=T.INT64), N("Add", ["c", "x"], ["y"], name="n")
    model = _model([cast, add], [_vi("x", T.FLOAT, [2])], [_vi("y", T.INT64)])
    with pytest.raises(ConversionError, match=r"node 'n' \(Add\): input 0 \('c'\) is "
                                              r"int64 but input 1 \('x'\) is float32"):
        from_onnx(model)


def test_declared_types_must_match_the_model():
    x = _vi("x", T.FLOAT, [2, 3])
    add = N("Add", ["x", "w"], ["y"])
    w = _const("w", np.ones((2, 3), np.float32))
    for declared, match in ((_vi("w", T.INT64, [2, 3]), "element type INT64"),
                            (_vi("w", T.FLOAT, [5]), r"shape \[5\]")):
        with pytest.raises(ConversionError,
                           match=f"input 'w': declared with {match}, but its initializer "
                                 r"is FLOAT32\[2, 3\]"):
            from_onnx(_model([add], [x, declared], [_vi("y", T.FLOAT, None)], [w]))
    # a less specific or symbolic declaration is fine
    loose = _model([add], [x, _vi("w", T.FLOAT, ["a", None])], [_vi("y", T.FLOAT, None)],
                   [w])
    imported = from_onnx(loose).graph
    w_t = imported.tensors[imported.find_tensor("w")]
    assert w_t.dtype is og.DType.FLOAT32 and tuple(w_t.shape) == (2, 3)
    np.testing.assert_array_equal(w_t.data, np.ones((2, 3), np.float32))
    with pytest.raises(ConversionError, match="output 'y' is declared with element type "
                                              "INT64, but node 0 'Relu_0' .* FLOAT32"):
        from_onnx(_model([N("Relu", ["x"], ["y"])], [x], [_vi("y", T.INT64, [9])]))
    m = _model([N("Relu", ["x"], ["r"]), N("Neg", ["r"], ["y"])], [x],
               [_vi("y", T.FLOAT, None)])
    m.graph.value_info.append(_vi("r", T.INT32, None))
    with pytest.raises(ConversionError, match="value 'r' is declared with element type "
                                              "INT32, but node 0 'Relu_0'"):
        from_onnx(m)
    ok = _model([N("Relu", ["x"], ["y"])], [x], [_vi("y", T.FLOAT, ["n", None])])
    assert og.Session(from_onnx(ok)).run(["y"], {"x": np.ones((2, 3), np.float32)})[0] \
        .shape == (2, 3)


# #11: the placeholder of an omitted output never takes a name of the model
def test_omitted_output_placeholder_does_not_collide():
    m = _model([N("Split", ["x"], ["", "y"], axis=0, num_outputs=2),
                N("Relu", ["x"], ["__og_omitted__0_0"])], [_vi("x", T.FLOAT, [2, 3])],
               [_vi("y", T.FLOAT, [1, 3]), _vi("__og_omitted__0_0", T.FLOAT, [2, 3])])
    onnx.checker.check_model(m, full_check=True)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    y, r = og.Session(from_onnx(m)).run(["y", "__og_omitted__0_0"], {"x": x})
    np.testing.assert_array_equal(y, x[1:])
    np.testing.assert_array_equal(r, np.maximum(x, 0))
    # a real second producer is named as such, with the first one
    dup = _model([N("Relu", ["x"], ["y"]), N("Neg", ["x"], ["y"])],
                 [_vi("x", T.FLOAT, [2, 3])], [_vi("y", T.FLOAT, None)])
    with pytest.raises(ConversionError, match=r"node 1 \(Neg\) output 'y' is already "
                                              r"defined \(as output of node 0 \(Relu\)\)"):
        from_onnx(dup)


# #12 part 1: an external-data location that is a directory or a FIFO says so (and a
# FIFO is never opened: that would block)
def test_external_location_not_a_regular_file(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "w.bin").mkdir()
    with pytest.raises(ConversionError, match="'w.bin' is a directory"):
        from_onnx(_external_model(tmp_path / "d", "w.bin"))
    if not hasattr(os, "mkfifo"):
        return
    (tmp_path / "f").mkdir()
    os.mkfifo(tmp_path / "f" / "w.bin")
    with pytest.raises(ConversionError, match="'w.bin' is not a regular file"):
        from_onnx(_external_model(tmp_path / "f", "w.bin"))


# #12 part 2: bad op values found by import-time shape inference name the node and
# the cause, not just an invalid dimension of some tensor
@pytest.mark.parametrize("node, inits, x_shape, match", [
    (N("Resize", ["x", "", "sc"], ["y"]), [_const("sc", np.array([1, np.nan], np.float32))],
     [2, 3], "node 0 'Resize_0' \\(Resize\\): Resize: scales must be finite"),
    (N("Pad", ["x", "p"], ["y"]), [_const("p", np.array([0, 0, -10 ** 6, 0], np.int64))],
     [2, 3], "node 0 'Pad_0' \\(Pad\\): Pad: pads 0 and -1000000 on axis 0 of size 2"),
    (N("STFT", ["x", "st", "", "fl"], ["y"]),
     [_const("st", np.array(1, np.int64)), _const("fl", np.array(2 ** 40, np.int64))],
     [1, 16, 1], "node 0 'STFT_0' \\(STFT\\): STFT: frame_length 1099511627776 "),
], ids=["resize-nan-scale", "pad-negative", "stft-huge-frame"])
def test_bad_op_values_name_the_node(node, inits, x_shape, match):
    m = _model([node], [_vi("x", T.FLOAT, x_shape)], [_vi("y", T.FLOAT, None)], inits)
    with pytest.raises(ConversionError, match=match):
        from_onnx(m)


def test_split_with_more_outputs_than_num_outputs_is_refused_before_onnx_inference(tmp_path):
    """(shape audit finding 2: onnx's shape inference aborted the process, SIGABRT; the
    import runs in a child process so that a regression fails this test only)"""
    import subprocess
    import sys

    model = _model([N("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=2, name="sp")],
                   [_vi("x", T.FLOAT, [6])], [_vi(o) for o in "abc"], opset=18)
    path = tmp_path / "split.onnx"
    path.write_bytes(model.SerializeToString())
    script = ("import sys\nfrom onegraph.convert import from_onnx\nfrom onegraph.errors "
              "import OpAttributeError\ntry:\n    from_onnx(sys.argv[1])\nexcept "
              "OpAttributeError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "node 'sp' (Split): num_outputs is 2 but the node has 3 outputs" in done.stdout


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
def test_pre_13_flattening_ops_refuse_an_axis_beyond_the_rank(op):
    """(math audit finding 7: a 1-D Softmax-11 with the default axis 1 gave all ones)"""
    model = _model([N(op, ["x"], ["y"], name="s")], [_vi("x", T.FLOAT, [3])], [_vi("y")],
                   opset=11)
    with pytest.raises(ConversionError, match=rf"node 's' \({op}\): axis 1 is out of range "
                                              r"for its input of rank 1"):
        from_onnx(model)
    fine = _model([N(op, ["x"], ["y"], axis=-1)], [_vi("x", T.FLOAT, [3])], [_vi("y")],
                  opset=11)
    from_onnx(fine)


@pytest.mark.parametrize("mode", ["edge", "reflect"])
def test_pad_2_keeps_working_with_a_value_it_does_not_use(mode):
    """(shape audit finding 3: onnx's converter copied `value` into Pad-13, which then
    refused it)"""
    import onnxruntime as ort

    model = _model([N("Pad", ["x"], ["y"], mode=mode, pads=[1, 1, 1, 1], value=2.0)],
                   [_vi("x", T.FLOAT, [2, 3])], [_vi("y")], opset=10)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    np.testing.assert_array_equal(og.Session(from_onnx(model)).run(["y"], {"x": x})[0], want)


def test_an_old_model_whose_node_makes_a_negative_dim_names_that_node():
    """(shape audit finding 7: at opset 11 the error named only the output, whose
    impossible shape onnx's version converter had written into the declarations)"""
    model = _model([N("Pad", ["x", "p"], ["y"])], [_vi("x", T.FLOAT, [1, 2])], [_vi("y")],
                   [_const("p", np.array([0, -4, 0, -2]))], opset=11)
    with pytest.raises(ConversionError, match=r"node 0 'Pad_0' \(Pad\): Pad: pads -4 and -2 "
                                              r"on axis 1 of size 2 leave -4 elements"):
        from_onnx(model)


def test_the_pre_13_axis_check_reads_each_subgraph_s_own_declarations():
    """(review: a sibling branch's declaration of the same name, rank 1, refused a
    valid Softmax whose input is 2-D in its own branch)"""
    els = helper.make_graph([N("Relu", ["x1"], ["t"]), N("Softmax", ["t"], ["a"], axis=0)],
                            "else", [], [_vi("a", T.FLOAT, [3])],
                            value_info=[_vi("t", T.FLOAT, [3])])
    then = helper.make_graph([N("Relu", ["x2"], ["t"]), N("Softmax", ["t"], ["b"]),
                              N("ReduceSum", ["b"], ["b2"], axes=[0], keepdims=0)],
                             "then", [], [_vi("b2", T.FLOAT, [3])],
                             value_info=[_vi("t", T.FLOAT, [2, 3])])
    model = _model([N("If", ["c"], ["o"], then_branch=then, else_branch=els)],
                   [_vi("c", T.BOOL, []), _vi("x1", T.FLOAT, [3]), _vi("x2", T.FLOAT, [2, 3])],
                   [_vi("o", T.FLOAT, [3])], opset=11)
    got = og.Session(from_onnx(model)).run(["o"], {
        "c": np.array(True), "x1": np.zeros(3, np.float32), "x2": np.zeros((2, 3), np.float32)})
    np.testing.assert_allclose(got[0], np.full(3, 2 / 3), rtol=1e-6)
