"""What Session.run returns and accepts: fetched arrays are the caller's own (writing
into one never changes the graph, the Session's state or later runs; TF1 and
onnxruntime return independent arrays), handles of another graph are refused, and
feeds that would change value in the cast to the tensor's dtype are refused."""

import collections

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onegraph as og
from onegraph.convert import from_onnx
from onegraph.errors import ExecutionError, OneGraphError, ShapeError
from onegraph.format import Graph, Model


def _onnx(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def test_folded_constant_fetch_is_a_private_copy():
    w = np.array([1.0, 2.0], np.float32)
    m = _onnx([helper.make_node("Add", ["W", "W"], ["c"]),
               helper.make_node("Add", ["x", "c"], ["y"])],
              [_vi("x", [2])], [_vi("y", [2]), _vi("c", [2])],
              [numpy_helper.from_array(w, "W")])
    sess = og.Session(from_onnx(m))
    x = np.zeros(2, np.float32)
    c1, _ = sess.run(["c", "y"], {"x": x})
    c1 += 100  # the caller post-processes its result in place
    c2, y2 = sess.run(["c", "y"], {"x": x})
    want = ort.InferenceSession(m.SerializeToString()).run(["c", "y"], {"x": x})
    np.testing.assert_array_equal(c2, want[0])
    np.testing.assert_array_equal(y2, want[1])
    assert c2 is not c1 and c2.flags.writeable


def test_results_do_not_alias_the_fed_arrays():
    m = _onnx([helper.make_node("Reshape", ["x", "s"], ["y"]),
               helper.make_node("Identity", ["x"], ["z"])],
              [_vi("x", [2, 2])], [_vi("y", [4]), _vi("z", [2, 2])],
              [numpy_helper.from_array(np.array([4], np.int64), "s")])
    buf = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    y, z, x = og.Session(from_onnx(m)).run(["y", "z", "x"], {"x": buf})
    buf[:] = 0  # the caller refills its input buffer for the next batch
    np.testing.assert_array_equal(y, [1, 2, 3, 4])
    np.testing.assert_array_equal(z, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(x, [[1, 2], [3, 4]])


def test_constant_fetch_cannot_change_the_graph():
    g = og.Graph()
    with g.as_default():
        w = og.constant(np.array([1.0, 2.0, 3.0], np.float32))
        x = og.placeholder(og.float32, [3])
        y = x * w
        k1 = og.constant([7.0, 8.0])
        k2 = og.constant([7.0, 8.0])
        z = og.reduce_sum(k2)
    sess = og.Session(g)
    got = sess.run(w)
    got[:] = 0
    sess.run(k1)[:] = 0
    ones = np.ones(3, np.float32)
    np.testing.assert_array_equal(sess.run(y, {x: ones}), [1, 2, 3])
    np.testing.assert_array_equal(og.Session(g).run(y, {x: ones}), [1, 2, 3])
    assert sess.run(z) == 15.0


def test_constant_copies_the_callers_array():
    arr = np.array([1.0, 2.0, 3.0], np.float32)
    g = og.Graph()
    with g.as_default():
        y = og.constant(arr) * 2.0
    arr[:] = -1
    np.testing.assert_array_equal(og.Session(g).run(y), [2, 4, 6])


def test_variable_fetch_and_update_results_are_copies():
    g = og.Graph()
    with g.as_default():
        v = og.Variable(np.zeros(3, np.float32), name="v")
        inc = v.assign_add(np.ones(3, np.float32))
        init = og.global_variables_initializer()
    sess = og.Session(g)
    sess.run(init)
    val = sess.run(v)
    val += 5
    np.testing.assert_array_equal(sess.run(v), [0, 0, 0])
    new = sess.run(inc)
    new[:] = 42
    np.testing.assert_array_equal(sess.run(v), [1, 1, 1])


def test_fetching_a_variable_by_name_gives_its_value():
    # TF1: running a variable's tensor name returns its current value (Saver's
    # global_step may be "a Tensor, a Tensor name or an integer").
    g = og.Graph()
    with g.as_default():
        v = og.Variable(np.array([1, 2, 3], np.float32), name="w")
        inc = v.assign_add(np.ones(3, np.float32))
        init = og.global_variables_initializer()
    sess = og.Session(g)
    sess.run(init)
    got = sess.run("w")
    assert type(got) is np.ndarray and got.flags.writeable
    np.testing.assert_array_equal(got, [1, 2, 3])
    got[:] = 99
    sess.run(inc)
    np.testing.assert_array_equal(sess.run(["w"])[0], [2, 3, 4])


def test_handles_of_another_graph_are_refused():
    ga, gb = og.Graph(), og.Graph()
    with ga.as_default():
        a = og.placeholder(og.float32, [], name="a")
        a10 = a * 10.0
    with gb.as_default():
        b = og.placeholder(og.float32, [], name="b")
        b100 = b * 100.0
        init_b = og.global_variables_initializer()
    sess = og.Session(ga)
    with pytest.raises(OneGraphError, match="another graph"):
        sess.run(b100, {a: 1.0})
    with pytest.raises(OneGraphError, match="another graph"):
        sess.run(a10, {b: 3.0})
    with pytest.raises(OneGraphError, match="another graph"):
        sess.run(init_b)
    assert sess.run(a10, {a: 1.0}) == 10.0


def test_python_operands_that_do_not_fit_the_tensor_dtype():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.int32, [2])
        with pytest.raises(OneGraphError, match="whole number"):
            x * 0.5
        with pytest.raises(OneGraphError, match="range"):
            x + 2 ** 40
        with pytest.raises(OneGraphError, match="range"):
            og.constant(-1, dtype=og.uint8)
        y = x * 2.0  # a whole float fits
    np.testing.assert_array_equal(og.Session(g).run(y, {x: [3, 4]}), [6, 8])


@pytest.mark.parametrize("dtype, fed", [
    (og.int32, np.array([2 ** 40 + 5], np.int64)),
    (og.uint8, np.array([-1], np.int64)),
    (og.uint8, np.array([300], np.int64)),
    (og.float16, np.array([1e6])),
], ids=["int64-to-int32", "negative-to-uint8", "300-to-uint8", "1e6-to-float16"])
def test_feeds_that_would_wrap_or_overflow_are_refused(dtype, fed):
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(dtype, [1])
        y = og.identity(x)
    with pytest.raises(ShapeError, match="'Placeholder'"):
        og.Session(g).run(y, {x: fed})


def test_feeds_that_fit_are_cast():
    g = og.Graph()
    with g.as_default():
        i = og.placeholder(og.int32, [2])
        h = og.placeholder(og.float16, [3])
        out = [og.identity(i), og.identity(h)]
    got = og.Session(g).run(out, {i: np.array([-5, 2 ** 31 - 1], np.int64),
                                  h: np.array([1.5, np.inf, np.nan])})
    assert got[0].dtype == np.int32 and got[0].tolist() == [-5, 2 ** 31 - 1]
    assert got[1].dtype == np.float16 and got[1][0] == 1.5 and np.isinf(got[1][1])


def test_string_feeds_are_shape_checked():
    g = og.Graph()
    with g.as_default():
        s = og.placeholder(og.string, [2])
        y = og.identity(s)
    sess = og.Session(g)
    assert list(sess.run(y, {s: ["a", "b"]})) == ["a", "b"]
    with pytest.raises(ShapeError, match="shape"):
        sess.run(y, {s: ["a", "b", "c"]})


def test_bad_feed_containers_and_keys():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        y = x * 2.0
    sess = og.Session(g)
    xv = np.ones(2, np.float32)
    with pytest.raises(ShapeError, match="'x'"):
        sess.run(y, {x: [[1.0], [2.0, 3.0]]})  # ragged
    with pytest.raises(TypeError, match="mapping"):
        sess.run(y, [(x, xv)])
    with pytest.raises(TypeError, match="not both"):
        sess.run(y, {}, feeds={x: xv})
    with pytest.raises(OneGraphError, match="more than once"):
        sess.run(y, {x: xv, "x": xv * 5})
    with pytest.raises(OneGraphError, match="bool"):
        sess.run(True, {x: xv})


def test_fetch_structures_keep_their_type():
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    g.add_node("Relu", [x], ["node"])
    g.add_node("Neg", [x], ["y"])
    sess = og.Session(Model(graphs=[g], opset_imports={"": 21}))
    xv = np.array([-1.0, 2.0], np.float32)
    # a tuple starting with "node" is just two fetches
    relu, neg = sess.run(("node", "y"), {"x": xv})
    np.testing.assert_array_equal(relu, [0, 2])
    np.testing.assert_array_equal(neg, [1, -2])
    pair = collections.namedtuple("Pair", "a b")
    got = sess.run(pair("node", "y"), {"x": xv})
    assert type(got) is pair
    np.testing.assert_array_equal(got.b, [1, -2])


def test_no_memory_for_a_fetched_copy_is_resource_exhausted(monkeypatch):
    """The copy of a read-only fetch (a folded constant) happens after the kernels; a
    MemoryError there is named like a kernel's (a ResourceExhaustedError, which is an
    ExecutionError), naming the tensor."""
    from onegraph.train import session as session_mod

    def no_memory(value, fed, owners=None):
        raise MemoryError

    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        y = og.add(x, 1.0, name="y")
    sess = og.Session(g)
    monkeypatch.setattr(session_mod, "_private", no_memory)
    with pytest.raises(og.ResourceExhaustedError,
                       match=r"fetched tensor .y.: no memory .* 8 bytes"):
        sess.run(y, {x: np.ones(2, np.float32)})


def _float_data_model():
    """W is an initializer in float_data (helper.make_tensor without raw=True), which
    imports as a writeable array; W2 a Reshape of it by a fed shape (not folded)."""
    w = helper.make_tensor("W", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    shape = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    return _onnx([helper.make_node("Reshape", ["W", "shape"], ["W2"]),
                  helper.make_node("Add", ["x", "W"], ["y"])],
                 [_vi("x", [3]), shape], [_vi("W2", None), _vi("y", [3])], [w])


@pytest.mark.parametrize("fetch", ["W", "W2"])
def test_writeable_constants_and_their_views_are_fetched_as_copies(fetch):
    sess = og.Session(from_onnx(_float_data_model()))
    x, shape = np.zeros(3, np.float32), np.array([3, 1], np.int64)
    got = sess.run(fetch, {"shape": shape})
    assert got.flags.writeable
    got[...] = -7.0
    np.testing.assert_array_equal(sess.run("y", {"x": x}), [1, 2, 3])
    np.testing.assert_array_equal(sess.run(fetch, {"shape": shape}).reshape(-1), [1, 2, 3])


def test_planning_leaves_the_callers_constant_arrays_writeable():
    """Folding an Identity of a constant marks its result read-only, not the caller's
    array the model holds."""
    w = np.array([1.0, 2.0], np.float32)
    g = Graph("g")
    x = g.add_input("x", "float32", [2])
    wi = g.add_constant("W", w)
    (i,) = g.add_node("Identity", [wi], ["i"])
    (y,) = g.add_node("Add", [x, i], ["y"])
    g.outputs = [y]
    sess = og.Session(Model(graphs=[g], opset_imports={"": 17}))
    np.testing.assert_array_equal(sess.run("y", {"x": np.zeros(2, np.float32)}), w)
    held = g.tensors[wi].data
    assert held.flags.writeable
    held[0] = 10.0  # the caller's own array: its writes are its business
    assert sess.run("i")[0] in (1.0, 10.0)


def test_sequence_results_are_the_callers_own():
    pos = numpy_helper.from_array(np.array(0, np.int64), "pos")
    w = numpy_helper.from_array(np.array([1., 2.], np.float32), "W")
    m = _onnx([helper.make_node("SequenceAt", ["seq", "pos"], ["first"]),
               helper.make_node("SequenceConstruct", ["W", "W"], ["wseq"])],
              [helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None)],
              [_vi("first", None),
               helper.make_tensor_sequence_value_info("wseq", TensorProto.FLOAT, None)],
              [pos, w])
    sess = og.Session(from_onnx(m))
    fed = np.array([1., 2., 3.], np.float32)
    first, wseq = sess.run(["first", "wseq"], {"seq": [fed]})
    first[0] = 99.0
    np.testing.assert_array_equal(fed, [1, 2, 3])
    assert wseq[0] is not wseq[1]
    wseq[0][0] = 5.0
    np.testing.assert_array_equal(sess.run("wseq")[0], [1, 2])


def test_two_fetched_tensors_never_share_memory():
    """A Relu and a Reshape of it are one buffer inside the run; fetched together they
    come back as two arrays (onnxruntime's too), and one tensor fetched twice is one."""
    shape = numpy_helper.from_array(np.array([3, 1], np.int64), "shape")
    m = _onnx([helper.make_node("Relu", ["x"], ["r"]),
               helper.make_node("Reshape", ["r", "shape"], ["r2"])],
              [_vi("x", [3])], [_vi("r", [3]), _vi("r2", [3, 1])], [shape])
    sess = og.Session(from_onnx(m))
    r, r2, again = sess.run(["r", "r2", "r"], {"x": np.array([1, 2, 3], np.float32)})
    assert again is r and not np.may_share_memory(r, r2)
    r2[:] = 0
    np.testing.assert_array_equal(r, [1, 2, 3])


def test_feeding_a_variable_by_name_overrides_its_reads_for_one_run():
    """TF1: feed_dict={"v:0": value} overrides the variable in that run, as feeding the
    Variable handle does; a loaded Model only has the name."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [None, 3], name="x")
        v = og.Variable(np.ones((3, 2), np.float32), name="v")
        y = og.matmul(x, v, name="y")
        fresh = v.read_value()
        z = og.reduce_sum(fresh, name="z")
    sess = og.Session(g)
    xv = np.ones((1, 3), np.float32)
    twos = np.full((3, 2), 2.0, np.float32)
    for key in ("v", "v:0"):
        got_y, got_z = sess.run([y, z], {x: xv, key: twos})
        np.testing.assert_array_equal(got_y, [[6.0, 6.0]])
        assert got_z == 12.0  # every read sees the fed value
        np.testing.assert_array_equal(sess.run(y, {x: xv}), [[3.0, 3.0]])
    with pytest.raises(OneGraphError, match="fed more than once"):
        sess.run(y, {x: xv, v: twos, "v": twos})
    with pytest.raises(ShapeError):
        sess.run(y, {x: xv, "v": np.ones((2, 2), np.float32)})
    m = g.to_model(signatures={"serving": og.signature(inputs={"x": x}, outputs={"y": y})})
    np.testing.assert_array_equal(og.Session(m).run("y", {"x": xv, "v": twos}), [[6.0, 6.0]])


def test_signature_inputs_are_named_by_their_keys_in_errors():
    g = Graph("g")
    x = g.add_input("input_1", "float32", [-1, 3])
    (y,) = g.add_node("Relu", [x], ["y"])
    g.outputs = [y]
    model = Model(graphs=[g], opset_imports={"": 17})
    model.add_signature("serving", inputs={"image": x}, outputs={"out": y})
    sess = og.Session(model)
    np.testing.assert_array_equal(
        sess.run_signature("serving", image=np.array([[-1, 0, 2]], np.float32))["out"],
        [[0, 0, 2]])
    with pytest.raises(ShapeError, match=r"signature 'serving' input 'image': feed for "
                                         r"'input_1': shape \[2, 4\]"):
        sess.run_signature("serving", image=np.ones((2, 4), np.float32))
    with pytest.raises(TypeError, match="signature name must be a str, got list"):
        sess.run_signature(["serving"], image=np.ones((1, 3), np.float32))


@pytest.mark.parametrize("op_type", ["MatMul", "Add", "Concat"])
def test_operands_whose_shapes_do_not_fit_are_a_shape_error(op_type):
    """Fed shapes that a node cannot combine raise ShapeError naming the node and the
    input shapes, as Reshape's and Gather's own checks do (not an ExecutionError
    carrying numpy's text alone)."""
    attrs = {"axis": 0} if op_type == "Concat" else {}
    m = _onnx([helper.make_node(op_type, ["a", "b"], ["y"], name="n", **attrs)],
              [_vi("a", ["M", "K"]), _vi("b", ["K2", "N"])], [_vi("y", None)])
    sess = og.Session(from_onnx(m))
    with pytest.raises(ShapeError, match=rf"node 'n' \({op_type}\): input shapes \[2, 3\], "
                                         r"\[2, 2\] do not fit"):
        sess.run("y", {"a": np.ones((2, 3), np.float32), "b": np.ones((2, 2), np.float32)})


def test_a_variable_fed_by_name_is_fetched_as_fed_and_refused_where_it_cannot_reach():
    """Fetching the fed variable gives the fed value (TF1). A variable passed on into
    a while_loop (Enter) is refused by name: the fed value would not reach the reads
    inside, and the loop would silently use the stored value."""
    g = og.Graph()
    with g.as_default():
        v = og.Variable(np.ones(2, np.float32), name="v")
        s = og.reduce_sum(v.read_value(), name="s")
    sess = og.Session(g)
    twos = np.full(2, 2.0, np.float32)
    got_v, got_s = sess.run(["v", s], {"v": twos})
    np.testing.assert_array_equal(got_v, twos)
    assert got_s == 4.0 and got_v is not twos
    np.testing.assert_array_equal(sess.run("v"), [1.0, 1.0])

    g = og.Graph()
    with g.as_default():
        v = og.Variable(np.ones((), np.float32), name="v")

        def body(i, a):
            return i + np.int64(1), a + v.read_value()

        _, total = og.while_loop(lambda i, a: i < np.int64(3), body,
                                 [og.constant(np.int64(0)), og.constant(np.float32(0))])
    sess = og.Session(g)
    assert sess.run(total) == 3.0
    with pytest.raises(OneGraphError, match=r"variable 'v' is fed by name, but node .* "
                                            r"\(Enter\) passes the variable itself on"):
        sess.run(total, {"v": np.float32(5)})


def test_a_constant_replaced_after_planning_folds_anew():
    g = Graph("g")
    x = g.add_input("x", "float32", [2])
    c = g.add_constant("C", np.array([1.0, 2.0], np.float32))
    (n,) = g.add_node("Neg", [c], ["n"])
    (y,) = g.add_node("Add", [x, n], ["y"])
    g.outputs = [y]
    sess = og.Session(Model(graphs=[g], opset_imports={"": 17}))
    np.testing.assert_array_equal(sess.run("y", {"x": np.zeros(2, np.float32)}), [-1, -2])
    g.tensors[c].data = np.array([10.0, 20.0], np.float32)
    got_c, got_n = sess.run(["C", "n"])  # a new plan
    np.testing.assert_array_equal(got_n, -got_c)


def test_shapes_that_do_not_fit_inside_a_while_loop_are_a_shape_error():
    g = og.Graph()
    with g.as_default():
        a = og.placeholder(og.float32, [None, None], name="a")
        b = og.placeholder(og.float32, [None, None], name="b")

        def body(i, acc):
            return i + np.int64(1), acc + og.reduce_sum(og.matmul(a, b))

        _, total = og.while_loop(lambda i, acc: i < np.int64(2), body,
                                 [og.constant(np.int64(0)), og.constant(np.float32(0))])
    sess = og.Session(g)
    with pytest.raises(ShapeError, match=r"in loop .*input shapes \[2, 3\], \[2, 2\] do not "
                                         r"fit"):
        sess.run(total, {a: np.ones((2, 3), np.float32), b: np.ones((2, 2), np.float32)})


@pytest.mark.parametrize("optimize", [True, False])
def test_a_fed_output_of_a_node_run_for_another_output_keeps_the_fed_value(optimize):
    """TF1 feeds any tensor: `a` of `a, b = split(x)` fed while `b` is computed from x
    (the Split still runs, for b) is the fed value, not the split's."""
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [4], name="x")
        a, b = og.split(x, 2)
        y = a + b
    sess = og.Session(g)
    sess.optimize = optimize
    got = sess.run([y, a, b], {x: np.arange(4, dtype=np.float32),
                               a: np.full(2, 100, np.float32)})
    assert [v.tolist() for v in got] == [[102, 103], [100, 100], [2, 3]]
