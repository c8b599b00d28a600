"""Operators: rnn family (definitions, kernels, inference, gradients)."""

OPS = ()
