"""Operators: elementwise family (definitions, kernels, inference, gradients)."""

OPS = ()
