"""TF1's tf.train optimizers and schedules under their TF1 names, arguments and update
rules, next to og.train's Keras-style ones: MomentumOptimizer, AdagradOptimizer (no
epsilon), RMSPropOptimizer (mean square starting at 1, `decay`, `centered`),
AdadeltaOptimizer, and polynomial_decay, natural_exp_decay and inverse_time_decay.

`use_locking` is accepted for TF1 code and has no effect: each variable's update holds
the variable's lock anyway. Slot variables have TF1's names ("w/Momentum", "w/Adagrad",
"w/RMSProp" (rms), "w/RMSProp_1" (mg when centered, else momentum), "w/RMSProp_2",
"w/Adadelta" (accum), "w/Adadelta_1" (accum_update)), so checkpoints keyed by TF1's
names line up; `get_slot(var, name)` and `get_slot_names()` take TF1's slot names.
The schedules take a number or a floating-point tensor as learning_rate (the result
then has its dtype), as TF1's.
"""

from __future__ import annotations

import numpy as np

from . import api
from .gradients import IndexedSlices
from .graph import Tensor
from .optimizers import (AdaGrad, Momentum, Optimizer, RMSProp, _check_locking, _f32, _number,
                         _rate, _step_float, _times_rate)


class MomentumOptimizer(Momentum):
    """TF1's MomentumOptimizer(learning_rate, momentum, use_locking, name,
    use_nesterov): accum = momentum * accum + grad; var -= lr * accum (Nesterov:
    var -= lr * (grad + momentum * accum)).

    Raises:
        TypeError: a hyper-parameter is not a number, or a flag not a bool.
        ValueError: momentum is outside [0, 1], or learning_rate negative.
    """

    _tf1_names = True

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        _check_locking(use_locking, "MomentumOptimizer")
        super().__init__(learning_rate, momentum, use_nesterov, name=name)


class AdagradOptimizer(AdaGrad):
    """TF1's AdagradOptimizer: accum += grad^2; var -= lr * grad / sqrt(accum), the
    accumulator starting at initial_accumulator_value (no epsilon).

    Raises:
        TypeError: a hyper-parameter is not a number, or use_locking not a bool.
        ValueError: initial_accumulator_value is not > 0 (TF1's rule), or
            learning_rate negative.
    """

    _tf1_names = True

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        _check_locking(use_locking, "AdagradOptimizer")
        _number(initial_accumulator_value, "AdagradOptimizer: initial_accumulator_value",
                lo=0.0, lo_open=True)
        super().__init__(learning_rate, initial_accumulator_value, epsilon=0.0, name=name)


class RMSPropOptimizer(RMSProp):
    """TF1's RMSPropOptimizer: ms = decay * ms + (1 - decay) grad^2, with ms starting
    at 1 (TF1's slot initializer); mom = momentum * mom + lr * grad / sqrt(ms +
    epsilon); var -= mom. centered=True divides by the gradient's estimated variance
    instead, sqrt(ms - mg^2 + epsilon) with mg the moving mean of the gradients.

    Raises:
        TypeError: a hyper-parameter is not a number, or a flag not a bool.
        ValueError: decay or momentum is outside [0, 1], epsilon negative, or
            learning_rate negative.
    """

    _tf1_names = True

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp"):
        _check_locking(use_locking, "RMSPropOptimizer")
        _number(decay, "RMSPropOptimizer: decay", 0.0, 1.0)
        super().__init__(learning_rate, decay, momentum, epsilon, name=name)
        self.centered = api._bool_arg(centered, "RMSPropOptimizer: centered")

    def _apply(self, grad, var, lr, shared):
        self._slot(var, "rms", 1.0)   # TF1 starts the mean square at 1, not 0
        if not self.centered:
            return super()._apply(grad, var, lr, shared)
        ms = self._slot(var, "rms", 1.0)
        mg = self._slot(var, "mg")
        mom = self._slot(var, "momentum")
        attrs = {"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon}
        slots = [var.handle, mg.handle, ms.handle, mom.handle, lr]
        if isinstance(grad, IndexedSlices):  # rows not looked up keep all three slots
            return var.graph.op("SparseApplyCenteredRMSProp",
                                slots + [grad.values, grad.indices], attrs)
        return var.graph.op("ApplyCenteredRMSProp", slots + [grad], attrs)


class AdadeltaOptimizer(Optimizer):
    """TF1's AdadeltaOptimizer (Zeiler 2012): accum = rho accum + (1 - rho) grad^2;
    update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad; accum_update
    = rho accum_update + (1 - rho) update^2; var -= lr * update. Both accumulators
    start at 0. A sparse gradient (IndexedSlices) updates only the rows it touches,
    its repeated indices summed first (TF1's SparseApplyAdadelta): the other rows
    keep their value and accumulators.

    Raises:
        TypeError: a hyper-parameter is not a number, or use_locking not a bool.
        ValueError: rho is outside [0, 1], epsilon negative, or learning_rate negative.
    """

    _tf1_names = True

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False,
                 name="Adadelta"):
        _check_locking(use_locking, "AdadeltaOptimizer")
        super().__init__(learning_rate, name=name)
        self.rho = _number(rho, "AdadeltaOptimizer: rho", 0.0, 1.0)
        self.epsilon = _number(epsilon, "AdadeltaOptimizer: epsilon", lo=0.0)

    def _apply(self, grad, var, lr, shared):
        accum = self._slot(var, "accum")
        accum_update = self._slot(var, "accum_update")
        attrs = {"rho": self.rho, "epsilon": self.epsilon}
        slots = [var.handle, accum.handle, accum_update.handle, lr]
        if isinstance(grad, IndexedSlices):  # rows not looked up keep both accumulators
            return var.graph.op("SparseApplyAdadelta", slots + [grad.values, grad.indices],
                                attrs)
        return var.graph.op("ApplyAdadelta", slots + [grad], attrs)


