"""Operators: more of onnxruntime's quantized contrib ops (QAttention, QLinearWhere, ...).

Placeholder: the ops land in a follow-up commit.
"""

OPS = ()
