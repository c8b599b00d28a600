"""Operators: onnxruntime's com.microsoft MaxpoolWithMask (placeholder, being written)."""

OPS = []
