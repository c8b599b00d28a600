"""og.math and og.random: TF1's tf.math / tf.random names over og's functions, and
the tf.math functions that exist only there (checked against numpy spellings of TF's
definitions)."""

import numpy as np
import pytest

import onegraph as og


def test_math_names_are_og_functions():
    assert og.math.log1p is og.log1p and og.math.reduce_std is og.reduce_std
    assert og.math.softplus is og.nn.softplus and og.math.accumulate_n is og.add_n
    assert og.random.uniform is og.random_uniform and og.random.normal is og.random_normal
    for name in og.math.__all__:
        if name == "special":   # og.math.special, a namespace of functions as TF's
            assert all(callable(getattr(og.math.special, n)) for n in og.math.special.__all__)
            continue
        assert callable(getattr(og.math, name)), name


def test_math_only_functions():
    x = np.array([0.0, 2.0, -1.0, 0.0], np.float32)
    y = np.array([0.0, 3.0, 4.0, np.inf], np.float32)
    g = og.Graph()
    with g.as_default():
        a, b = og.constant(x), og.constant(y)
        got = og.Session().run([
            og.math.xlogy(a, b), og.math.xdivy(a, b), og.math.divide_no_nan(a, b),
            og.math.multiply_no_nan(og.constant([np.inf, np.nan, 2.0]),
                                    og.constant([0.0, 0.0, 3.0])),
            og.math.reciprocal_no_nan(og.constant([0.0, 4.0])),
            og.math.is_non_decreasing(og.constant([1, 1, 2])),
            og.math.is_strictly_increasing(og.constant([1, 1, 2])),
            og.math.is_strictly_increasing(og.constant([5])),
            og.math.polyval([2.0, -1.0, 3.0], og.constant([0.0, 1.0, 2.0]))])
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_allclose(got[0], np.where(x == 0, 0, x * np.log(y)))
        np.testing.assert_allclose(got[1], np.where(x == 0, 0, x / y))
        np.testing.assert_allclose(got[2], np.where(y == 0, 0, x / y))
    np.testing.assert_array_equal(got[3], [0.0, 0.0, 6.0])
    np.testing.assert_array_equal(got[4], [0.0, 0.25])
    assert got[5] and not got[6] and got[7]
    np.testing.assert_allclose(got[8], np.polyval([2.0, -1.0, 3.0], [0.0, 1.0, 2.0]))
    with pytest.raises(TypeError, match="polyval: coeffs must be a list"):
        og.math.polyval(og.constant([1.0]), og.constant(1.0))


def test_random_categorical_draws_by_softmax():
    g = og.Graph()
    with g.as_default():
        draws = og.random.categorical(og.constant(np.log([[0.25, 0.75]]).astype(np.float32)),
                                      4000, dtype=og.int32)
        got = og.Session(g, seed=0).run(draws)
    assert got.dtype == np.int32 and got.shape == (1, 4000)
    assert abs(got.mean() - 0.75) < 4 * np.sqrt(0.75 * 0.25 / 4000)
