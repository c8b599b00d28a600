"""Fixtures shared across the test folders."""

import pytest


def _under_backend(module, name, missing):
    """Switch `module` (ops.blas, ops.jit or ops.onednn) to backend `name` for one test,
    skipping the test when that backend does not load (`missing` says why); yields the
    name and puts the environment's choice back after."""
    from onegraph.errors import UnavailableError

    try:
        module.use_backend(name)
    except UnavailableError:
        module._reset_for_tests()
        pytest.skip(missing)
    yield name
    module._reset_for_tests()


@pytest.fixture(params=["mkl", "numpy"])
def blas_backend(request):
    """Run the test under the MKL backend (skipped where MKL does not load) and under
    numpy; the backend's name. Kernels with an MKL path (packed products, Gelu's
    normal CDF, erf) are then checked both ways."""
    from onegraph.ops import blas

    yield from _under_backend(blas, request.param,
                              "Intel MKL (the mkl extra) does not load here")


@pytest.fixture(params=["numba", "numpy"])
def jit_backend(request):
    """Run the test with numba's compiled kernels (skipped where numba does not import)
    and with numpy's; the backend's name. Kernels with a compiled form (ops/jit.py:
    depthwise convs) are then checked both ways."""
    from onegraph.ops import jit

    yield from _under_backend(jit, request.param, "numba (the jit extra) does not import")


@pytest.fixture
def numba_jit():
    """Run the test with numba's compiled kernels only (JIT backend "numba"), skipped
    where numba does not import: for tests of the compiled kernels themselves."""
    from onegraph.ops import jit

    yield from _under_backend(jit, "numba", "numba (the jit extra) does not import")


@pytest.fixture
def numpy_kernels():
    """Run the test with numpy's kernels only (JIT backend "numpy"): for tests of the
    numpy forms themselves."""
    from onegraph.ops import jit

    yield from _under_backend(jit, "numpy", "")


@pytest.fixture
def taken_by(monkeypatch, own_convs):
    """record(module, name): wrap module.name, a function that returns None when it
    leaves the work to another path (MKL declining, a fast path not applying), so that
    each call appends whether it did the work; returns that list. The test runs with
    conv.py's own paths (oneDNN off), whose choices it checks."""
    def record(module, name):
        calls = []
        real = getattr(module, name)

        def recording(*args, **kwargs):
            y = real(*args, **kwargs)
            calls.append(y is not None)
            return y

        monkeypatch.setattr(module, name, recording)
        return calls
    return record


@pytest.fixture(params=["onednn", "numpy"])
def dnnl_backend(request):
    """Run the test with oneDNN's convolutions (skipped where libdnnl does not load) and
    with conv.py's own; the backend's name."""
    from onegraph.ops import onednn

    yield from _under_backend(onednn, request.param,
                              "oneDNN (the onednn extra) does not load here")


@pytest.fixture
def with_onednn():
    """oneDNN's backend for one test (skip it where oneDNN does not load: needs_backend
    in tests/backends.py)."""
    from onegraph.ops import onednn

    onednn.use_backend("onednn")
    yield
    onednn._reset_for_tests()


@pytest.fixture
def own_convs():
    """conv.py's own convolution paths for one test (oneDNN off): for tests that check
    which of them a conv takes."""
    from onegraph.ops import onednn

    onednn.use_backend("numpy")
    yield
    onednn._reset_for_tests()
