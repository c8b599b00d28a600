"""Operators: activation family (definitions, kernels, inference, gradients)."""

OPS = ()
