"""Operators: the ONNX-ML domain (`ai.onnx.ml`).

Classical machine-learning ops that converters such as skl2onnx emit.
"""

from __future__ import annotations

OPS: tuple = ()

KNOWN_FAILURES: dict[str, str] = {}
