"""Operators: TF's lookup tables (onegraph domain). Filled in below."""

OPS = ()
