"""Operators: onnxruntime's com.microsoft GatherPacked (placeholder, being written)."""

OPS = []
