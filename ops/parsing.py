"""Operators: TF's Example parsing (onegraph domain). Filled in below."""

OPS = ()
