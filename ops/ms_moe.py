"""Operators: onnxruntime's mixture-of-experts contrib ops (MoE, QMoE, ...).

Placeholder: the ops land in a follow-up commit.
"""

OPS = ()
