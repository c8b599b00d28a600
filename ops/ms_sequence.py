"""Operators: onnxruntime's recurrent and state-space contrib ops.

Placeholder: the ops land in a follow-up commit.
"""

OPS = ()
