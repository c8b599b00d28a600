"""Fixtures shared by the conversion tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def node_cases():
    """{name: case} of the ONNX backend node tests (onegraph.convert.coverage), read
    once per test process."""
    from onegraph.convert.coverage import all_node_cases

    return {c.name: c for c in all_node_cases()}
