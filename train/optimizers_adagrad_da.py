"""TF1's AdagradDAOptimizer: Adagrad dual averaging (Duchi et al. 2011), with TF1's
arguments, slot names and the math of TF's ApplyAdagradDA / SparseApplyAdagradDA
kernels, built from ordinary graph ops as the other composed optimizers
(optimizers_ftrl.py's module doc says what that gives and gives up).

Slots: "gradient_accumulator" (variable "w/AdagradDA", starting at 0) and
"gradient_squared_accumulator" ("w/AdagradDA_1", starting at
initial_gradient_squared_accumulator_value).
"""

from __future__ import annotations

import numpy as np

from . import api
from . import graph as _g
from .optimizers import _check_locking, _number
from .optimizers_ftrl import _Composed, _as_dtype, _const, _positive_rate, _tf_number
from .variables import Variable


class AdagradDAOptimizer(_Composed):
    """TF1's AdagradDAOptimizer. With g the gradient accumulator, gg the squared one and
    T = global_step + 1 (TF1 reads the step before this update's increment and adds 1):

        g += grad
        gg += grad^2
        var = -lr * sign(g) * max(|g| - l1 * T, 0) / (l2 * T * lr + sqrt(gg))  (l1 > 0)
        var = -lr * g / (l2 * T * lr + sqrt(gg))                              (l1 = 0)

    The variable is recomputed from the accumulators alone (dual averaging), so its
    initial value matters only until the first step. `global_step` is required, as in
    TF1: pass the same one to minimize() for T to advance. A sparse gradient updates
    the rows it touches only (repeated indices summed first).

    Raises:
        TypeError: a hyper-parameter is not a number, use_locking is not a bool, name is
            not a non-empty str, or global_step is not a Variable or tensor.
        ValueError: initial_gradient_squared_accumulator_value is not > 0 (TF1's check),
            learning_rate (a number) is not > 0, or a regularization strength is
            negative, NaN or infinite.
    """

    def __init__(self, learning_rate, global_step,
                 initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="AdagradDA"):
        cls = "AdagradDAOptimizer"
        _check_locking(use_locking, cls)
        _positive_rate(learning_rate, cls)
        if not (isinstance(global_step, Variable) or _g._is_symbolic(global_step)):
            raise TypeError(f"{cls}: global_step must be the global step Variable (or an "
                            f"integer tensor), got {type(global_step).__name__}")
        super().__init__(learning_rate, name=name)
        value = initial_gradient_squared_accumulator_value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
            # TF1's own check and words
            raise ValueError("initial_gradient_squared_accumulator_value must be positive: "
                             f"{value}")
        self.initial_gradient_squared_accumulator_value = _number(
            value, f"{cls}: initial_gradient_squared_accumulator_value", lo=0.0, lo_open=True)
        self.l1 = _number(l1_regularization_strength, f"{cls}: l1_regularization_strength",
                          lo=0.0)
        self.l2 = _number(l2_regularization_strength, f"{cls}: l2_regularization_strength",
                          lo=0.0)
        self._global_step = global_step

    def _slot_list(self, var):
        return [self._slot_named(var, "gradient_accumulator", 0.0, self.name),
                self._slot_named(var, "gradient_squared_accumulator",
                                 self.initial_gradient_squared_accumulator_value, self.name)]

    def _hyper(self, lr, var):
        step = self._global_step
        step = step.read_value() if isinstance(step, Variable) else _g.convert_to_tensor(step)
        step = api.cast(step, api.int64) + var.graph.constant(np.int64(1))
        return _as_dtype(step, var)

    def _new_values(self, grad, values, lr, step):
        v, accum, squared = values
        accum_new = accum + grad
        squared_new = squared + grad * grad
        # TF1 casts the strengths from float32 tensors to the variable's dtype
        l1, l2 = _tf_number(self.l1, v), _tf_number(self.l2, v)
        denominator = l2 * (step * lr) + api.sqrt(squared_new)
        minus_one = _const(-1.0, v)
        if self.l1 > 0:
            shrunk = api.maximum(api.abs(accum_new) - step * l1, api.zeros_like(accum_new))
            var_new = lr * minus_one * api.sign(accum_new) * shrunk / denominator
        else:
            var_new = lr * accum_new * minus_one / denominator
        return [var_new, accum_new, squared_new]
