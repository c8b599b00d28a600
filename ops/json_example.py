"""Operators: TF's json_example ops (onegraph domain). Filled in below."""

OPS = ()
