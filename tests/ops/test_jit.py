"""ops/jit.py: the choice between numba's compiled kernels and numpy's (ONEGRAPH_JIT,
use_backend), numba imported only when chosen, and the fallback to numpy where numba
does not import. The kernels themselves are checked against onnxruntime and direct sums
in the tests of their ops (tests/ops/test_conv_depthwise.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from onegraph.errors import InvalidArgumentError, UnavailableError
from onegraph.ops import jit


@pytest.fixture
def backend_reset():
    """Put the requested backend back to ONEGRAPH_JIT after the test."""
    yield
    jit._reset_for_tests()


# A depthwise Conv through a Session, checked against a direct sum; then the backend and
# whether numba was imported. `block` makes numba unimportable first (as where the jit
# extra is not installed).
_SCRIPT = """
    import sys
    if {block}:
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("numba", "llvmlite"):
                    raise ImportError("blocked for this test: " + name)
                return None
        sys.meta_path.insert(0, Block())
    import numpy as np
    import onegraph as og
    from onegraph.ops import jit
    print("imported at start", "numba" in sys.modules)
    try:
        print("backend", jit.backend())
    except Exception as e:
        print(type(e).__name__, e)
        raise SystemExit(0)
    from onegraph.format import Graph, Model
    weights = np.arange(36, dtype=np.float32).reshape(4, 1, 3, 3) / 9
    g = Graph("main")
    x = g.add_input("x", "float32", [1, 4, 6, 6])
    w = g.add_constant("w", weights)
    (y,) = g.add_node("Conv", [x, w], ["y"], dict(group=4, pads=[1, 1, 1, 1]))
    g.outputs = [y]
    feed = np.arange(144, dtype=np.float32).reshape(1, 4, 6, 6)
    (got,) = og.Session(Model(graphs=[g])).run(["y"], {{"x": feed}})
    xp = np.pad(feed, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = sum(xp[:, :, i:i + 6, j:j + 6] * weights[None, :, 0, i, j, None, None]
               for i in range(3) for j in range(3))
    print("ok", bool(np.allclose(got, want, rtol=1e-5)))
    print("imported at end", "numba" in sys.modules)
"""


def _run(block: bool, **env) -> str:
    import os

    full = dict(os.environ, **env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(_SCRIPT.format(
        block=block))], env=full, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_environment_chooses_the_backend():
    """ONEGRAPH_JIT is read at first use: an unknown value is an error naming the
    variable; "numba" where numba does not import is UnavailableError saying what to
    install; "auto" then falls back to numpy's kernels; "numpy" never imports numba;
    importing onegraph imports no numba either way."""
    bad = _run(False, ONEGRAPH_JIT="cuda")
    assert "InvalidArgumentError ONEGRAPH_JIT='cuda'" in bad
    forced = _run(True, ONEGRAPH_JIT="numba")
    assert "UnavailableError" in forced and "onegraph[jit]" in forced
    auto = _run(True, ONEGRAPH_JIT="auto")
    assert "backend numpy" in auto and "ok True" in auto
    plain = _run(False, ONEGRAPH_JIT="numpy")
    assert "backend numpy" in plain and "ok True" in plain
    assert "imported at end False" in plain
    for out in (bad, forced, auto, plain):
        assert "imported at start False" in out


def test_numba_backend_runs_the_compiled_kernels():
    pytest.importorskip("numba")
    out = _run(False, ONEGRAPH_JIT="auto")
    assert "backend numba" in out and "ok True" in out and "imported at end True" in out


@pytest.mark.parametrize("value", ["cuda", "", 3, None])
def test_use_backend_refuses_unknown_names(value, backend_reset):
    before = jit.backend()
    with pytest.raises(InvalidArgumentError, match="expected one of auto, numpy, numba"):
        jit.use_backend(value)
    assert jit.backend() == before


def test_use_backend_numba_without_numba_keeps_the_backend(monkeypatch, backend_reset):
    monkeypatch.setattr(jit._switch, "loaded", False)  # as if numba had not imported
    assert jit.use_backend("auto") == "numpy"
    with pytest.raises(UnavailableError, match=r"onegraph\[jit\]"):
        jit.use_backend("numba")
    assert jit.backend() == "numpy" and jit.kernels("conv") is None


def test_numpy_backend_hands_out_no_kernels(backend_reset):
    assert jit.use_backend("numpy") == "numpy"
    assert jit.kernels("conv") is None


def test_kernels_that_fail_to_load_leave_the_work_to_numpy(monkeypatch, backend_reset):
    """numba imports but a family's kernels do not load (as with no writable cache
    location): "auto" runs numpy's kernels, once tried; "numba" is UnavailableError
    naming the family and the cause."""
    pytest.importorskip("numba")
    import importlib

    real = importlib.import_module
    tries = []

    def failing(name, *args):
        if name.endswith("pool_jit"):
            tries.append(name)
            raise RuntimeError("cannot cache function: no locator available")
        return real(name, *args)

    monkeypatch.setattr(jit.importlib, "import_module", failing)
    monkeypatch.setattr(jit, "_modules", {})
    monkeypatch.setattr(jit, "_failures", {})
    assert jit.use_backend("auto") == "numba"
    assert jit.kernels("pool") is None and jit.kernels("pool") is None
    assert len(tries) == 1 and jit.kernels("conv") is not None
    jit.use_backend("numba")
    with pytest.raises(UnavailableError, match="'pool'.*no locator available"):
        jit.kernels("pool")
