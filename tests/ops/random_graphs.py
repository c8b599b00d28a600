"""Helpers for the property tests that build random ONNX graphs node by node."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings


class GraphBuilder:
    """Nodes and constant initializers of one graph, with fresh tensor names; weights
    come from `rng` (the subclasses' layer helpers draw them)."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.initializers = []

    def const(self, value, dtype=np.float32):
        """A new initializer holding `value`; returns its name."""
        from onnx import numpy_helper

        name = f"c{len(self.initializers)}"
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def ints(self, values):
        """A new int64 initializer (shapes, axes, indices); returns its name."""
        return self.const(values, np.int64)

    def add(self, op, inputs, n_out=1, **attrs):
        """Append an `op` node; returns its output name (a list when n_out > 1)."""
        from onnx import helper

        outs = [f"t{len(self.nodes)}_{k}" for k in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, **attrs))
        return outs[0] if n_out == 1 else outs


def ci_settings(max_examples):
    """Hypothesis settings for CI: a fixed example sequence (derandomized, so a run
    cannot fail by luck), no deadline (each example builds two runtimes' sessions)."""
    return settings(max_examples=max_examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
