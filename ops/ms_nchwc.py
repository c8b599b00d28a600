"""Operators: onnxruntime's NCHWc layout ops (domain "com.microsoft.nchwc").

Placeholder: the ops land in a follow-up commit.
"""

OPS = ()
