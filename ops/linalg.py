"""Operators: linalg family (definitions, kernels, inference, gradients)."""

OPS = ()
