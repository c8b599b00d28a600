"""The Session's memory arena (train/heap.py): freed intermediates are reused, not
faulted in again on every run. Each case runs in its own interpreter, because malloc's
configuration is per process; the page-fault counts come from getrusage."""

import json
import os
import platform
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
    reason="the arena tunes glibc's malloc")

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A Session whose every run builds a 4.5 MiB intermediate (a Concat of three 1.5 MiB
# tensors) and frees it: the pattern where glibc's default thresholds map fresh pages
# on every run (measured ~1760 faults per run here without the arena).
_SESSION_RUNS = """
import json, resource, sys
import numpy as np
import onegraph as og
from onegraph.train import heap
n = 393216
g = og.Graph()
with g.as_default():
    x = og.placeholder(og.float32, [1, n])
    a = x * 2.0
    b = x * 3.0
    y = og.reduce_sum(og.concat([a, b, a + b], axis=1))
sess = og.Session(g, **json.loads(sys.argv[1]))
v = np.random.default_rng(0).standard_normal((1, n)).astype(np.float32)
for _ in range(3):
    out = sess.run(y, {x: v})
np.testing.assert_allclose(out, 10 * v.astype(np.float64).sum(), rtol=1e-3, atol=1e-2)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    out = sess.run(y, {x: v})
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20
print(json.dumps({"faults_per_run": faults, "applied": heap._applied}))
"""


def _run(script, args=(), env_extra=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_ROOT, env.get("PYTHONPATH")]))
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_session_runs_reuse_freed_memory():
    kept = _run(_SESSION_RUNS, [json.dumps({})])
    assert kept["applied"] is True
    # 4.5 MiB is 1152 pages: fresh pages would show as a thousand faults per run
    assert kept["faults_per_run"] < 20, kept


def test_without_the_arena_runs_fault_their_intermediates_in_again():
    # the control for the test above: the same runs with the arena off do fault
    fresh = _run(_SESSION_RUNS, [json.dumps({"memory_arena": False})])
    assert fresh["applied"] is None
    assert fresh["faults_per_run"] > 300, fresh


@pytest.mark.parametrize("variable", ["MALLOC_TRIM_THRESHOLD_=1000000",
                                      "MALLOC_MMAP_THRESHOLD_=1000000",
                                      "GLIBC_TUNABLES=glibc.malloc.trim_threshold=1000000"])
def test_malloc_tuned_by_the_user_is_left_alone(variable):
    name, value = variable.split("=", 1)
    got = _run("""
        import json
        from onegraph.train import heap
        print(json.dumps({"first": heap.keep_freed_memory(),
                          "again": heap.keep_freed_memory()}))
        """, env_extra={name: value})
    assert got == {"first": False, "again": False}


def test_keep_freed_memory_applies_once_and_remembers_the_outcome(monkeypatch):
    from onegraph.train import heap
    calls = []
    monkeypatch.setattr(heap, "_applied", None)
    monkeypatch.setattr(heap, "_apply", lambda: calls.append(1) or False)
    assert heap.keep_freed_memory() is False
    assert heap.keep_freed_memory() is False
    assert calls == [1]