def _decay_args(where, learning_rate, decay_steps, decay_rate=None):
    learning_rate = _rate(learning_rate, where)
    decay_steps = _number(decay_steps, f"{where}: decay_steps", lo=0.0, lo_open=True)
    if decay_rate is not None:
        decay_rate = _number(decay_rate, f"{where}: decay_rate", lo=0.0)
    return learning_rate, decay_steps, decay_rate


def _progress(where, global_step, decay_steps, staircase):
    """step / decay_steps as a float32 tensor, floored with staircase.

    Raises:
        TypeError: staircase is not a bool.
    """
    staircase = api._bool_arg(staircase, f"{where}: staircase")
    p = _step_float(global_step) / decay_steps
    return api.floor(p) if staircase else p


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """(lr - end) * (1 - step / decay_steps) ^ power + end, with step held at
    decay_steps afterwards; cycle=True stretches decay_steps to the next multiple of
    itself above step instead (tf.train.polynomial_decay).

    Raises:
        TypeError: an argument is not a number (learning_rate may also be a
            floating-point tensor; the result then has its dtype), or cycle not a bool.
        ValueError: learning_rate negative, decay_steps not > 0, or one is NaN or inf.
    """
    learning_rate, decay_steps, _ = _decay_args("polynomial_decay", learning_rate,
                                                decay_steps)
    end = _number(end_learning_rate, "polynomial_decay: end_learning_rate")
    power = _number(power, "polynomial_decay: power")
    cycle = api._bool_arg(cycle, "polynomial_decay: cycle")
    step = _step_float(global_step)
    if cycle:
        # TF1: multiplier 1 at step 0, so decay_steps stays itself there
        times = api.maximum(api.ceil(step / decay_steps), _f32(1.0, step))
        span = times * decay_steps
    else:
        span = _f32(decay_steps, step)
        step = api.minimum(step, span)
    fraction = 1.0 - step / span
    decayed = api.pow(fraction, _f32(power, step))
    if isinstance(learning_rate, Tensor):
        # (lr - end) * decayed + end in the rate's dtype
        if learning_rate.dtype != decayed.dtype:
            decayed = api.cast(decayed, learning_rate.dtype)
        end_t = learning_rate.graph.constant(np.asarray(end, learning_rate.dtype.numpy))
        return api.add(decayed * (learning_rate - end_t), end_t, name=name)
    return api.add(decayed * (learning_rate - end), end, name=name)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """lr * exp(-decay_rate * step / decay_steps) (floor of the ratio with staircase)
    (tf.train.natural_exp_decay).

    Raises:
        TypeError: an argument is not a number (learning_rate may also be a
            floating-point tensor; the result then has its dtype), or staircase not a
            bool.
        ValueError: learning_rate or decay_rate negative, decay_steps not > 0.
    """
    learning_rate, decay_steps, decay_rate = _decay_args(
        "natural_exp_decay", learning_rate, decay_steps, decay_rate)
    p = _progress("natural_exp_decay", global_step, decay_steps, staircase)
    return _times_rate(api.exp(p * -decay_rate), learning_rate, name)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """lr / (1 + decay_rate * step / decay_steps) (floor of the ratio with staircase)
    (tf.train.inverse_time_decay).

    Raises:
        TypeError: an argument is not a number (learning_rate may also be a
            floating-point tensor; the result then has its dtype), or staircase not a
            bool.
        ValueError: learning_rate or decay_rate negative, decay_steps not > 0.
    """
    learning_rate, decay_steps, decay_rate = _decay_args(
        "inverse_time_decay", learning_rate, decay_steps, decay_rate)
    p = _progress("inverse_time_decay", global_step, decay_steps, staircase)
    if isinstance(learning_rate, Tensor):
        denominator = p * decay_rate + 1.0
        if learning_rate.dtype != denominator.dtype:
            denominator = api.cast(denominator, learning_rate.dtype)
        return api.divide(learning_rate, denominator, name=name)
    return api.divide(_f32(learning_rate, p), p * decay_rate + 1.0, name=name)


__all__ = ["AdadeltaOptimizer", "AdagradOptimizer", "MomentumOptimizer", "RMSPropOptimizer",
           "inverse_time_decay", "natural_exp_decay", "polynomial_decay"]
