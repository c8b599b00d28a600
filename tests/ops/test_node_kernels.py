"""Every ONNX node test whose model is a single node of a registered op, run on our kernel.

Cases we knowingly do not pass are listed in `KNOWN_FAILURES` with a reason (they also
appear in docs/onnx_coverage.md); everything else must match the ONNX reference outputs.
"""

import pytest

from onegraph.ops import REGISTRY

from .node_cases import assert_outputs_match, run_node_kernel, single_node_cases

# case name prefix -> reason. Keep sorted; every entry says why.
KNOWN_FAILURES: dict[str, str] = {}

_OPS = {op.name for op in REGISTRY if op.domain == ""}
_CASES = list(single_node_cases(_OPS))


def _reason(name):
    for prefix, why in KNOWN_FAILURES.items():
        if name.startswith(prefix):
            return why
    return None


@pytest.mark.parametrize("case", _CASES, ids=[c[0] for c in _CASES])
def test_node_kernel(case):
    name, node, inputs, expected, rtol, atol = case
    why = _reason(name)
    if why:
        pytest.xfail(why)
    actual = run_node_kernel(node, inputs)
    assert_outputs_match(expected, actual, rtol, atol, name)
