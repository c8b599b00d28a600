"""Running test work in several threads at once."""

from __future__ import annotations

import threading


def run_together(work, count: int, timeout: float = 120.0) -> list:
    """Run work(k) for k in range(count), each in its own daemon thread, all released
    together by a barrier; wait up to `timeout` seconds for each. Returns the indices
    of the threads still running then (hung)."""
    barrier = threading.Barrier(count)

    def start(k):
        barrier.wait(timeout)
        work(k)

    threads = [threading.Thread(target=start, args=(k,), daemon=True) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return [k for k, t in enumerate(threads) if t.is_alive()]
