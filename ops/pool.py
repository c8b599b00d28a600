"""Operators: pool family (definitions, kernels, inference, gradients)."""

OPS = ()
