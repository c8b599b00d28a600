"""Operators: control_flow family (definitions, kernels, inference, gradients)."""

OPS = ()
