"""Operators: TF's file and record decoding ops (onegraph domain). Filled in below."""

OPS = ()
