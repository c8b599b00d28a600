"""Fixtures shared across the test folders."""

import pytest


@pytest.fixture(params=["mkl", "numpy"])
def blas_backend(request):
    """Run the test under the MKL backend (skipped where MKL does not load) and under
    numpy; the backend's name. Kernels with an MKL path (packed products, Gelu's
    normal CDF, erf) are then checked both ways."""
    from onegraph.errors import UnavailableError
    from onegraph.ops import blas

    try:
        blas.use_backend(request.param)
    except UnavailableError:  # MKL asked for, none loads
        blas._reset_for_tests()
        pytest.skip("Intel MKL (the mkl extra) does not load here")
    yield request.param
    blas._reset_for_tests()


@pytest.fixture
def taken_by(monkeypatch):
    """record(module, name): wrap module.name, a function that returns None when it
    leaves the work to another path (MKL declining, a fast path not applying), so that
    each call appends whether it did the work; returns that list."""
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

