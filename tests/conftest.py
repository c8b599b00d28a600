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
