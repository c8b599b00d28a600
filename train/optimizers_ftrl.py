"""TF1's FtrlOptimizer, ProximalGradientDescentOptimizer and ProximalAdagradOptimizer,
with TF1's arguments, slot names and update rules (the math of TF's ApplyFtrl /
ApplyFtrlV2, ApplyProximalGradientDescent and ApplyProximalAdagrad kernels, and of
their Sparse* forms for IndexedSlices gradients); and TF1's noisy_linear_cosine_decay
schedule (as optimizers_tf1 holds TF1's other schedules beside its optimizers).

Unlike the other optimizers, whose update is one fused kernel node (ops/training.py),
these updates are compositions of ordinary graph ops: reads of the variable and its
slots, elementwise math, then Assign (dense gradient) or ScatterAdd of the change on
the rows touched (sparse gradient). The training graph so still exports, saves and
runs anywhere the standard ops do. What this gives up is the fused kernel's lock over
the whole read-modify-write: two train steps running at once on one variable may
interleave (as TF1's updates with use_locking=False do); one Session.run is exact.

A sparse gradient updates only the rows it touches, its repeated indices summed first
(TF1's `_deduplicate_indexed_slices`); negative indices count from the end, as
og.gather's do. The written rows get old + (new - old) (ScatterAdd, so concurrent
steps touching other rows are not overwritten), which can differ from TF's value in
the last bit.

Slot variables have TF1's names: Ftrl's "w/Ftrl" (accum, starting at
initial_accumulator_value) and "w/Ftrl_1" (linear, starting at 0), or "w/<accum_name>"
and "w/<linear_name>" when given; ProximalAdagrad's "w/ProximalAdagrad"
(accumulator). `get_slot(var, name)` takes TF1's slot names ("accum", "linear",
"accumulator"). `use_locking` is accepted and has no effect.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ShapeError
from . import api
from . import api_extra
from . import api_linalg
from . import api_math
from . import graph as _g
from .gradients import IndexedSlices
from .optimizers import Optimizer, _check_locking, _number, _rate, _step
from .variables import Variable


# --------------------------------------------------------------------------- plumbing

def _const(value: float, like) -> object:
    """A scalar constant of `like`'s dtype in its graph."""
    return like.graph.constant(np.asarray(value, like.dtype.numpy))


def _tf_number(value: float, like) -> object:
    """A hyper-parameter given as a number, as TF1 passes it to its kernels: converted to
    a float32 tensor, then cast to the variable's dtype (so a float64 variable sees
    float32-rounded strengths, as in TF1)."""
    return like.graph.constant(np.asarray(np.float32(value), like.dtype.numpy))


def _as_dtype(t, var: Variable):
    """`t` (the learning rate, ...) in the variable's dtype, as TF1's optimizers cast."""
    return t if t.dtype == var.dtype else api.cast(t, var.dtype)


def _positive_rate(learning_rate, cls: str) -> None:
    """A learning rate that must be > 0 when it is a number (tensors are taken as they
    are): FTRL divides by it (TF1 trains to NaN at 0), TF's ProximalAdagrad kernel
    refuses 0 ("lr is not a positive scalar").

    Raises:
        ValueError: a number that is not > 0.
    """
    if not (_g._is_symbolic(learning_rate) or callable(learning_rate)):
        _number(learning_rate, f"{cls}: learning_rate", lo=0.0, lo_open=True)


class _Rows:
    """The rows a sparse gradient touches, each once, and its summed value per row.

    Raises:
        ShapeError: the variable is a scalar (it has no rows).
    """

    def __init__(self, grad: IndexedSlices, var: Variable):
        if not var.shape:
            raise ShapeError(f"sparse gradient of the scalar variable {var.name!r}: a "
                             "scalar has no rows")
        n = var.graph.constant(np.int64(var.shape[0]))
        idx = api_math.floormod(api.cast(grad.indices, api.int64), n)
        self.rows, positions = api_linalg.unique(idx, out_idx=api.int64)
        self.grad = api_extra.unsorted_segment_sum(
            grad.values, positions, api_extra.size(self.rows, out_type=api.int64))

    def read(self, v: Variable):
        """The touched rows of `v`, read now."""
        return api.gather(v.read_value(), self.rows)

    def write(self, v: Variable, old, new):
        """Set the touched rows of `v` from `old` to `new` (adds the difference)."""
        return v.scatter_add(self.rows, new - old)


