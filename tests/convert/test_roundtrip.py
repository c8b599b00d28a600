"""Round trip ONNX -> onegraph -> .og file -> onegraph -> ONNX -> onnxruntime.

For every node test case whose ops are all registered, the exported model must pass
the ONNX checker (full_check) and, run in onnxruntime, reproduce the reference outputs
of the original case. Cases that onnxruntime cannot run even in their original form
(it raises one of its own errors: it lacks the op, a kernel for the type, ...) or whose
reference outputs it does not reproduce are skipped, the error's first line in the
skip reason (`pytest -rs` lists them); known conversion failures are xfailed.

test_node_export_to_older_opset also exports the cases of issue 3's ops, and of the
ops newer than opset 13 that ONNX defines as functions, at opsets 13, 17 and 22. Where
the exporter refuses (ConversionError), the refusal must be the one pinned in
roundtrip_expected_refusals.json ({"<case>-opset<N>": refusal_prefix(message)}, sorted):
a refusal missing from the list fails, and so does a listed one that no longer happens.
After a deliberate exporter change, regenerate the list from the repository root and
review its diff:

    python -m tests.convert.roundtrip_refusals          # rewrite the list
    python -m tests.convert.roundtrip_refusals --check  # exit 1 if out of date
"""

import functools
import json
import os
import re

import numpy as np
import onnx
import pytest

from onegraph.convert import from_onnx, to_onnx
import onegraph as og

from .backend import all_node_cases, as_numpy, compare, lookup_reason, unsupported
from .test_onnx_backend import reason

ort = pytest.importorskip("onnxruntime")

CASES = [c for c in all_node_cases() if not unsupported(c.model)]

# Cases whose round trip fails for reasons outside the converter.
# Matched by name prefix.
ROUNDTRIP_KNOWN_FAILURES: dict[str, str] = {}
# Matched by exact name. (test_mvn was here until the exporter wrote MVN's default
# axes, which its function body, expanded by the checker, reads.)
ROUNDTRIP_KNOWN_EXACT: dict[str, str] = {}


def _ort_session(proto):
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    return ort.InferenceSession(proto.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])


def _ort_run(sess, proto, inputs):
    names = [i.name for i in proto.graph.input
             if i.name not in {t.name for t in proto.graph.initializer}]
    # Node-test inputs may be numpy scalars (np.float32(...)); onnxruntime's Python
    # binding takes only arrays ("Unable to handle object of type <class
    # 'numpy.float32'>").
    inputs = [_as_array(x) for x in inputs]
    if not any(_ml_dtype(x) for x in inputs) and not any(
            o.type.tensor_type.elem_type in _ML_ELEM_TYPES for o in proto.graph.output):
        return sess.run(None, dict(zip(names, inputs)))
    # onnxruntime's Python API cannot take or give ml_dtypes arrays (bfloat16, float8,
    # int4, ...) though its kernels handle them: pass those through OrtValues whose
    # bytes are ONNX's own encoding (numpy_helper packs and unpacks sub-byte types).
    feeds = {n: _to_ort_value(x) if _ml_dtype(x) else ort.OrtValue.ortvalue_from_numpy(x)
             for n, x in zip(names, inputs)}
    outs = sess.run_with_ort_values([o.name for o in proto.graph.output], feeds)
    return [_from_ort_value(v) for v in outs]


_ML_ELEM_TYPES = frozenset(
    getattr(onnx.TensorProto, n) for n in (
        "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
        "UINT4", "INT4", "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2")
    if hasattr(onnx.TensorProto, n))


def _as_array(x):
    """A numpy scalar as a 0-d array; sequences element-wise; the rest unchanged."""
    if isinstance(x, np.generic):
        return np.asarray(x)
    if isinstance(x, list):
        return [_as_array(v) for v in x]
    return x


def _ml_dtype(x) -> bool:
    """x is an ml_dtypes array (numpy's own dtypes are 'builtin')."""
    return isinstance(x, np.ndarray) and x.dtype.isbuiltin == 2


def _to_ort_value(array):
    import ctypes

    from onnx import numpy_helper

    proto = numpy_helper.from_array(np.ascontiguousarray(array))
    value = ort.OrtValue.ortvalue_from_shape_and_type(list(array.shape), proto.data_type)
    assert value.tensor_size_in_bytes() == len(proto.raw_data)
    ctypes.memmove(value.data_ptr(), proto.raw_data, len(proto.raw_data))
    return value


def _from_ort_value(value):
    import ctypes

    from onnx import numpy_helper

    if not value.is_tensor() or value.element_type() not in _ML_ELEM_TYPES:
        return value.numpy()
    proto = onnx.TensorProto()
    proto.dims.extend(value.shape())
    proto.data_type = value.element_type()
    proto.raw_data = ctypes.string_at(value.data_ptr(), value.tensor_size_in_bytes())
    return numpy_helper.to_array(proto)


