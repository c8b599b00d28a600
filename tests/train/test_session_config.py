"""TF1's session configuration: og.ConfigProto, GPUOptions, GraphOptions, RunOptions,
and og.Session's TF1 argument order (target, graph, config) and run(..., options).

Expected values are what tf.compat.v1 2.21 printed for the same calls (noted per test).
"""

import numpy as np
import pytest

import onegraph as og


def _graph():
    g = og.Graph()
    with g.as_default():
        x = og.placeholder(og.float32, [2], name="x")
        y = og.multiply(x, 3.0, name="y")
    return g, x, y


def test_config_fields_defaults_and_nested_messages():
    # tf.compat.v1 2.21: allow_growth True, device_count {'GPU': 0}, soft placement
    # False, intra-op threads 0, operation timeout 0
    c = og.ConfigProto(gpu_options=og.GPUOptions(allow_growth=True), device_count={"GPU": 0})
    assert c.gpu_options.allow_growth is True
    assert c.device_count == {"GPU": 0}
    assert c.allow_soft_placement is False
    assert c.intra_op_parallelism_threads == 0 and c.operation_timeout_in_ms == 0
    # tf: GPUOptions() fraction 0.0, visible_device_list ''
    assert og.GPUOptions().per_process_gpu_memory_fraction == 0.0
    assert og.GPUOptions().visible_device_list == ""
    c.gpu_options.per_process_gpu_memory_fraction = 0.5
    c.graph_options.optimizer_options.opt_level = og.OptimizerOptions.L0
    assert c.graph_options.optimizer_options.opt_level == -1
    assert og.ConfigProto().gpu_options.per_process_gpu_memory_fraction == 0.0  # not shared
    cfg = og.ConfigProto(graph_options=og.GraphOptions(infer_shapes=True),
                         inter_op_parallelism_threads=2, log_device_placement=False)
    assert cfg.graph_options.infer_shapes and cfg.inter_op_parallelism_threads == 2


def test_config_refuses_unknown_field_and_wrong_type():
    # tf: ConfigProto(foo=1) -> ValueError 'has no "foo" field'; allow_soft_placement=3.5
    # -> TypeError; onegraph refuses both with TypeError naming the message and field
    with pytest.raises(TypeError, match=r"ConfigProto: no field named 'foo'"):
        og.ConfigProto(foo=1)
    with pytest.raises(TypeError, match="intra_op_parallelism_threads"):
        og.ConfigProto(intra_op_parallelism_threads=3.5)
    with pytest.raises(TypeError, match="allow_growth"):
        og.GPUOptions(allow_growth="yes")
    with pytest.raises(TypeError, match="RunOptions: no field named 'trace'"):
        og.RunOptions(trace=1)
    with pytest.raises(TypeError, match="gpu_options"):
        og.ConfigProto(gpu_options={"allow_growth": True})
    c = og.ConfigProto()
    with pytest.raises(TypeError, match="no field named 'allow_soft'"):
        c.allow_soft = True


def test_run_options_trace_levels():
    # tf.compat.v1 2.21: FULL_TRACE 3, NO_TRACE 0, SOFTWARE_TRACE 1, HARDWARE_TRACE 2
    assert (og.RunOptions.FULL_TRACE, og.RunOptions.NO_TRACE, og.RunOptions.SOFTWARE_TRACE,
            og.RunOptions.HARDWARE_TRACE) == (3, 0, 1, 2)
    o = og.RunOptions(trace_level=og.RunOptions.FULL_TRACE, timeout_in_ms=1000)
    assert o.trace_level == 3 and o.timeout_in_ms == 1000


def test_session_takes_tf1_argument_order():
    g, x, y = _graph()
    cfg = og.ConfigProto(allow_soft_placement=True)
    feed = {x: np.array([1.0, 2.0], np.float32)}
    for sess in (og.Session(graph=g, config=cfg), og.Session("", g), og.Session("local", g),
                 og.Session(g), og.Session(g, config=cfg)):
        with sess:
            np.testing.assert_allclose(sess.run(y, feed), [3.0, 6.0])
    with g.as_default():
        with og.Session(config=cfg) as sess:
            assert sess.graph is og.Session(g).graph
            assert sess.config is cfg
            np.testing.assert_allclose(sess.run(y, feed), [3.0, 6.0])


def test_session_refuses_distributed_target_and_bad_config():
    g, _, _ = _graph()
    with pytest.raises(ValueError, match="target 'grpc://host:2222' is not supported"):
        og.Session("grpc://host:2222", g)
    with pytest.raises(ValueError, match="distributed targets"):
        og.InteractiveSession("grpc://host:2222", g)
    with pytest.raises(TypeError, match="config must be an og.ConfigProto"):
        og.Session(graph=g, config={"allow_soft_placement": True})
    with pytest.raises(TypeError, match="graph= too"):
        og.Session(g, g)


def test_run_takes_options_and_keeps_feeds_positionally():
    g, x, y = _graph()
    xv = np.array([1.0, -1.0], np.float32)
    with og.Session(g) as sess:
        meta = og.RunMetadata()
        opts = og.RunOptions(trace_level=og.RunOptions.FULL_TRACE)
        np.testing.assert_allclose(sess.run(y, {x: xv}, opts, meta), [3.0, -3.0])
        np.testing.assert_allclose(
            sess.run(y, feed_dict={x: xv}, options=opts, run_metadata=meta), [3.0, -3.0])
        assert meta.runs == 2 and any(s.op_type == "Mul" for s in meta.step_stats)
        # onegraph's former third argument, feeds, still works positionally and by name
        np.testing.assert_allclose(sess.run(y, None, {x: xv}), [3.0, -3.0])
        np.testing.assert_allclose(sess.run(y, feeds={x: xv}), [3.0, -3.0])
        with pytest.raises(TypeError, match="options must be an og.RunOptions"):
            sess.run(y, {x: xv}, 5)
        with pytest.raises(TypeError, match="feeds given both"):
            sess.run(y, None, {x: xv}, feeds={x: xv})


def test_interactive_session_takes_config():
    g, x, y = _graph()
    sess = og.InteractiveSession(graph=g, config=og.ConfigProto())
    try:
        assert og.get_default_session() is sess
        np.testing.assert_allclose(y.eval({x: np.ones(2, np.float32)}), [3.0, 3.0])
    finally:
        sess.close()


def test_a_str_target_that_is_no_url_is_taken_as_a_path_and_refused():
    # onegraph's former refusal of a model path (og.Session("m.onnx")) is kept
    with pytest.raises(TypeError, match="og.load"):
        og.Session("m.onnx")
