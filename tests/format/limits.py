"""Bounds on what reading a hostile file may cost, shared by the format tests."""

from __future__ import annotations

import time
import tracemalloc

# Wall-clock time only catches a blocked call here: on a shared 2-core machine it
# swings with other processes' load (a 0.8 s parse once took 3.3 s beside two busy
# loops), so the budget is on this thread's CPU time, which they do not touch.
_WALL_SLACK = 10.0


def bounded(fn, seconds: float = 2.0, peak_bytes: int = 32 << 20):
    """Run fn(); assert it used < seconds of this thread's CPU time (and did not block
    for many times that), and allocated < peak_bytes (tracemalloc)."""
    tracemalloc.start()
    cpu, wall = time.thread_time(), time.monotonic()
    try:
        return fn()
    finally:
        cpu = time.thread_time() - cpu
        wall = time.monotonic() - wall
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert cpu < seconds, f"took {cpu:.2f}s of CPU time"
        assert wall < _WALL_SLACK * seconds, f"took {wall:.2f}s (blocked?)"
        assert peak < peak_bytes, f"allocated {peak} bytes at peak"
