"""Operators: text featurisation (ONNX TfIdfVectorizer)."""

from __future__ import annotations

OPS: tuple = ()

KNOWN_FAILURES: dict[str, str] = {}
