"""Operators: TF's file readers (onegraph domain). Filled in below."""

OPS = ()
