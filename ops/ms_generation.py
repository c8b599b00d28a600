"""Operators: onnxruntime's text-generation contrib ops (GreedySearch, BeamSearch, ...).

Placeholder: the ops land in a follow-up commit.
"""

OPS = ()
