"""Optimizers as subgraphs over Variables, gradient clipping, and learning-rate schedules.

An optimizer adds, per trainable variable, its slot variables (momentum, Adam's
moments, ...) and one fused update node (ApplyGradientDescent, ApplyAdam, ...) that
reads the gradient tensor and updates the variable and its slots under the variable's
lock. `minimize(loss)` returns one train op that runs every update and the graph's
UPDATE_OPS (e.g. batch-norm moving averages); as in TF1, it increments a global step
only when one is passed (`minimize(loss, global_step=og.train.get_or_create_global_step())`).
Learning rates may be floats, tensors, or schedules built with the functions below,
which compute the rate from the global step inside the graph.

Slot variables of the Keras-style optimizers (SGD, Momentum, AdaGrad, RMSProp, Adam,
AdamW) are named "<var>/<optimizer name>/<slot>" ("w/Adam/m", and Adam's step counter
"Adam/t"); those of TF1's (GradientDescentOptimizer, AdamOptimizer and the ones in
optimizers_tf1) have TF1's names, so checkpoints keyed by TF1 names line up:
"<var>/<optimizer name>" then "<var>/<optimizer name>_1", ... in TF1's creation order
("w/Adam" is m and "w/Adam_1" v; AdamOptimizer's "beta1_power" and "beta2_power").
`get_slot(var, name)` takes TF1's slot names ("m", "v", "momentum", ...) for both.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..errors import OneGraphError, ShapeError
from . import api
from . import graph as _g
from .gradients import IndexedSlices, check_aggregation_method, dense, gradients
from .graph import Operation, Tensor
from .variables import Variable, get_or_create_global_step, trainable_variables


# --------------------------------------------------------------------------- clipping

def _safe_sqrt(sum_sq: Tensor) -> Tensor:
    """sqrt of a sum of squares whose gradient is 0, not NaN, where the sum is 0 (TF1's
    clip_by_norm does the same): d sqrt(s) / ds is infinite at 0, times ds = 0."""
    positive = api.greater(sum_sq, 0.0)
    safe = api.where(positive, sum_sq, api.ones_like(sum_sq))
    return api.where(positive, api.sqrt(safe), sum_sq)


def global_norm(tensors: Sequence, name=None) -> Tensor:
    """sqrt(sum of squares of every element of every tensor); Nones are skipped. A
    sparse gradient (IndexedSlices) counts its values, as in TF1 (with repeated
    indices this is not the norm of the dense gradient). TF1's signature
    (`tf.global_norm(t_list, name=None)`).

    Raises:
        OneGraphError: every tensor is None.
        TypeError: name is not a str.
    """
    _g.check_name(name, "global_norm")
    parts = [api.reduce_sum(api.square(dense(t) if not isinstance(t, IndexedSlices)
                                       else t.values)) for t in tensors if t is not None]
    if not parts:
        raise OneGraphError("global_norm: every tensor is None")
    total = _safe_sqrt(api.add_n(parts))
    return total if name is None else api.identity(total, name=name)


def clip_by_norm(t, clip_norm, axes=None, name=None) -> Tensor:
    """t scaled down so its L2 norm (over `axes`, default all) is at most clip_norm,
    unchanged where already smaller; TF1's signature (`tf.clip_by_norm(t, clip_norm,
    axes=None, name=None)`).

    Raises:
        TypeError: name is not a str, or axes is not an int or a list of ints.
        ShapeError: an axis is out of range.
    """
    _g.check_name(name, "clip_by_norm")
    t = _g.convert_to_tensor(dense(t))
    if axes is None:
        sum_sq = api.reduce_sum(api.square(t))
    else:
        sum_sq = api.reduce_sum(api.square(t), axis=axes, keepdims=True)
    norm = _safe_sqrt(sum_sq)
    c = _g.convert_to_tensor(clip_norm, t.dtype, t.graph)
    return api.multiply(t, c / api.maximum(norm, c), name=name)


def clip_by_global_norm(tensors: Sequence, clip_norm, use_norm=None,
                        name=None) -> tuple[list, Tensor]:
    """Scale every tensor by clip_norm / max(global_norm, clip_norm). An infinite
    global norm makes every entry NaN (as TF1 documents), so an overflow shows instead
    of silently zeroing the other gradients. TF1's signature: `use_norm` is a global
    norm already computed (used instead of computing it), `name` names the norm.

    Returns:
        (clipped tensors, the global norm before clipping); Nones stay None.

    Raises:
        OneGraphError: every tensor is None.
        TypeError: name is not a str.
    """
    _g.check_name(name, "clip_by_global_norm")
    norm = global_norm(tensors, name=name) if use_norm is None else \
        _g.convert_to_tensor(use_norm)
    c = _g.convert_to_tensor(clip_norm, norm.dtype, norm.graph)
    scale = c / api.maximum(norm, c) + (norm - norm)  # inf - inf = NaN
    out = []
    for t in tensors:
        if t is None:
            out.append(None)
        elif isinstance(t, IndexedSlices):
            out.append(IndexedSlices(t.values * scale, t.indices, t.like))
        else:
            out.append(t * scale)
    return out, norm


# --------------------------------------------------------------------------- checks

def _number(value, what: str, lo: float | None = None, hi: float | None = None,
            lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite real hyper-parameter (a Python or numpy number, not a bool) within
    [lo, hi] (or the open ends asked for), as a float.

    Raises:
        TypeError: value is not a number (names `what`).
        ValueError: it is NaN or infinite, or outside the range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                      np.floating)):
        raise TypeError(f"{what} must be a number, got {type(value).__name__} "
                        f"{_g._brief(value)}")
    try:
        v = float(value)
    except OverflowError:
        v = math.inf if value > 0 else -math.inf
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {value!r}")
    if lo is not None and (v < lo or (lo_open and v == lo)) or \
            hi is not None and (v > hi or (hi_open and v == hi)):
        rng = (f"{'(' if lo_open else '['}{'-inf' if lo is None else lo}, "
               f"{'inf' if hi is None else hi}{')' if hi_open else ']'}")
        raise ValueError(f"{what} must be in {rng}, got {value!r}")
    return v


def _check_learning_rate(lr, what: str):
    """A learning rate: a number >= 0 (Keras's rule), a tensor or Variable, or a
    callable schedule `f(global_step)`.

    Raises:
        TypeError: it is none of these (None, a str, a bool, ...).
        ValueError: a number that is NaN, infinite or negative.
    """
    if _g._is_symbolic(lr) or callable(lr):
        return lr
    _number(lr, what, lo=0.0)
    return lr


# --------------------------------------------------------------------------- schedules

def _step(global_step) -> Tensor:
    """The step as a tensor; its graph is where a schedule builds its nodes (the loss's
    graph need not be the default one)."""
    step = global_step if global_step is not None else get_or_create_global_step()
    return _g.convert_to_tensor(step)


def _step_float(global_step) -> Tensor:
    return api.cast(_step(global_step), api.float32)


def _f32(value, like: Tensor) -> Tensor:
    """A float32 constant in `like`'s graph."""
    return like.graph.constant(np.float32(value))


def _rate(learning_rate, where: str):
    """A schedule's learning_rate: a number >= 0 (as a float), or a floating-point
    tensor or Variable (TF1's schedules take either).

    Raises:
        TypeError: it is neither, or a tensor that is not floating point.
        ValueError: a number that is negative, NaN or infinite.
    """
    if _g._is_symbolic(learning_rate):
        t = _g.convert_to_tensor(learning_rate)
        if t.dtype is _g.DType.UNDEFINED or t.dtype.numpy.kind != "f":
            raise TypeError(f"{where}: learning_rate must be a floating-point tensor, got "
                            f"{t.dtype.short_name}")
        return t
    return _number(learning_rate, f"{where}: learning_rate", lo=0.0)


def _times_rate(factor: Tensor, learning_rate, name=None) -> Tensor:
    """learning_rate * factor (a float32 tensor): float32 for a number, the rate's own
    dtype for a tensor (TF1's schedules return the learning rate's dtype; the factor
    is still computed in float32, so a float64 rate's is float32-accurate)."""
    if isinstance(learning_rate, Tensor):
        if learning_rate.dtype != factor.dtype:
            factor = api.cast(factor, learning_rate.dtype)
        return api.multiply(learning_rate, factor, name=name)
    return api.multiply(_f32(learning_rate, factor), factor, name=name)


def exponential_decay(learning_rate, global_step, decay_steps: int, decay_rate: float,
                      staircase: bool = False, name=None) -> Tensor:
    """lr * decay_rate ^ (step / decay_steps), computed in the graph each step
    (tf.train.exponential_decay).

    Args:
        learning_rate: a number, or a floating-point scalar tensor (the result then
            has its dtype).
        staircase: use floor(step / decay_steps) (decay in discrete intervals).
        name: name of the result.

    Raises:
        TypeError: learning_rate, decay_steps or decay_rate is not a number (or a
            tensor for learning_rate), staircase not a bool, or name not a str.
        ValueError: learning_rate or decay_rate is negative, decay_steps is not > 0,
            or one of them is NaN or infinite.
    """
    _g.check_name(name, "exponential_decay")
    learning_rate = _rate(learning_rate, "exponential_decay")
    decay_steps = _number(decay_steps, "exponential_decay: decay_steps", lo=0.0,
                          lo_open=True)
    decay_rate = _number(decay_rate, "exponential_decay: decay_rate", lo=0.0)
    staircase = api._bool_arg(staircase, "exponential_decay: staircase")
    p = _step_float(global_step) / float(decay_steps)
    if staircase:
        p = api.floor(p)
    return _times_rate(api.pow(_f32(decay_rate, p), p), learning_rate, name)


def cosine_decay(learning_rate, global_step, decay_steps: int, alpha: float = 0.0,
                 name=None) -> Tensor:
    """lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)
    (tf.train.cosine_decay; learning_rate may be a floating-point tensor, as there).

    Raises:
        TypeError: learning_rate, decay_steps or alpha is not a number (or a tensor for
            learning_rate), or name not a str.
        ValueError: learning_rate is negative, decay_steps is not > 0, or one of them
            is NaN or infinite.
    """
    _g.check_name(name, "cosine_decay")
    learning_rate = _rate(learning_rate, "cosine_decay")
    decay_steps = _number(decay_steps, "cosine_decay: decay_steps", lo=0.0, lo_open=True)
    alpha = _number(alpha, "cosine_decay: alpha")
    step = _step_float(global_step)
    s = api.minimum(step, _f32(decay_steps, step))
    cos = 0.5 * (1.0 + api.cos(s * float(math.pi / decay_steps)))
    return _times_rate((1.0 - alpha) * cos + float(alpha), learning_rate, name)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0,
                          m_mul=1.0, alpha=0.0, name=None) -> Tensor:
    """Cosine decay with warm restarts (tf.train.cosine_decay_restarts, SGDR): the
    first period lasts first_decay_steps, each next one t_mul times longer and
    m_mul times lower, within it lr * ((1 - alpha) * m * 0.5 * (1 + cos(pi * f)) +
    alpha) at the fraction f of the period done.

    Raises:
        TypeError: an argument is not a number (or a tensor for learning_rate), or name
            not a str.
        ValueError: learning_rate is negative, first_decay_steps is not > 0, t_mul or
            m_mul is not > 0, or one of them is NaN or infinite.
    """
    what = "cosine_decay_restarts"
    _g.check_name(name, what)
    learning_rate = _rate(learning_rate, what)
    first = _number(first_decay_steps, f"{what}: first_decay_steps", lo=0.0, lo_open=True)
    t_mul = _number(t_mul, f"{what}: t_mul", lo=0.0, lo_open=True)
    m_mul = _number(m_mul, f"{what}: m_mul", lo=0.0, lo_open=True)
    alpha = _number(alpha, f"{what}: alpha")
    done = _step_float(global_step) / float(first)
    if t_mul == 1.0:
        restart = api.floor(done)
        done = done - restart
    else:   # periods grow geometrically: which one the step is in, and how far
        restart = api.floor(api.log(1.0 - done * float(1.0 - t_mul))
                            / float(math.log(t_mul)))
        t_pow = api.pow(_f32(t_mul, restart), restart)
        passed = (1.0 - t_pow) / float(1.0 - t_mul)
        done = (done - passed) / t_pow
    m_fac = api.pow(_f32(m_mul, restart), restart)
    cos = 0.5 * m_fac * (1.0 + api.cos(done * float(math.pi)))
    return _times_rate((1.0 - alpha) * cos + float(alpha), learning_rate, name)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5,
                        alpha=0.0, beta=0.001, name=None) -> Tensor:
    """lr * ((alpha + (decay_steps - s) / decay_steps) * 0.5 * (1 + cos(2 pi
    num_periods s / decay_steps)) + beta), s = min(step, decay_steps)
    (tf.train.linear_cosine_decay).

    Raises:
        TypeError: an argument is not a number (or a tensor for learning_rate), or name
            not a str.
        ValueError: learning_rate is negative, decay_steps is not > 0, or one of them is
            NaN or infinite.
    """
    what = "linear_cosine_decay"
    _g.check_name(name, what)
    learning_rate = _rate(learning_rate, what)
    decay_steps = _number(decay_steps, f"{what}: decay_steps", lo=0.0, lo_open=True)
    num_periods = _number(num_periods, f"{what}: num_periods")
    alpha = _number(alpha, f"{what}: alpha")
    beta = _number(beta, f"{what}: beta")
    step = _step_float(global_step)
    s = api.minimum(step, _f32(decay_steps, step))
    linear = (float(decay_steps) - s) / float(decay_steps)
    cos = 0.5 * (1.0 + api.cos(s * float(2.0 * math.pi * num_periods / decay_steps)))
    return _times_rate((linear + float(alpha)) * cos + float(beta), learning_rate, name)


def _piece(value, graph):
    """One value of piecewise_constant as a tensor, TF1's conversion: a Python int is
    int32, a Python float float32, a numpy scalar or a tensor keeps its dtype."""
    if _g._is_symbolic(value):
        return _g.convert_to_tensor(value)
    if isinstance(value, np.generic):   # before float: np.float64 is a float
        return graph.constant(np.asarray(value))
    if isinstance(value, bool):
        return graph.constant(np.bool_(value))
    if isinstance(value, int):
        return graph.constant(np.int32(value) if -2 ** 31 <= value < 2 ** 31
                              else np.int64(value))
    if isinstance(value, float):
        return graph.constant(np.float32(value))
    return graph.constant(np.asarray(value))


def piecewise_constant(global_step, boundaries: Sequence, values: Sequence,
                       name=None) -> Tensor:
    """values[i] while boundaries[i-1] < step <= boundaries[i] (len(values) = len(b) + 1)
    (tf.train.piecewise_constant).

    The result has the values' dtype, as in TF1: Python ints give int32, Python floats
    float32, numpy scalars and tensors their own dtype. Unlike TF1 (which refuses
    values of different dtypes), a mix of Python ints and floats gives float32.

    Raises:
        OneGraphError: the lengths disagree.
        ValueError: the values have different dtypes (TF1's error).
        TypeError: name is not a str.
    """
    _g.check_name(name, "piecewise_constant")
    if len(values) != len(boundaries) + 1:
        raise OneGraphError("piecewise_constant needs len(values) == len(boundaries) + 1")
    step = _step(global_step)
    g = step.graph
    if all(type(v) in (int, float) for v in values) and any(type(v) is float for v in values):
        pieces = [g.constant(np.float32(v)) for v in values]
    else:
        pieces = [_piece(v, g) for v in values]
    dtypes = {t.dtype for t in pieces}
    if len(dtypes) > 1:
        raise ValueError(f"piecewise_constant: values must all have the same dtype, got "
                         f"{sorted(d.short_name for d in dtypes)}")
    out = pieces[-1]
    for b, v in reversed(list(zip(boundaries, pieces[:-1]))):
        out = api.where(api.less_equal(step, g.constant(np.int64(b))
                                       if step.dtype == api.int64 else float(b)),
                        v, out)
    return out if name is None else api.identity(out, name=name)


# --------------------------------------------------------------------------- optimizers

def _check_gate(gate_gradients) -> None:
    """Refuse a gate_gradients value TF does not know.

    Raises:
        ValueError: TF's message.
    """
    if gate_gradients not in (0, 1, 2):
        raise ValueError(f"gate_gradients must be one of: Optimizer.GATE_NONE, "
                         f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not {gate_gradients}")


def _constrained(update, var):
    """The update of `var`, followed by var = var.constraint(var) when the variable has
    a constraint (TF1's optimizers apply it after each variable's update)."""
    constraint = getattr(var, "constraint", None)
    if constraint is None:
        return update
    g = var.graph
    with g.control_dependencies([update]):
        return var.assign(constraint(var.read_value()))


class Optimizer:
    """Base class: gradients, slots, clipping, and the train op.

    Args:
        learning_rate: float >= 0, scalar Tensor, or a callable
            `f(global_step) -> Tensor` (called with the graph's global step, which
            advances only when minimize/apply_gradients is given it as global_step).
        clipvalue: clip each gradient elementwise to [-clipvalue, clipvalue] (>= 0).
        clipnorm: clip each gradient to this L2 norm (> 0).
        global_clipnorm: clip all gradients together to this global norm (> 0).
        name: name scope of the slots and updates.

    Hyper-parameters follow Keras's rules (TF1 checks none): numbers must be finite;
    a negative learning rate or epsilon, a beta outside [0, 1), a momentum or rho
    outside [0, 1] is refused (they train to NaN or diverge).

    Raises:
        TypeError: a hyper-parameter is not a number (None, a str, a bool, ...), or
            name is not a str.
        ValueError: a hyper-parameter is NaN, infinite or out of its range.
    """

    # TF1's slot variable names ("<var>/<name>", "<var>/<name>_1", ...) instead of
    # "<var>/<name>/<slot>": set by the TF1-named optimizers
    _tf1_names = False
    # TF1's gate_gradients values: how much the gradient computation is serialized
    # before updates (onegraph runs steps one after another: no effect on results)
    GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2

    def __init__(self, learning_rate=0.01, clipvalue: float | None = None,
                 clipnorm: float | None = None, global_clipnorm: float | None = None,
                 name: str = "Optimizer"):
        cls = type(self).__name__
        self.learning_rate = _check_learning_rate(learning_rate, f"{cls}: learning_rate")
        if clipvalue is not None:
            _number(clipvalue, f"{cls}: clipvalue", lo=0.0)
        for what, v in (("clipnorm", clipnorm), ("global_clipnorm", global_clipnorm)):
            if v is not None:
                _number(v, f"{cls}: {what}", lo=0.0, lo_open=True)
        if not isinstance(name, str) or not name:
            raise TypeError(f"{cls}: name must be a non-empty str, got {name!r}")
        self.clipvalue, self.clipnorm, self.global_clipnorm = clipvalue, clipnorm, global_clipnorm
        self.name = name
        self._slots: dict[tuple[int, str], Variable] = {}

    # -- pieces -------------------------------------------------------------------------

    def _lr(self, graph) -> Tensor:
        lr = self.learning_rate
        if callable(lr) and not isinstance(lr, Tensor):
            lr = lr(get_or_create_global_step(graph))
        return _g.convert_to_tensor(lr, api.float32, graph)

    def get_name(self) -> str:
        """The optimizer's name (TF1's `get_name`)."""
        return self.name

    def get_slot(self, var: Variable, name: str) -> Variable | None:
        """The slot variable `name` of `var` (e.g. "m", "v", "momentum"), if created."""
        return self._slots.get((id(var), name))

    def get_slot_names(self) -> list:
        """The sorted names of the slots created so far (TF1's `get_slot_names`: empty
        before minimize/apply_gradients), e.g. ["m", "v"] for Adam."""
        return sorted({name for _, name in self._slots})

    def _slot(self, var: Variable, name: str, value: float = 0.0) -> Variable:
        key = (id(var), name)
        if key not in self._slots:
            g = var.graph
            data = np.full(var.shape, value, dtype=var.dtype.numpy)
            # TF1's names: the graph makes "w/Adam" unique as "w/Adam_1", ... in the
            # order the slots are created, as TF1's variable scopes do
            vname = f"{var.name}/{self.name}" if self._tf1_names else \
                f"{var.name}/{self.name}/{name}"
            saved, g._scope = g._scope, []
            try:
                self._slots[key] = Variable(data, trainable=False, graph=g, name=vname)
            finally:
                g._scope = saved
        return self._slots[key]

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None) -> list[tuple]:
        """[(gradient, variable)] for the trainable variables (or var_list), clipped as
        configured; the gradient is None for variables the loss does not depend on.
        TF1's arguments: grad_loss is the gradient of the loss (default ones);
        gate_gradients, aggregation_method and colocate_gradients_with_ops are checked
        as TF checks them and change nothing in onegraph's serial runtime.

        Raises:
            ShapeError: loss is not floating point (an integer loss has no gradient).
            OneGraphError: no variables.
            ValueError: gate_gradients or aggregation_method is not one of TF's values.
        """
        del colocate_gradients_with_ops   # device placement only
        _check_gate(gate_gradients)
        check_aggregation_method(aggregation_method)
        loss = _g.convert_to_tensor(loss)
        if loss.dtype is not _g.DType.UNDEFINED and loss.dtype.numpy.kind != "f":
            raise ShapeError(f"{type(self).__name__}: the loss {loss.name!r} must be "
                             f"floating point, got {loss.dtype.short_name} (og.cast it)")
        var_list = list(var_list) if var_list is not None else trainable_variables(graph=loss.graph)
        if not var_list:
            raise OneGraphError("no variables to optimize")
        grads = gradients(loss, var_list, grad_ys=grad_loss)
        if self.clipvalue is not None:
            c = float(self.clipvalue)
            grads = [None if gr is None else (
                IndexedSlices(api.clip_by_value(gr.values, -c, c), gr.indices, gr.like)
                if isinstance(gr, IndexedSlices) else api.clip_by_value(gr, -c, c))
                for gr in grads]
        if self.clipnorm is not None:
            grads = [None if gr is None else clip_by_norm(gr, float(self.clipnorm))
                     for gr in grads]
        if self.global_clipnorm is not None:
            grads, _ = clip_by_global_norm(grads, float(self.global_clipnorm))
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name: str | None = None
                        ) -> Operation:
        """One op applying every (gradient, variable) update; increments `global_step`
        (a Variable) afterwards when given (TF1's signature and default)."""
        pairs = [(gr, v) for gr, v in grads_and_vars if gr is not None]
        if not pairs:
            raise OneGraphError("no gradients to apply (does the loss depend on the "
                                "variables?)")
        g = pairs[0][1].graph
        self._create_non_slots(g)   # in the caller's name scope, as TF1's
        with g.name_scope(name or self.name):
            lr = self._lr(g)
            shared = self._prepare(g)
            updates = [_constrained(self._apply(gr, v, lr, shared), v) for gr, v in pairs]
            updates += self._finish(g, shared, updates)
        deps = [_g._node_of(u) for u in updates]
        deps += [_g._node_of(u) for u in g.get_collection(_g.UPDATE_OPS)]
        if global_step is not None:
            with g.control_dependencies([Operation(g, d) for d in deps if d is not None]):
                inc = global_step.assign_add(np.array(1, global_step.dtype.numpy))
            return g.op("NoOp", [], name="train", control_inputs=[inc])
        return g.op("NoOp", [], name="train",
                    control_inputs=[Operation(g, d) for d in deps if d is not None])

    def minimize(self, loss, var_list=None, global_step=None, name: str | None = None,
                 gate_gradients=GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, grad_loss=None) -> Operation:
        """The train op: gradients of `loss` and every update; then global_step += 1
        when a global step is given.

        TF1 orders the arguments (loss, global_step, var_list, ...): a Variable or
        tensor given second (where og takes the list var_list) is that global step,
        and a list given third is then var_list, so `opt.minimize(loss, step)` counts
        steps as in TF1. gate_gradients, aggregation_method,
        colocate_gradients_with_ops and grad_loss are compute_gradients'.

        Changed to TF1's default: `global_step=None` neither creates nor increments a
        global step (onegraph used to increment the graph's global step by default).
        Pass `global_step=og.train.get_or_create_global_step()` for the step to count
        the training steps (schedules built on it then advance).

        Args:
            loss: floating-point tensor, usually a scalar (a non-scalar loss is
                differentiated as its sum, as in TF1).
            var_list: variables to train (default: all trainable variables).
            global_step: Variable to increment after the updates (default None: no
                step is created or incremented, as in TF1).

        Returns:
            The train `Operation` (fetch it as a target in `Session.run`).

        Raises:
            OneGraphError: no variables, or the loss depends on none of them.
            ShapeError: the loss is not floating point.
            GradientNotDefinedError: an op between loss and variables has no rule.
            ValueError: gate_gradients or aggregation_method is not one of TF's values.
        """
        if isinstance(var_list, (Variable, Tensor)):   # TF1's positional global_step
            var_list, global_step = global_step, var_list
        loss_t = _g.convert_to_tensor(loss)
        pairs = self.compute_gradients(
            loss_t, var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        return self.apply_gradients(pairs, global_step, name)

    # -- per optimizer ----------------------------------------------------------------

    def _create_non_slots(self, g) -> None:
        """Create the optimizer's variables that belong to no variable (TF1's non-slot
        variables) in the caller's name scope."""

    def _prepare(self, g):
        return None

    def _finish(self, g, shared, updates) -> list:
        """Ops to run after every update of one apply_gradients (and before the global
        step's increment)."""
        return []

    def _apply(self, grad, var, lr, shared):
        raise NotImplementedError


class SGD(Optimizer):
    """Plain gradient descent: var -= lr * grad (sparse gradients update rows only).

    Raises:
        TypeError: learning_rate (or a clip argument) is not a number, tensor or schedule.
        ValueError: learning_rate is negative, NaN or infinite (see `Optimizer`).
    """

    def __init__(self, learning_rate=0.01, name: str = "SGD", **kwargs):
        super().__init__(learning_rate, name=name, **kwargs)

    def _apply(self, grad, var, lr, shared):
        g = var.graph
        if isinstance(grad, IndexedSlices):
            return g.op("SparseApplyGradientDescent", [var.handle, lr, grad.values,
                                                       grad.indices])
        return g.op("ApplyGradientDescent", [var.handle, lr, grad])


def _check_locking(use_locking, cls: str) -> None:
    """TF1's use_locking: accepted (a bool) and without effect, since each variable's
    update holds the variable's lock anyway.

    Raises:
        TypeError: it is not a bool.
    """
    api._bool_arg(use_locking, f"{cls}: use_locking")


class GradientDescentOptimizer(SGD):
    """TF1's GradientDescentOptimizer(learning_rate, use_locking=False,
    name="GradientDescent"): var -= lr * grad (sparse gradients update rows only).
    `use_locking` is accepted and has no effect; og's clip arguments (clipvalue, ...)
    may follow as keywords.

    Raises:
        TypeError: learning_rate is not a number, tensor or schedule, or use_locking
            not a bool.
        ValueError: learning_rate is negative, NaN or infinite.
    """

    _tf1_names = True

    def __init__(self, learning_rate, use_locking=False, name: str = "GradientDescent",
                 **kwargs):
        _check_locking(use_locking, "GradientDescentOptimizer")
        super().__init__(learning_rate, name=name, **kwargs)


class Momentum(Optimizer):
    """Momentum (heavy ball) or Nesterov momentum.

    Args:
        momentum: decay of the accumulated velocity.
        use_nesterov: evaluate the gradient step at the look-ahead point.

    Raises:
        TypeError: momentum is not a number or use_nesterov not a bool (or as `Optimizer`).
        ValueError: momentum is outside [0, 1] (Keras's rule), or as `Optimizer`.
    """

    def __init__(self, learning_rate=0.01, momentum: float = 0.9, use_nesterov: bool = False,
                 name: str = "Momentum", **kwargs):
        super().__init__(learning_rate, name=name, **kwargs)
        self.momentum = _number(momentum, "Momentum: momentum", 0.0, 1.0)
        self.use_nesterov = api._bool_arg(use_nesterov, "Momentum: use_nesterov")

    def _apply(self, grad, var, lr, shared):
        acc = self._slot(var, "momentum")
        g = var.graph
        momentum = g.constant(np.float32(self.momentum))
        attrs = {"use_nesterov": int(self.use_nesterov)}
        if isinstance(grad, IndexedSlices):  # rows not looked up keep their velocity
            return g.op("SparseApplyMomentum", [var.handle, acc.handle, lr, grad.values,
                                                grad.indices, momentum], attrs)
        return g.op("ApplyMomentum", [var.handle, acc.handle, lr, grad, momentum], attrs)


class AdaGrad(Optimizer):
    """AdaGrad: per-coordinate rates from the running sum of squared gradients,
    acc += g^2, var -= lr g / (sqrt(acc) + epsilon).

    epsilon is added outside the square root as in Keras; TF1's AdagradOptimizer has
    none (epsilon=0 gives its update). TF1 refuses initial_accumulator_value <= 0; here
    0 is allowed when epsilon > 0 keeps the division defined, and refused only with
    epsilon = 0, where a coordinate whose gradients are all 0 would get 0 / 0 = NaN.

    Raises:
        TypeError: initial_accumulator_value or epsilon is not a number (or as `Optimizer`).
        ValueError: initial_accumulator_value or epsilon is negative, NaN or infinite,
            or both are 0.
    """

    def __init__(self, learning_rate=0.01, initial_accumulator_value: float = 0.1,
                 epsilon: float = 1e-7, name: str = "AdaGrad", **kwargs):
        super().__init__(learning_rate, name=name, **kwargs)
        self.initial_accumulator_value = _number(
            initial_accumulator_value, "AdaGrad: initial_accumulator_value", lo=0.0)
        self.epsilon = _number(epsilon, "AdaGrad: epsilon", lo=0.0)
        if self.initial_accumulator_value == 0 and self.epsilon == 0:
            raise ValueError("AdaGrad: initial_accumulator_value and epsilon are both 0, "
                             "so a coordinate with a 0 gradient would train to NaN "
                             "(0 / 0); make one of them positive (TF1 needs "
                             "initial_accumulator_value > 0)")

    def _apply(self, grad, var, lr, shared):
        acc = self._slot(var, "accumulator", self.initial_accumulator_value)
        attrs = {"epsilon": self.epsilon}
        if isinstance(grad, IndexedSlices):
            return var.graph.op("SparseApplyAdagrad", [var.handle, acc.handle, lr,
                                                       grad.values, grad.indices], attrs)
        return var.graph.op("ApplyAdagrad", [var.handle, acc.handle, lr, grad], attrs)


class RMSProp(Optimizer):
    """RMSProp with optional momentum, in the TF1/Keras form: ms = rho ms + (1 - rho)
    g^2, mom = momentum mom + lr g / sqrt(ms + epsilon), var -= mom. The mean square
    starts at 0 (Keras; TF1's RMSPropOptimizer starts it at 1) and epsilon sits inside
    the square root (PyTorch adds it outside).

    Raises:
        TypeError: rho, momentum or epsilon is not a number (or as `Optimizer`).
        ValueError: rho or momentum is outside [0, 1], epsilon negative, or one is NaN or infinite.
    """

    def __init__(self, learning_rate=0.001, rho: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-7, name: str = "RMSProp", **kwargs):
        super().__init__(learning_rate, name=name, **kwargs)
        self.rho = _number(rho, "RMSProp: rho", 0.0, 1.0)
        self.momentum = _number(momentum, "RMSProp: momentum", 0.0, 1.0)
        self.epsilon = _number(epsilon, "RMSProp: epsilon", lo=0.0)

    def _apply(self, grad, var, lr, shared):
        ms = self._slot(var, "rms")
        mom = self._slot(var, "momentum")
        attrs = {"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon}
        if isinstance(grad, IndexedSlices):  # rows not looked up keep both slots
            return var.graph.op("SparseApplyRMSProp", [var.handle, ms.handle, mom.handle,
                                                       lr, grad.values, grad.indices], attrs)
        return var.graph.op("ApplyRMSProp", [var.handle, ms.handle, mom.handle, lr, grad],
                            attrs)


class Adam(Optimizer):
    """Adam with bias correction (the optimizer counts its own steps in a variable), in
    the paper's and PyTorch's form: var -= lr m_hat / (sqrt(v_hat) + epsilon).

    TF1's AdamOptimizer (og.train.AdamOptimizer, a separate class) and Keras use
    epsilon "hat" instead: var -= lr_t m / (sqrt(v) + epsilon) with lr_t = lr
    sqrt(1 - beta2^t) / (1 - beta1^t), i.e. epsilon is added before the bias
    correction, which makes it epsilon / sqrt(1 - beta2^t) here (~32 epsilon at step 1
    with beta2 = 0.999). The two agree only while |gradient| is much larger than that
    (3e-7 at step 1 with the default epsilon 1e-8): they differ visibly for small
    gradients even at the default epsilon, and at every step when epsilon is large.

    Raises:
        TypeError: beta1, beta2 or epsilon is not a number (or as `Optimizer`).
        ValueError: beta1 or beta2 is outside [0, 1), epsilon is negative, or one is NaN
            or infinite.
    """

    weight_decay = 0.0

    def __init__(self, learning_rate=0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, name: str = "Adam", **kwargs):
        super().__init__(learning_rate, name=name, **kwargs)
        cls = type(self).__name__
        self.beta1 = _number(beta1, f"{cls}: beta1", 0.0, 1.0, hi_open=True)
        self.beta2 = _number(beta2, f"{cls}: beta2", 0.0, 1.0, hi_open=True)
        self.epsilon = _number(epsilon, f"{cls}: epsilon", lo=0.0)
        self._t: Variable | None = None

    def _prepare(self, g):
        if self._t is None:
            saved, g._scope = g._scope, []
            try:
                self._t = Variable(np.float32(0), trainable=False, graph=g,
                                   name=f"{self.name}/t")
            finally:
                g._scope = saved
        return self._t.assign_add(np.float32(1))

    def _apply(self, grad, var, lr, t):
        m = self._slot(var, "m")
        v = self._slot(var, "v")
        return var.graph.op("ApplyAdam", [var.handle, m.handle, v.handle, lr, t, dense(grad)],
                            {"beta1": self.beta1, "beta2": self.beta2,
                             "epsilon": self.epsilon, "weight_decay": self.weight_decay})


class AdamW(Adam):
    """Adam with decoupled weight decay: var -= lr * weight_decay * var each step.

    Raises:
        TypeError: weight_decay is not a number (or as `Adam`).
        ValueError: weight_decay is negative, NaN or infinite (or as `Adam`).
    """

    def __init__(self, learning_rate=0.001, weight_decay: float = 0.01, name: str = "AdamW",
                 **kwargs):
        super().__init__(learning_rate, name=name, **kwargs)
        self.weight_decay = _number(weight_decay, "AdamW: weight_decay", lo=0.0)


class AdamOptimizer(Adam):
    """TF1's AdamOptimizer(learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08,
    use_locking=False, name="Adam"), with TF1's update (the epsilon "hat" form, unlike
    og.train.Adam): at step t,

        lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
        m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
        var -= lr_t * m / (sqrt(v) + epsilon)

    beta1^t and beta2^t live in the non-slot variables "beta1_power" and "beta2_power"
    (created in the name scope minimize/apply_gradients is called in, one pair per
    graph, multiplied by beta1 and beta2 after each apply), and the slots m and v in
    "<var>/Adam" and "<var>/Adam_1", TF1's names. A sparse gradient (IndexedSlices)
    updates every row, with its repeated indices summed, as TF1's (the moments of rows
    not looked up decay). `use_locking` is accepted and has no effect; og's clip
    arguments (clipvalue, ...) may follow as keywords.

    Raises:
        TypeError: a hyper-parameter is not a number, or use_locking not a bool.
        ValueError: beta1 or beta2 is outside [0, 1), epsilon or learning_rate
            negative, or one is NaN or infinite (Keras's checks, as og.train.Adam).
    """

    _tf1_names = True

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name: str = "Adam", **kwargs):
        _check_locking(use_locking, "AdamOptimizer")
        super().__init__(learning_rate, beta1, beta2, epsilon, name=name, **kwargs)
        self._powers: dict[int, tuple] = {}   # id(graph) -> (graph, beta1_power, beta2_power)

    def _create_non_slots(self, g) -> None:
        if id(g) in self._powers and self._powers[id(g)][0] is g:
            return
        made = [Variable(np.float32(beta), trainable=False, graph=g, name=name)
                for beta, name in ((self.beta1, "beta1_power"), (self.beta2, "beta2_power"))]
        self._powers[id(g)] = (g, *made)

    def _prepare(self, g):
        _, beta1_power, beta2_power = self._powers[id(g)]
        return beta1_power, beta2_power

    def _apply(self, grad, var, lr, powers):
        m = self._slot(var, "m")
        v = self._slot(var, "v")
        beta1_power, beta2_power = powers
        return var.graph.op("ApplyAdamTF1", [var.handle, m.handle, v.handle,
                                             beta1_power.value(), beta2_power.value(), lr,
                                             dense(grad)],
                            {"beta1": self.beta1, "beta2": self.beta2,
                             "epsilon": self.epsilon})

    def _finish(self, g, powers, updates) -> list:
        beta1_power, beta2_power = powers
        with g.control_dependencies([Operation(g, d) for d in map(_g._node_of, updates)
                                     if d is not None]):
            return [beta1_power.assign(beta1_power.value() * np.float32(self.beta1)),
                    beta2_power.assign(beta2_power.value() * np.float32(self.beta2))]
