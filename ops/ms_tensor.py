"""Operators: onnxruntime's tensor and math contrib ops (ExpandDims, Inverse, Unique, ...).

Placeholder: the ops land in a follow-up commit.
"""

OPS = ()
