"""Skip marks for tests of an optional accelerator backend (ops.blas's MKL, ops.onednn's
oneDNN)."""

from __future__ import annotations

import pytest


def needs_backend(module, name: str, extra: str):
    """A skipif mark for tests that need `module`'s backend `name` ("mkl", "onednn"):
    skipped where it does not load under "auto" (`extra` names what to install). The
    environment's choice is read again afterwards."""
    try:
        loads = module.use_backend("auto") == name
    finally:
        module._reset_for_tests()
    return pytest.mark.skipif(not loads, reason=f"{extra} does not load here")
