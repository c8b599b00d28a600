"""Per-node timings (`og.RunMetadata`, `Session.run(..., run_metadata=)`), the Chrome
trace, `onegraph run --runs/--profile/--trace`, and kernel errors in dead-value plans
naming their node."""

from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

import onegraph as og
from onegraph.cli import main
from onegraph.format import Graph, Model

SLEEP_S = 0.03


def _model():
    g = Graph("main")
    x = g.add_input("x", "float32", [-1, 8])
    w = g.add_constant("w", np.eye(8, dtype=np.float32))
    (h,) = g.add_node("MatMul", [x, w], ["h"], name="mm")
    (y,) = g.add_node("Sigmoid", [h], ["y"], name="sig")
    (z,) = g.add_node("Concat", [y, h], ["z"], {"axis": 1}, name="cat")
    g.outputs = [z]
    model = Model(graphs=[g], opset_imports={"": 21})
    model.add_signature("serving", inputs={"x": x}, outputs={"z": z})
    return model


def _slow_step(sess, node_name):
    """Make the plan step of `node_name` sleep SLEEP_S before its kernel: a known
    duration the recorded time must cover."""
    (plan,) = sess._plans.values()
    (step,) = [s for s in plan.steps if s.node.name == node_name]
    real = step.kernel

    def slow(args, attrs, ctx):
        time.sleep(SLEEP_S)
        return real(args, attrs, ctx)

    step.kernel = slow


def test_records_every_step_of_every_run_with_outputs_and_times():
    sess = og.Session(_model())
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    sess.run(["z"], {"x": x})  # compile the plan
    _slow_step(sess, "sig")
    meta = og.RunMetadata()
    for _ in range(3):
        t0 = time.perf_counter()
        (z,) = sess.run(["z"], {"x": x}, run_metadata=meta)
        wall_us = (time.perf_counter() - t0) * 1e6
    assert meta.runs == 3
    (plan,) = sess._plans.values()
    names = [s.node.name for s in plan.steps]
    assert [s.node for s in meta.step_stats] == names * 3
    assert [s.run for s in meta.step_stats] == sorted([0, 1, 2] * len(names))
    by_node = {s.node: s for s in meta.step_stats if s.run == 2}
    assert by_node["sig"].duration_us >= SLEEP_S * 1e6
    assert by_node["cat"].outputs == (("float32", z.shape),)
    for run in range(3):
        stats = [s for s in meta.step_stats if s.run == run]
        starts = [s.start_us for s in stats]
        assert starts == sorted(starts) and starts[0] >= 0
        ends = [s.start_us + s.duration_us for s in stats]
        assert all(e <= s2 + 1e-6 for e, s2 in zip(ends, starts[1:]))  # no overlap
        assert ends[-1] <= meta.run_us[run] + 1e-6
    assert meta.run_us[-1] <= wall_us
    np.testing.assert_allclose(z[:, :8], 1 / (1 + np.exp(-x)), rtol=1e-6)


def test_medians_per_op_type_and_summary():
    sess = og.Session(_model())
    x = np.ones((2, 8), np.float32)
    sess.run(["z"], {"x": x})
    _slow_step(sess, "sig")
    meta = og.RunMetadata()
    assert meta.summary() == "no runs recorded"
    for _ in range(4):
        sess.run(["z"], {"x": x}, run_metadata=meta)
    medians = {node: (op, med, runs) for node, op, med, runs in meta.node_medians()}
    assert all(runs == 4 for _, _, runs in medians.values())
    sig = [s.duration_us for s in meta.step_stats if s.node == "sig"]
    assert medians["sig"][1] == pytest.approx(float(np.median(sig)))
    ops = meta.by_op_type()
    assert next(iter(ops)) == medians["sig"][0]  # the slow one is listed first
    assert sum(ops.values()) == pytest.approx(sum(m for _, m, _ in medians.values()))
    text = meta.summary(top=1)
    lines = text.splitlines()
    assert lines[0].startswith("4 run(s)")
    assert len(lines) == 2 + len(ops) + 1 + 1
    assert "sig" in lines[-1] and "Sigmoid" in lines[-1] and "float32[2, 8]" in lines[-1]


def test_write_trace_is_chrome_json_written_atomically(tmp_path):
    sess = og.Session(_model())
    meta = og.RunMetadata()
    for _ in range(2):
        sess.run(["z"], {"x": np.ones((1, 8), np.float32)}, run_metadata=meta)
    path = tmp_path / "trace.json"
    assert meta.write_trace(str(path)) == str(path)
    events = json.loads(path.read_text())["traceEvents"]
    assert len(events) == len(meta.step_stats)
    assert {e["ph"] for e in events} == {"X"} and {e["tid"] for e in events} == {0, 1}
    cat = [e for e in events if e["name"] == "cat"][0]
    assert cat["args"]["outputs"] == [["float32", [1, 16]]]
    assert os.listdir(tmp_path) == ["trace.json"]
    with pytest.raises(FileNotFoundError):
        meta.write_trace(str(tmp_path / "missing" / "t.json"))
    assert os.listdir(tmp_path) == ["trace.json"]


