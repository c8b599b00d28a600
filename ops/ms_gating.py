"""Operators: onnxruntime's gated-norm, gate and hyper-connection contrib ops.

Placeholder: the ops land in a follow-up commit.
"""

OPS = ()
