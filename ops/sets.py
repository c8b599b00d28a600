"""Operators: TF's set operations (onegraph domain). Filled in below."""

OPS = ()
