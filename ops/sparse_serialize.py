"""Operators: TF's sparse_serialize ops (onegraph domain). Filled in below."""

OPS = ()