# What onnxruntime raises when it lacks an op, a kernel for a type or a feature
# (NotImplemented, Fail, InvalidGraph, ...): its own exception classes, none of them a
# builtin. A mistake of this module (a builtin TypeError, RuntimeError, ...) is not
# caught, so it fails the test instead of turning into a skip.
_ORT_ERRORS = tuple(v for v in vars(ort.capi.onnxruntime_pybind11_state).values()
                    if isinstance(v, type) and issubclass(v, Exception))


def _first_line(e: BaseException) -> str:
    """An error for a skip reason: its class and first line (without onnxruntime's
    "[ONNXRuntimeError] : N : " prefix); of a comparison's AssertionError, whose first
    line says little, its first three non-empty lines."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    text = " / ".join(lines[:3]) if isinstance(e, AssertionError) else \
        (lines[0] if lines else "")
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : ", "", text)
    return f"{type(e).__name__}: {text[:300]}"


@functools.lru_cache(maxsize=None)
def _ort_cannot_run_original(name) -> str | None:
    """Why onnxruntime cannot reproduce the reference outputs of the original model
    (the first line of its error, or of the comparison's), or None when it can."""
    case = next(c for c in CASES if c.name == name)
    try:
        sess = _ort_session(case.model)
        inputs, outputs = case.data_sets[0]
        got = _ort_run(sess, case.model, [as_numpy(x) for x in inputs])
    except _ORT_ERRORS as e:
        return f"onnxruntime cannot run the original model: {_first_line(e)}"
    try:
        compare([as_numpy(y) for y in outputs], got, case.rtol, case.atol, name)
    except AssertionError as e:
        return ("onnxruntime's outputs for the original model differ from the "
                f"reference: {_first_line(e)}")
    return None


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_roundtrip(case, tmp_path, request):
    why = reason(case) or ROUNDTRIP_KNOWN_EXACT.get(case.name) or \
        lookup_reason(case.name, ROUNDTRIP_KNOWN_FAILURES)
    if why:  # run it anyway: a known failure that now passes must leave the list
        request.node.add_marker(pytest.mark.xfail(reason=why, strict=True))
    skip = _ort_cannot_run_original(case.name)
    if skip:
        pytest.skip(skip)
    og.save(from_onnx(case.model), tmp_path / "model.og")
    model = og.load(tmp_path / "model.og")
    proto = to_onnx(model)
    sess = _ort_session(proto)
    for inputs, outputs in case.data_sets:
        got = _ort_run(sess, proto, [as_numpy(x) for x in inputs])
        compare([as_numpy(y) for y in outputs], got, case.rtol, case.atol, case.name)


LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
LIGHT = sorted(f for f in os.listdir(LIGHT_DIR) if f.endswith(".onnx")) \
    if os.path.isdir(LIGHT_DIR) else []


@pytest.mark.slow
@pytest.mark.parametrize("name", LIGHT)
def test_light_model_roundtrip(name, tmp_path):
    """Light model zoo models: onegraph Session and re-exported ONNX match ORT."""
    from onegraph.train.session import Session

    path = os.path.join(LIGHT_DIR, name)
    original = onnx.load(path)
    model = from_onnx(path)
    sig = model.signatures["serving"]
    (key,) = sig.inputs
    t = model.graph.tensors[sig.inputs[key]]
    x = np.random.default_rng(0).standard_normal(
        [d if d > 0 else 1 for d in t.shape]).astype(np.float32)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
        None, {key: x})
    got = Session(model).run([model.graph.tensors[i].name for i in model.graph.outputs],
                             {key: x})
    np.testing.assert_allclose(got[0], want[0], rtol=1e-3, atol=1e-4)
    proto = to_onnx(model, tmp_path / "copy.onnx")
    again = _ort_run(_ort_session(proto), proto, [x])
    np.testing.assert_allclose(again[0], want[0], rtol=1e-3, atol=1e-4)
    del original


# The ops issue 3 lists: their node tests also go to older opsets (see
# test_export_older_opset.py for how), checked in onnxruntime against the reference.
ISSUE_OPS = frozenset("""
Add Sub Mul Div Pow Mod Neg Abs Sqrt Reciprocal Exp Log Sin Cos Tan Erf Floor Ceil Round
Sign Min Max Sum Mean Where Equal Less LessOrEqual Greater GreaterOrEqual Not And Or Xor
IsNaN IsInf Cast CastLike Clip Relu LeakyRelu PRelu Elu Selu Celu Sigmoid HardSigmoid
HardSwish Tanh Softplus Softsign Gelu Mish Softmax LogSoftmax MatMul Gemm Einsum Conv
ConvTranspose MaxPool AveragePool GlobalAveragePool GlobalMaxPool LpPool LRN
BatchNormalization InstanceNormalization LayerNormalization GroupNormalization Reshape
Flatten Transpose Squeeze Unsqueeze Concat Split Slice Gather GatherElements GatherND
ScatterElements ScatterND Expand Tile Pad Shape Size ConstantOfShape Constant Range
Identity Dropout DepthToSpace SpaceToDepth Resize OneHot NonZero Trilu ReduceSum
ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSumExp
ReduceSumSquare ArgMax ArgMin TopK CumSum RNN GRU LSTM If Loop Scan""".split())

