"""Operators: deformable convolution (ONNX DeformConv)."""

from __future__ import annotations

OPS: tuple = ()

KNOWN_FAILURES: dict[str, str] = {}
