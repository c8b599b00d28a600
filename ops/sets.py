"""Operators: TF's sets ops (onegraph domain). Filled in below."""

OPS = ()