# Ops newer than opset 13 that ONNX defines as functions: below the opset they came in
# at, the exporter writes their function bodies (onnx's inliner), so their node tests
# go to older opsets too.
NEWER_FUNCTION_OPS = frozenset("""
AffineGrid Attention BlackmanWindow CausalConvWithState CenterCropPad HammingWindow
HannWindow LinearAttention RMSNormalization RotaryEmbedding SwiGLU Swish""".split())

OLDER_TARGETS = (13, 17, 22)


def _older_cases():
    out = []
    for case in CASES:
        source = next((o.version for o in case.model.opset_import
                       if o.domain in ("", "ai.onnx")), None)
        ops = {n.op_type for n in case.model.graph.node}
        if source is None or not ops <= ISSUE_OPS | NEWER_FUNCTION_OPS or reason(case):
            continue
        out.extend((case, t) for t in OLDER_TARGETS if t < source)
    return out


OLDER_CASES = _older_cases()


def older_id(case, target) -> str:
    return f"{case.name}-opset{target}"


# The refusals the exporter is expected to make, pinned: {test id: refusal_prefix}.
# Regenerate deliberately after an exporter change (see the module docstring).
EXPECTED_REFUSALS_PATH = os.path.join(os.path.dirname(__file__),
                                      "roundtrip_expected_refusals.json")
REGENERATE = "python -m tests.convert.roundtrip_refusals"
with open(EXPECTED_REFUSALS_PATH, encoding="utf-8") as _f:
    EXPECTED_REFUSALS: dict[str, str] = json.load(_f)


def refusal_prefix(message: str) -> str:
    """The pinned form of a refusal: its message up to the first colon, without the
    generated node names ("cannot write Shape at opset 13", "cannot convert from opset
    18 to 13 (onnx's version converter)", "exported model fails the ONNX checker")."""
    text = re.sub(r" \(nodes? '[^)]*\)| node '[^']*'", "", message.splitlines()[0])
    return text.split(":", 1)[0].strip()


def older_refusal(case, target) -> tuple[object, str | None, str | None]:
    """(the exported model, None, None) or (None, refusal_prefix, full message)."""
    try:
        return to_onnx(from_onnx(case.model), opset=target), None, None
    except og.ConversionError as e:
        return None, refusal_prefix(str(e)), str(e)


@pytest.mark.parametrize("case,target", OLDER_CASES,
                         ids=[older_id(c, t) for c, t in OLDER_CASES])
def test_node_export_to_older_opset(case, target):
    """Exported at an older opset, a node test either reproduces its reference outputs
    in onnxruntime or is refused with a ConversionError (the target lacks a type, an
    attribute value or the op; onnx's converter has no adapter for the node): never
    a model that computes something else. Which cases are refused, and how, is pinned
    in roundtrip_expected_refusals.json."""
    key = older_id(case, target)
    expected = EXPECTED_REFUSALS.get(key)
    proto, refused, message = older_refusal(case, target)
    if refused is not None:
        assert expected is not None, (
            f"{key}: new refusal, not in roundtrip_expected_refusals.json: {message}\n"
            f"If the exporter is meant to refuse this, regenerate the list ({REGENERATE}) "
            "and review its diff.")
        assert refused == expected, (
            f"{key}: the refusal changed: listed {expected!r}, now {refused!r} "
            f"(full message: {message})\nIf intended, regenerate the list ({REGENERATE}).")
        return
    assert expected is None, (
        f"{key} now exports: the listed refusal {expected!r} no longer happens. Update "
        f"roundtrip_expected_refusals.json ({REGENERATE}) so the export is checked "
        "against the reference outputs.")
    assert [o.version for o in proto.opset_import if o.domain == ""] == [target]
    skip = _ort_cannot_run_original(case.name)
    if skip and "cannot run the original model" in skip:
        # onnxruntime may lack the op (Swish-24) but run its older form: check that
        try:
            sess = _ort_session(proto)
        except _ORT_ERRORS:
            pytest.skip(skip)
    elif skip:
        pytest.skip(skip)
    else:
        sess = _ort_session(proto)
    for inputs, outputs in case.data_sets:
        got = _ort_run(sess, proto, [as_numpy(x) for x in inputs])
        compare([as_numpy(y) for y in outputs], got, case.rtol, case.atol, case.name)


def test_expected_refusals_list_is_current():
    """Every entry of roundtrip_expected_refusals.json names a collected case (a case
    renamed or dropped, or an op leaving ISSUE_OPS, must leave the list); sorted."""
    ids = {older_id(c, t) for c, t in OLDER_CASES}
    stale = sorted(set(EXPECTED_REFUSALS) - ids)
    assert not stale, (f"entries for no collected case: {stale[:10]} ({len(stale)}); "
                       f"regenerate the list ({REGENERATE})")
    assert list(EXPECTED_REFUSALS) == sorted(EXPECTED_REFUSALS), \
        f"roundtrip_expected_refusals.json is not sorted; regenerate it ({REGENERATE})"
