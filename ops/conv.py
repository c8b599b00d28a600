"""Operators: conv family (definitions, kernels, inference, gradients)."""

OPS = ()
