"""Operators: onnxruntime's graph-optimizer fused ops (FusedConv, FusedGemm, FusedMatMul, NHWC ops).

Placeholder: the ops land in a follow-up commit.
"""

OPS = ()
