"""Every ONNX node test whose model is a single node of a registered op, run on our kernel.

Cases we knowingly do not pass are listed with a reason in the `KNOWN_FAILURES` dict of
the op family module (they also appear in docs/onnx_coverage.md); everything else must
match the ONNX reference outputs, and shape/dtype inference must agree with the kernel.
"""

import numpy as np
import pytest

from onegraph import ops
from onegraph.ops import REGISTRY, TensorInfo, get_op
from onegraph.ops.random import CHANCE_MATCHES

from .node_cases import (assert_outputs_match, declared_outputs, onnx_attr_value,
                         present_outputs, run_node_kernel, single_node_cases)

KNOWN_FAILURES: dict[str, str] = {}
for _family in ops._FAMILIES:
    KNOWN_FAILURES.update(getattr(_family, "KNOWN_FAILURES", {}))

_OPS = {op.name for op in REGISTRY if op.domain == ""}
_CASES = list(single_node_cases(_OPS))


def _reason(name):
    for prefix, why in KNOWN_FAILURES.items():
        if name.startswith(prefix):
            return why
    return None


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_node_kernel(case, request):
    name, node, inputs, expected, rtol, atol = case
    why = _reason(name)
    if why:  # still run it: a known failure that now passes must be taken off the list
        request.node.add_marker(pytest.mark.xfail(reason=why,
                                                  strict=why not in CHANCE_MATCHES))
    actual = run_node_kernel(node, inputs)
    assert isinstance(actual, tuple), f"{name}: kernel must return a tuple"
    actual = [actual[k] for k in present_outputs(node) if k < len(actual)]
    assert_outputs_match(expected, actual, rtol, atol, name)


def _compatible(inferred, actual):
    if inferred is None:
        return True
    return len(inferred) == len(actual) and all(
        d is None or d == a for d, a in zip(inferred, actual))


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_node_inference(case, request):
    """Inferred dtype and shape (given input dtypes/shapes only) agree with the outputs."""
    name, node, inputs, expected, rtol, atol = case
    if _reason(name):  # a known kernel failure; inference may be right (strict=False)
        request.node.add_marker(pytest.mark.xfail(reason=_reason(name), strict=False))
    op = get_op(node.op_type, node.domain)
    if op.infer is None:
        pytest.fail(f"{node.op_type} has no shape/dtype inference")
    attrs = op.resolve_attrs({a.name: onnx_attr_value(a) for a in node.attribute},
                             num_outputs=declared_outputs(node))
    it = iter(inputs)
    infos = []
    for input_name in node.input:
        if input_name == "":
            infos.append(None)
        else:
            x = np.asarray(next(it))
            infos.append(TensorInfo(x.dtype, tuple(x.shape)))
    result = op.infer(attrs, infos)
    result = [result[k] for k in present_outputs(node) if k < len(result)]
    for k, (info, want) in enumerate(zip(result, expected)):
        want = np.asarray(want)
        if info.dtype is not None and want.dtype != object:
            assert np.dtype(info.dtype) == want.dtype, f"{name} output {k} dtype"
        assert _compatible(info.shape, want.shape), \
            f"{name} output {k}: inferred {info.shape}, actual {want.shape}"
