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

from onegraph.ops.control_flow import CONVERTER_TESTED

from .backend import (unsupported_element_types, OnegraphBackend, all_node_cases, as_numpy, compare,
                      family_known_failures, lookup_reason, unsupported)

# Cases that fail for reasons of the converter or the Session, not of a kernel.
_SEQUENCE_FEED = ("Session.run converts fed sequence values (lists) to arrays "
                  "(train/session.py _check_feed)")
_OUTER_SCOPE = ("Session prunes/frees outer-scope values that only a subgraph uses "
                "(train/session.py _compile tracks explicit node inputs only)")
CONVERSION_KNOWN_FAILURES: dict[str, str] = {
    "test_identity_sequence": _SEQUENCE_FEED,
    "test_identity_opt": _SEQUENCE_FEED,
    "test_sequence_insert_at_": _SEQUENCE_FEED,
    "test_sequence_map_": _SEQUENCE_FEED,
    "test_affine_grid_": _OUTER_SCOPE,
    "test_linear_attention_": _OUTER_SCOPE,
    "test_range_float16_type_positive_delta_expanded": _OUTER_SCOPE,
    "test_range_bfloat16_type_positive_delta_expanded": _OUTER_SCOPE,
    "test_scan_sum": "opset-8 Scan (batch axis, sequence_lens) is not upgraded to opset 9 "
                     "semantics by onnx's version converter",
}

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
def test_node(case):
    why = reason(case)
    if why:
        pytest.xfail(why)
    rep = OnegraphBackend.prepare(case.model)
    for inputs, outputs in case.data_sets:
        actual = rep.run([as_numpy(x) for x in inputs])
        compare([as_numpy(y) for y in outputs], actual, case.rtol, case.atol, case.name)
