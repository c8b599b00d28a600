"""Operators: ONNX's training optimizers (`ai.onnx.preview.training`: Adagrad, Adam,
Momentum), pure functions from the current state to the updated one."""

from __future__ import annotations

OPS: tuple = ()

KNOWN_FAILURES: dict[str, str] = {}
