"""Operators: TF's dataset iterator ops (onegraph domain): iterators over the Python-side
input pipelines of train/data.py, kept per session."""

from __future__ import annotations

OPS = ()
