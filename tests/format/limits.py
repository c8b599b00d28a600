"""Bounds on what reading a hostile file may cost, shared by the format tests."""

from __future__ import annotations

import time
import tracemalloc


def bounded(fn, seconds: float = 2.0, peak_bytes: int = 32 << 20):
    """Run fn(); assert it took < seconds and allocated < peak_bytes (tracemalloc)."""
    tracemalloc.start()
    start = time.monotonic()
    try:
        return fn()
    finally:
        elapsed = time.monotonic() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert elapsed < seconds, f"took {elapsed:.2f}s"
        assert peak < peak_bytes, f"allocated {peak} bytes at peak"
