"""Operators: normalization family (definitions, kernels, inference, gradients)."""

OPS = ()