class _Composed(Optimizer):
    """An optimizer whose update is built from graph ops (see the module doc): the
    subclass computes the new values of the variable and its slots from their current
    ones, `_new_values(grad, values, lr, hyper) -> new values`, and this writes them."""

    _tf1_names = True

    def _slot_named(self, var: Variable, key: str, value: float, suffix: str) -> Variable:
        """Slot `key` of `var`, the variable "<var>/<suffix>" (made unique as TF1's
        variable scopes do), created on first use at the root name scope."""
        found = self._slots.get((id(var), key))
        if found is not None:
            return found
        g = var.graph
        saved, g._scope = g._scope, []
        try:
            slot = Variable(np.full(var.shape, value, dtype=var.dtype.numpy),
                            trainable=False, graph=g, name=f"{var.name}/{suffix}")
        finally:
            g._scope = saved
        self._slots[(id(var), key)] = slot
        return slot

    def _slot_list(self, var: Variable) -> list:
        return []

    def _hyper(self, lr, var: Variable):
        """Per-update tensors `_new_values` needs besides the learning rate (built in
        the update's name scope); none by default."""
        return None

    def _new_values(self, grad, values: list, lr, hyper) -> list:
        raise NotImplementedError

    def _apply(self, grad, var, lr, shared):
        owned = [var] + self._slot_list(var)
        lr = _g.convert_to_tensor(lr)
        hyper = self._hyper(lr, var)
        lr = _as_dtype(lr, var)
        if isinstance(grad, IndexedSlices):
            rows = _Rows(grad, var)
            old = [rows.read(v) for v in owned]
            new = self._new_values(rows.grad, old, lr, hyper)
            writes = [rows.write(v, o, n) for v, o, n in zip(owned, old, new)]
        else:
            # fresh reads: they honour control_dependencies around minimize, and every
            # write below consumes them, so each reads the value before its write
            old = [v.read_value() for v in owned]
            new = self._new_values(grad, old, lr, hyper)
            writes = [v.assign(n) for v, n in zip(owned, new)]
        return var.graph.op("NoOp", [], name=f"update_{var._base}", control_inputs=writes)


# --------------------------------------------------------------------------- FTRL

class FtrlOptimizer(_Composed):
    """TF1's FtrlOptimizer (FTRL-Proximal, McMahan et al. 2013), the math of TF's
    ApplyFtrlV2 kernel, with p = learning_rate_power and l2 the adjusted
    l2_regularization_strength + beta / (2 * max(lr, 1e-36)) (how TF1 folds beta in):

        g_s = grad + 2 * l2_shrinkage * var
        accum_new = accum + grad^2
        linear += g_s - (accum_new^-p - accum^-p) / lr * var
        quadratic = accum_new^-p / lr + 2 * l2
        var = (sign(linear) * l1 - linear) / quadratic if |linear| > l1 else 0
        accum = accum_new

    (p = -0.5 uses square roots, as TF's kernel). A sparse gradient updates the rows
    it touches only, the shrinkage too (TF1's "shrinkage will only happen on the
    active weights").

    Args:
        learning_rate: number > 0, tensor or schedule.
        learning_rate_power: <= 0 (0: a fixed learning rate).
        initial_accumulator_value: >= 0, the accumulators' start.
        l1_regularization_strength, l2_regularization_strength,
        l2_shrinkage_regularization_strength: >= 0.
        accum_name, linear_name: the slots' variable name suffixes (default: name,
            which TF1's uniquifying makes "w/Ftrl" and "w/Ftrl_1").
        beta: None or a number >= 0 (None is 0).

    Raises:
        TypeError: a hyper-parameter is not a number (beta: nor None), use_locking is
            not a bool, name is not a non-empty str, or accum_name or linear_name is
            neither None nor a non-empty str.
        ValueError: learning_rate (a number) is not > 0 (TF1 trains to NaN at 0);
            learning_rate_power is > 0; initial_accumulator_value, an
            l1/l2/l2_shrinkage strength or beta is negative (TF1's checks; the ones on
            learning_rate and beta are og's); a value is NaN or infinite.
    """

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl", accum_name=None, linear_name=None,
                 l2_shrinkage_regularization_strength=0.0, beta=None):
        cls = "FtrlOptimizer"
        _check_locking(use_locking, cls)
        _positive_rate(learning_rate, cls)
        super().__init__(learning_rate, name=name)
        self.learning_rate_power = _number(learning_rate_power,
                                           f"{cls}: learning_rate_power", hi=0.0)
        self.initial_accumulator_value = _number(
            initial_accumulator_value, f"{cls}: initial_accumulator_value", lo=0.0)
        self.l1 = _number(l1_regularization_strength, f"{cls}: l1_regularization_strength",
                          lo=0.0)
        self.l2 = _number(l2_regularization_strength, f"{cls}: l2_regularization_strength",
                          lo=0.0)
        self.l2_shrinkage = _number(l2_shrinkage_regularization_strength,
                                    f"{cls}: l2_shrinkage_regularization_strength", lo=0.0)
        self.beta = 0.0 if beta is None else _number(beta, f"{cls}: beta", lo=0.0)
        for what, value in (("accum_name", accum_name), ("linear_name", linear_name)):
            if value is not None and (not isinstance(value, str) or not value):
                raise TypeError(f"{cls}: {what} must be None or a non-empty str, got "
                                f"{value!r}")
        self.accum_name, self.linear_name = accum_name, linear_name

    def _slot_list(self, var):
        return [self._slot_named(var, "accum", self.initial_accumulator_value,
                                 self.accum_name or self.name),
                self._slot_named(var, "linear", 0.0, self.linear_name or self.name)]

    def _hyper(self, lr, var):
        # TF1 folds beta into l2 in the learning rate's own dtype, then casts
        return _as_dtype(api.add(_const(self.l2, lr), api.divide(
            _const(self.beta, lr),
            api.multiply(_const(2.0, lr), api.maximum(lr, _const(1e-36, lr))))), var)

    def _new_values(self, grad, values, lr, l2):
        v, accum, linear = values
        power = self.learning_rate_power
        shrunk = grad
        if self.l2_shrinkage > 0:
            # TF1 runs the kernel without shrinkage at 0 (2 * 0 * an infinite var would
            # make the step NaN)
            shrunk = grad + _const(2.0, v) * _tf_number(self.l2_shrinkage, v) * v
        accum_new = accum + grad * grad
        if power == -0.5:   # TF's kernel takes square roots there, not powers
            root_new, root_old = api.sqrt(accum_new), api.sqrt(accum)
        else:
            minus_p = -_tf_number(power, v)
            root_new, root_old = api.pow(accum_new, minus_p), api.pow(accum, minus_p)
        linear_new = linear + (shrunk - (root_new - root_old) / lr * v)
        l1 = _tf_number(self.l1, v)
        quadratic = root_new / lr + _const(2.0, v) * l2
        shrunk_linear = l1 * api.sign(linear_new) - linear_new
        var_new = api.where(api.greater(api.abs(linear_new), l1), shrunk_linear / quadratic,
                            api.zeros_like(v))
        return [var_new, accum_new, linear_new]


