"""Operators: TF's PyFunc (onegraph domain): a node that calls a Python function."""

from __future__ import annotations

OPS = ()
