"""Operators: reduction family (definitions, kernels, inference, gradients)."""

OPS = ()