# --------------------------------------------------------------------------- proximal

def _proximal(prox, step, l1: float, l2: float, like):
    """sign(prox) * max(|prox| - step * l1, 0) / (1 + l2 * step), or prox / (1 + l2 *
    step) when l1 is 0 (TF's kernels branch on l1 > 0 the same way); step is the
    learning rate, per coordinate for ProximalAdagrad."""
    one = _const(1.0, like)
    denominator = one + _tf_number(l2, like) * step
    if l1 > 0:
        shrunk = api.maximum(api.abs(prox) - step * _tf_number(l1, like), api.zeros_like(prox))
        return api.sign(prox) * shrunk / denominator
    return prox / denominator


class ProximalGradientDescentOptimizer(_Composed):
    """TF1's ProximalGradientDescentOptimizer (FOBOS, Duchi & Singer 2009), the math of
    TF's ApplyProximalGradientDescent kernel:

        prox = var - lr * grad
        var = sign(prox) * max(|prox| - lr * l1, 0) / (1 + lr * l2)

    No slots. A sparse gradient updates the rows it touches only.

    Raises:
        TypeError: a hyper-parameter is not a number, use_locking is not a bool, or
            name is not a non-empty str.
        ValueError: learning_rate or a regularization strength is negative (TF1 checks
            neither; a negative strength pushes weights away from 0), NaN or infinite.
    """

    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        cls = "ProximalGradientDescentOptimizer"
        _check_locking(use_locking, cls)
        super().__init__(learning_rate, name=name)
        self.l1 = _number(l1_regularization_strength, f"{cls}: l1_regularization_strength",
                          lo=0.0)
        self.l2 = _number(l2_regularization_strength, f"{cls}: l2_regularization_strength",
                          lo=0.0)

    def _new_values(self, grad, values, lr, hyper):
        (v,) = values
        return [_proximal(v - grad * lr, lr, self.l1, self.l2, v)]


