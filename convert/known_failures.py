"""Node test cases that fail for reasons of the converter or the Session, not a kernel.

Used by tests/convert (xfail with the reason) and by `onegraph.convert.coverage`.
Keys are case names or name prefixes.
"""

CONVERSION_KNOWN_FAILURES: dict[str, str] = {
    "test_scan_sum": "opset-8 Scan (batch axis, sequence_lens) is not upgraded to opset 9 "
                     "semantics by onnx's version converter",
}

