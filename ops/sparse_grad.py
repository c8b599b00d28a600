"""Gradient rules of the sparse tensor ops (ops/sparse.py)."""

from __future__ import annotations

GRADIENTS: dict = {}
