"""onnxruntime as the oracle of the random-draw sweeps (test_window_geometry_sweep.py,
test_shape_index_sweep.py): a draw onnxruntime refuses is skipped, and so is one where
onnxruntime leaves the spec and ONNX's reference evaluator agrees with the Session."""

from __future__ import annotations

import numpy as np


class OrtRefused(Exception):
    """onnxruntime refused the model or its run: the draw is skipped."""


class OrtDiverges(OrtRefused):
    """onnxruntime's result differs from the Session's, whose matches ONNX's reference
    evaluator (onnxruntime leaving the spec; each sweep names the deviations it knows):
    the draw is skipped."""


def ort_run(model, outs, feeds, optimize=True):
    """onnxruntime's (CPU) outputs `outs` of `model` on `feeds`, with its graph
    optimizations unless `optimize` is False; OrtRefused if it refuses the model or the
    run."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        sess = ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])
        return sess.run(outs, feeds)
    except Exception as e:  # noqa: BLE001 (any refusal of onnxruntime's)
        raise OrtRefused(str(e)[:300]) from e


def as_initializers(inputs):
    """A case's (value, how) inputs with every fed one ("x") made an initializer ("c"):
    an all-constant model, which the Session may fold."""
    return [(v, "c" if h == "x" else h) for v, h in inputs]


def check_draws(cases, check, show, errors=Exception):
    """Run check(case, i) on each case of the iterable `cases` (drawn lazily, so a
    sweep's generator keeps its order of random draws); returns (checked, refused,
    failures): refused counts the OrtRefused ones, failures are (show(case), message)
    for any other exception of `errors`."""
    checked, refused, failures = 0, 0, []
    for i, case in enumerate(cases):
        try:
            check(case, i)
            checked += 1
        except OrtRefused:
            refused += 1
        except errors as e:  # noqa: BLE001 (a crash is a finding too)
            failures.append((show(case), f"{type(e).__name__}: {str(e)[:1500]}"))
    return checked, refused, failures


def assert_clean_sweep(checked, refused, failures, per_refusal=1, what="refused"):
    """No failures, and at least `per_refusal` checked draws per draw onnxruntime
    refused (a sweep mostly refused checks little)."""
    assert not failures, "\n\n".join(f"{c}: {m}" for c, m in failures[:3])
    assert checked >= per_refusal * refused, \
        f"onnxruntime {what} {refused} of {checked + refused}"


def declare_inputs(case_inputs, symbolic=False):
    """(names, graph inputs, initializers, feeds) of a drawn case's inputs, a list of
    (value, how): how "c" makes input k the initializer `in{k}`, None leaves it out
    (name ""), anything else a graph input `in{k}` fed `value`, its dims all symbolic
    when `symbolic`."""
    from onnx import helper, numpy_helper

    names, inputs, inits, feeds = [], [], [], {}
    for i, (value, how) in enumerate(case_inputs):
        if how is None:
            names.append("")
            continue
        name = f"in{i}"
        names.append(name)
        value = np.asarray(value)
        if how == "c":
            inits.append(numpy_helper.from_array(value, name))
            continue
        shape = list(value.shape)
        if symbolic:   # every dim unknown until run time
            shape = [f"{name}_d{k}" for k in range(len(shape))]
        inputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(value.dtype), shape))
        feeds[name] = value
    return names, inputs, inits, feeds


def show_case(case):
    """A drawn `case` (a dict whose "inputs" are (value, how) pairs) as one readable
    line, arrays as dtype and nested lists."""
    ins = [None if v is None else (np.asarray(v).dtype.name, np.asarray(v).tolist(), h)
           for v, h in case["inputs"]]
    return repr(dict(case, inputs=ins))


def assert_outputs_close(got, ref, where, rtol, scaled=True, slack=0.0):
    """Assert the Session's outputs `got` match `ref`: count, shapes and dtypes equal,
    non-float values equal, floats within rtol[dtype] relative (NaN at the same places,
    infinities equal) and absolute rtol[dtype] times the largest finite |ref| (at
    least 1; just 1 unless `scaled`: a sum's rounding scales with its terms), plus
    `slack`."""
    assert len(got) == len(ref), f"{where}: {len(got)} outputs, not {len(ref)}"
    for k, (g, r) in enumerate(zip(got, ref)):
        g, r = np.asarray(g), np.asarray(r)
        assert g.shape == r.shape, f"{where} output {k}: shape {g.shape} != {r.shape}"
        assert g.dtype == r.dtype, f"{where} output {k}: dtype {g.dtype} != {r.dtype}"
        if r.dtype.kind != "f":
            np.testing.assert_array_equal(g, r, err_msg=f"{where} output {k}")
            continue
        tol = rtol[r.dtype]
        scale = 1.0
        if scaled:
            finite = np.isfinite(r)
            scale = max(1.0, float(np.max(np.abs(r[finite].astype(np.float64)), initial=0)))
        np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), rtol=tol,
                                   atol=tol * scale + slack, err_msg=f"{where} output {k}")


def draw_model(nodes, inputs, inits, outs, opset, ir_version):
    """The ModelProto of a drawn graph: `nodes` (NodeProtos) over the graph `inputs`
    and initializers `inits`, its outputs `outs` declared without types."""
    from onnx import helper

    graph = helper.make_graph(nodes, "g", inputs,
                              [helper.make_empty_tensor_value_info(o) for o in outs],
                              initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=ir_version)