def test_run_metadata_must_be_a_run_metadata():
    sess = og.Session(_model())
    with pytest.raises(TypeError, match="RunMetadata"):
        sess.run(["z"], {"x": np.ones((1, 8), np.float32)}, run_metadata={})


def _cond_graph():
    g = og.Graph()
    with g.as_default():
        p = og.placeholder(og.bool_, [], name="p")
        x = og.placeholder(og.float32, [None], name="x")
        y = og.cond(p, lambda: og.reshape(x, [3]) * 2.0, lambda: x + 1.0)
    return g, p, x, y


def test_dead_value_plan_is_profiled_and_skipped_branch_not_timed():
    g, p, x, y = _cond_graph()
    sess = og.Session(g)
    meta = og.RunMetadata()
    np.testing.assert_array_equal(sess.run(y, {p: False, x: [1, 2]}, run_metadata=meta),
                                  [2, 3])
    timed = {s.op_type for s in meta.step_stats}
    assert {"Switch", "Merge", "Add"} <= timed and "Reshape" not in timed


def test_kernel_error_in_dead_value_plan_names_the_node():
    g, p, x, y = _cond_graph()
    sess = og.Session(g)
    for meta in (None, og.RunMetadata()):
        with pytest.raises(og.OneGraphError,
                           match=r"node '[^']*Reshape' \(Reshape\): Reshape: cannot reshape"):
            sess.run(y, {p: True, x: [1, 2]}, run_metadata=meta)


def test_run_signature_accepts_an_input_called_name():
    g = Graph("main")
    x = g.add_input("x", "float32", [2])
    (y,) = g.add_node("Neg", [x], ["y"])
    g.outputs = [y]
    model = Model(graphs=[g], opset_imports={"": 21})
    model.add_signature("serving", inputs={"name": x}, outputs={"out": y})
    out = og.Session(model).run_signature("serving", name=np.float32([1, -2]))
    np.testing.assert_array_equal(out["out"], [-1, 2])


def test_cli_run_profile_trace_and_runs(tmp_path, capsys):
    og.save(_model(), str(tmp_path / "m.og"))
    np.save(tmp_path / "x.npy", np.ones((2, 8), np.float32))
    trace = tmp_path / "t.json"
    rc = main(["run", str(tmp_path / "m.og"), "--input", f"x={tmp_path / 'x.npy'}",
               "--runs", "3", "--profile", "--trace", str(trace)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "z: float32[2, 16]" in out and "3 run(s)" in out and "Sigmoid" in out
    events = json.loads(trace.read_text())["traceEvents"]
    assert {e["tid"] for e in events} == {0, 1, 2}


@pytest.mark.parametrize("extra,message", [
    (["--runs", "0"], "--runs 0: must be at least 1"),
    (["--trace", "/nonexistent-folder/t.json"], "the folder does not exist"),
])
def test_cli_run_rejects_bad_profile_options(tmp_path, capsys, extra, message):
    og.save(_model(), str(tmp_path / "m.og"))
    np.save(tmp_path / "x.npy", np.ones((2, 8), np.float32))
    rc = main(["run", str(tmp_path / "m.og"), "--input", f"x={tmp_path / 'x.npy'}"] + extra)
    assert rc == 2
    assert message in capsys.readouterr().err


def test_profile_inference_benchmark_compares_op_types_with_onnxruntime(capsys):
    """benchmarks/profile_inference.py on a small Conv/Relu/MaxPool model: both
    profiles list the same op types (onnxruntime's fused Conv counted as Conv)."""
    import importlib.util

    pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = importlib.util.spec_from_file_location(
        "profile_inference", os.path.join(root, "benchmarks", "profile_inference.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rng = np.random.default_rng(0)
    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 3, 3, 3],
                           rng.standard_normal(216).astype(np.float32))
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                             [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                             [1, 8, 8, 8])],
                              [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    feeds = {"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)}
    ours = bench.onegraph_profile(model, feeds, runs=3, warmup=1)
    theirs = bench.ort_profile(model, feeds, runs=3, warmup=1)
    assert {"Conv", "MaxPool"} <= set(ours[0]) and {"Conv", "MaxPool"} <= set(theirs[0])
    assert all(len(nodes) >= 2 for nodes in (ours[1], theirs[1]))
    assert ours[2] > 0 and theirs[2] > 0
    bench.report("tiny", ours, theirs, top=2)
    out = capsys.readouterr().out
    assert out.count("Conv") >= 3 and "slowest onnxruntime nodes" in out


def test_threads_sharing_one_run_metadata_keep_runs_apart():
    """Runs from several threads into one RunMetadata: every run is whole and
    numbered once (each run's steps share its run number, in plan order)."""
    import threading

    sess = og.Session(_model())
    x = np.ones((4, 8), np.float32)
    sess.run(["z"], {"x": x})
    meta = og.RunMetadata()

    def work():
        for _ in range(25):
            sess.run(["z"], {"x": x}, run_metadata=meta)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert meta.runs == 100
    (plan,) = sess._plans.values()
    names = [s.node.name for s in plan.steps]
    for run in range(100):
        assert [s.node for s in meta.step_stats if s.run == run] == names
