"""Operators: shape family (definitions, kernels, inference, gradients)."""

OPS = ()
