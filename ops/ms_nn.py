"""Operators: onnxruntime's normalisation, activation and dropout contrib ops (BiasSoftmax, GroupNorm, ...).

Placeholder: the ops land in a follow-up commit.
"""

OPS = ()
