"""Operators: indexing family (definitions, kernels, inference, gradients)."""

OPS = ()