class ProximalAdagradOptimizer(_Composed):
    """TF1's ProximalAdagradOptimizer (FOBOS with Adagrad's per-coordinate rate), the
    math of TF's ApplyProximalAdagrad kernel:

        accum += grad^2
        rate = lr / sqrt(accum)
        prox = var - rate * grad
        var = sign(prox) * max(|prox| - rate * l1, 0) / (1 + rate * l2)

    The accumulator (slot "accumulator", variable "w/ProximalAdagrad") starts at
    initial_accumulator_value. A sparse gradient updates the rows it touches only.

    Raises:
        TypeError: a hyper-parameter is not a number, use_locking is not a bool, or
            name is not a non-empty str.
        ValueError: initial_accumulator_value is not > 0 (TF1's check), learning_rate
            (a number) is not > 0, or a regularization strength is negative (TF's
            kernel refuses both when it runs), NaN or infinite.
    """

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        cls = "ProximalAdagradOptimizer"
        _check_locking(use_locking, cls)
        _positive_rate(learning_rate, cls)
        super().__init__(learning_rate, name=name)
        self.initial_accumulator_value = _number(
            initial_accumulator_value, f"{cls}: initial_accumulator_value", lo=0.0,
            lo_open=True)
        self.l1 = _number(l1_regularization_strength, f"{cls}: l1_regularization_strength",
                          lo=0.0)
        self.l2 = _number(l2_regularization_strength, f"{cls}: l2_regularization_strength",
                          lo=0.0)

    def _slot_list(self, var):
        return [self._slot_named(var, "accumulator", self.initial_accumulator_value,
                                 self.name)]

    def _new_values(self, grad, values, lr, hyper):
        v, accum = values
        accum_new = accum + grad * grad
        rate = lr * api.rsqrt(accum_new)
        return [_proximal(v - grad * rate, rate, self.l1, self.l2, v), accum_new]


# --------------------------------------------------------------------------- schedule

def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """lr * ((alpha + linear + eps) * cosine + beta), TF1's
    tf.train.noisy_linear_cosine_decay (Bello et al. 2017), where with s =
    min(step, decay_steps):

        linear = (decay_steps - s) / decay_steps
        cosine = 0.5 * (1 + cos(pi * 2 * num_periods * s / decay_steps))
        eps ~ Normal(0, initial_variance / (1 + s) ^ variance_decay)

    A new eps is drawn at every Session.run, by the Session's random generator as
    og.random_normal's draws are (og.set_random_seed or og.Session(graph, seed=...)
    make the draws reproducible). It is computed in the learning rate's dtype (float32
    for a number), as TF1 does; TF1 fails for a float64 rate (it draws the noise in
    float32), which works here. global_step None means the graph's global step (as
    og's other schedules).

    Raises:
        TypeError: an argument is not a number (learning_rate may also be a
            floating-point tensor), or name is not a str.
        ValueError: learning_rate or initial_variance is negative, decay_steps is not
            > 0, or one is NaN or infinite.
    """
    what = "noisy_linear_cosine_decay"
    _g.check_name(name, what)
    learning_rate = _rate(learning_rate, what)
    decay_steps = _number(decay_steps, f"{what}: decay_steps", lo=0.0, lo_open=True)
    initial_variance = _number(initial_variance, f"{what}: initial_variance", lo=0.0)
    variance_decay = _number(variance_decay, f"{what}: variance_decay")
    num_periods = _number(num_periods, f"{what}: num_periods")
    alpha = _number(alpha, f"{what}: alpha")
    beta = _number(beta, f"{what}: beta")
    step = _step(global_step)
    g = step.graph
    with g.as_default(), g.name_scope("NoisyLinearCosineDecay"):
        if isinstance(learning_rate, _g.Tensor):
            lr, dtype = learning_rate, learning_rate.dtype
        else:
            lr = g.constant(np.float32(learning_rate), name="initial_learning_rate")
            dtype = api.float32

        def const(value):
            return g.constant(np.asarray(value, dtype.numpy))

        steps = const(decay_steps)
        s = api.minimum(api.cast(step, dtype), steps)
        linear = (steps - s) / steps
        variance = const(initial_variance) / api.pow(const(1.0) + s, const(variance_decay))
        noise = api_extra.random_normal([], dtype=dtype) * api.sqrt(variance)
        fraction = const(2.0) * const(num_periods) * (s / steps)
        cosine = const(0.5) * (const(1.0) + api.cos(const(math.pi) * fraction))
        decayed = (const(alpha) + (linear + noise)) * cosine + const(beta)
    return api.multiply(lr, decayed, name=name)


__all__ = ["FtrlOptimizer", "ProximalAdagradOptimizer", "ProximalGradientDescentOptimizer",
           "noisy_linear_cosine_decay"]
