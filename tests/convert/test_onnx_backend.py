"""The ONNX backend node tests, run through ONNX import and the Session.

The cases come from `onnx.backend.test.case.node.collect_testcases`, generated in
memory: `onnx.backend.test.BackendTest` reads the node tests from the data directory,
which the onnx wheel does not ship, so this module parametrizes pytest over the cases
itself and drives `OnegraphBackend` (an `onnx.backend.base.Backend`). Each case is:
import the model, run it on every data set, compare with the reference outputs using
the case's rtol/atol.

Only cases whose ops (including subgraph ops) are all registered are collected; the
full picture, with skipped ops, is in docs/onnx_coverage.md (`python -m
onegraph.convert.coverage`). Known failures are xfailed with their reason: those of the
op families (`KNOWN_FAILURES` in each ops module) and the conversion-level ones below.
"""

import pytest

from onegraph.convert.known_failures import CONVERSION_KNOWN_FAILURES
from onegraph.ops.control_flow import CONVERTER_TESTED
from onegraph.ops.random import CHANCE_MATCHES

from .backend import (unsupported_element_types, OnegraphBackend, all_node_cases, as_numpy, compare,
                      family_known_failures, lookup_reason, unsupported)

KNOWN = {k: v for k, v in family_known_failures().items() if v != CONVERTER_TESTED}
CASES = [c for c in all_node_cases() if not unsupported(c.model)]


def reason(case):
    """Why a case is expected to fail, or None."""
    why = lookup_reason(case.name, KNOWN, CONVERSION_KNOWN_FAILURES)
    if why is None:
        bad = unsupported_element_types(case.model)
        if bad:
            why = f"element types without an onegraph dtype: {', '.join(bad)}"
    return why


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node(case, request):
    why = reason(case)
    if why:  # still run it: a known failure that now passes must leave the list
        request.node.add_marker(pytest.mark.xfail(reason=why,
                                                  strict=why not in CHANCE_MATCHES))
    rep = OnegraphBackend.prepare(case.model)
    for inputs, outputs in case.data_sets:
        actual = rep.run([as_numpy(x) for x in inputs])
        compare([as_numpy(y) for y in outputs], actual, case.rtol, case.atol, case.name)
