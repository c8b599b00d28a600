"""TF1's recurrent networks: og.nn.dynamic_rnn over a cell, and the cells BasicRNNCell
and GRUCell next to og.nn.LSTMCell (tf.nn.rnn_cell's).

dynamic_rnn runs the cell along the time axis in an og.while_loop that writes each
step's output into an accumulator (as og.scan does), so one graph handles any sequence
length, its gradient is the loop's, and it exports to ONNX as a Loop (opset 14 or
later). With `sequence_length`, steps past an example's length leave its state
as it was and output zeros, as TF1's.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..format import DType
from . import api
from . import graph as _g
from .api_extra import fill
from .control_flow import _accumulate, _stack_rows, while_loop
from .graph import Tensor
from .nn import LSTMCell, _positive_int, _scope_or, _zeros, glorot_uniform


class _Cell:
    """A cell whose state is one (batch, num_units) tensor; subclasses give `_step`."""

    def __init__(self, num_units, activation=None, name: str = "rnn_cell"):
        self.num_units = _positive_int(num_units, f"{type(self).__name__}: num_units")
        if activation is not None and not callable(activation):
            raise TypeError(f"{type(self).__name__}: activation must be a function or "
                            f"None, got {type(activation).__name__}")
        _g.check_name(name, type(self).__name__)
        self.activation = activation or api.tanh
        self.name = name
        self._built = False

    @property
    def state_size(self) -> int:
        return self.num_units

    @property
    def output_size(self) -> int:
        return self.num_units

    def zero_state(self, batch_size, dtype=np.float32) -> Tensor:
        """Zeros (batch_size, num_units); batch_size an int or a scalar int tensor."""
        return _zeros_for(batch_size, self.num_units, dtype)

    def _variables(self, x: Tensor, parts) -> list:
        """get_variable for [(scope, rows, cols, bias initial value)], made outside any
        loop frame on the first call, as LSTMCell does."""
        g = x.graph
        from .variable_scope import get_variable, variable_scope

        made = []
        saved_cf, g._cf_stack = g._cf_stack, []
        try:
            with g.as_default(), variable_scope(None, default_name=self.name):
                for scope, rows, cols, bias in parts:
                    def kernel_init(shape, dtype, rows=rows, cols=cols):
                        return glorot_uniform(shape, rows, cols, dtype.numpy, g)
                    with variable_scope(scope) if scope else _no_scope():
                        kernel = get_variable("kernel", [rows, cols], x.dtype,
                                              _scope_or(kernel_init))
                        initial = _zeros if bias == 0 else (
                            lambda shape, dtype, v=bias: np.full(shape, v, dtype.numpy))
                        made.append((kernel, get_variable("bias", [cols], x.dtype, initial)))
        finally:
            g._cf_stack = saved_cf
        return made

    def __call__(self, x, state):
        x = _g.convert_to_tensor(x)
        if x.shape is None or x.shape[-1] is None:
            raise ShapeError(f"{type(self).__name__}: the input feature dim must be known")
        h = state[0] if isinstance(state, (tuple, list)) else state
        out = self._step(x, h)
        return out, out


class _NoScope:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _no_scope():
    return _NoScope()


class BasicRNNCell(_Cell):
    """TF1's BasicRNNCell: h' = activation(concat([x, h]) @ kernel + bias), output h'.

    Raises:
        TypeError: num_units is not a positive int, activation not callable, or name
            not a str.
    """

    def __init__(self, num_units, activation=None, name: str = "basic_rnn_cell"):
        super().__init__(num_units, activation, name)

    def _step(self, x, h):
        if not self._built:
            ((self.kernel, self.bias),) = self._variables(
                x, [(None, x.shape[-1] + self.num_units, self.num_units, 0.0)])
            self._built = True
        return self.activation(api.matmul(api.concat([x, h], axis=1), self.kernel)
                               + self.bias)


class GRUCell(_Cell):
    """TF1's GRUCell: r, u = sigmoid(concat([x, h]) @ gates/kernel + gates/bias) (the
    gate bias starting at 1), c = activation(concat([x, r * h]) @ candidate/kernel +
    candidate/bias), h' = u * h + (1 - u) * c; output h'.

    Raises:
        TypeError: num_units is not a positive int, activation not callable, or name
            not a str.
    """

    def __init__(self, num_units, activation=None, name: str = "gru_cell"):
        super().__init__(num_units, activation, name)

    def _step(self, x, h):
        u_ = self.num_units
        if not self._built:
            rows = x.shape[-1] + u_
            (self.gate_kernel, self.gate_bias), (self.candidate_kernel,
                                                 self.candidate_bias) = self._variables(
                x, [("gates", rows, 2 * u_, 1.0), ("candidate", rows, u_, 0.0)])
            self._built = True
        gates = api.sigmoid(api.matmul(api.concat([x, h], axis=1), self.gate_kernel)
                            + self.gate_bias)
        r, u = api.split(gates, 2, axis=1)
        c = self.activation(api.matmul(api.concat([x, r * h], axis=1),
                                       self.candidate_kernel) + self.candidate_bias)
        return u * h + (1.0 - u) * c


def _zeros_for(batch_size, units: int, dtype) -> Tensor:
    """Zeros (batch, units) for an int batch size or a scalar int tensor."""
    dt = _g.as_dtype(dtype)
    if _g._is_symbolic(batch_size):
        b = api.cast(api.reshape(batch_size, [1]), DType.INT64)
        shape = api.concat([b, api.constant(np.asarray([units], np.int64))], axis=0)
        zeros = fill(shape, np.zeros((), dt.numpy))
        zeros.set_shape((None, units))
        return zeros
    return api.constant(np.zeros((int(batch_size), units), dt.numpy))


def _state_leaves(state) -> list:
    return list(state) if isinstance(state, (tuple, list)) else [state]


def _like_state(cell, leaves):
    return tuple(leaves) if isinstance(cell, LSTMCell) else leaves[0]


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False,
                scope=None) -> tuple:
    """Run `cell` along the time axis of `inputs` (TF1's tf.nn.dynamic_rnn): returns
    (outputs, final state), outputs (batch, time, units) (time-major with
    time_major=True). With `sequence_length` (batch,), an example's state stops
    changing after its length and its later outputs are 0. `initial_state` defaults
    to zeros (then `dtype`, or the inputs' dtype, is its dtype).

    Raises:
        ShapeError: inputs are not 3-D with a known feature dim, or sequence_length is
            not 1-D.
        TypeError: cell is not an og.nn cell (LSTMCell, GRUCell, BasicRNNCell), or
            scope is not a str.
    """
    if not isinstance(cell, (LSTMCell, _Cell)):
        raise TypeError(f"dynamic_rnn: cell must be an og.nn LSTMCell, GRUCell or "
                        f"BasicRNNCell, got {type(cell).__name__}")
    _g.check_name(scope, "dynamic_rnn")
    x = _g.convert_to_tensor(inputs)
    if x.shape is None or len(x.shape) != 3 or x.shape[-1] is None:
        raise ShapeError(f"dynamic_rnn: inputs must be 3-D with a known feature dim, got "
                         f"shape {x.shape}")
    g = x.graph
    from .variable_scope import variable_scope

    # a variable scope, as TF1's: the cell's variables are "rnn/<cell>/kernel", ...
    with g.as_default(), variable_scope(scope or "rnn"):
        steps = x if time_major else api.transpose(x, [1, 0, 2])   # (time, batch, in)
        batch = g.op("Shape", [steps], {"start": 1, "end": 2})
        units = cell.num_units
        if initial_state is None:
            dt = dtype or x.dtype
            zero = _zeros_for(api.reshape(batch, []), units, dt)
            leaves = [zero, zero] if isinstance(cell, LSTMCell) else [zero]
        else:
            leaves = [_g.convert_to_tensor(s) for s in _state_leaves(initial_state)]
        length = None
        if sequence_length is not None:
            length = api.cast(_g.integer_tensor(sequence_length, "dynamic_rnn: "
                                                "sequence_length", g), DType.INT64)
            if length.shape is not None and len(length.shape) != 1:
                raise ShapeError(f"dynamic_rnn: sequence_length must be 1-D (batch,), got "
                                 f"shape {list(length.shape)}")

        n = api.reshape(g.op("Shape", [steps], {"start": 0, "end": 1}), [])

        def body(t, outputs, state):
            out, new = cell(api.gather(steps, t), _like_state(cell, list(state)))
            new = _state_leaves(new)
            if length is not None:
                running = api.expand_dims(api.less(t, length), 1)
                new = [api.where(running, v, s) for v, s in zip(new, state)]
                out = api.where(running, out, api.zeros_like(out))
            return [t + np.int64(1), _accumulate(outputs, t, out, n), new]

        _, written, final = while_loop(
            lambda t, outputs, state: api.less(t, n), body,
            [api.constant(np.int64(0)), g.op("AccumulatorNew", []), leaves],
            shape_invariants=[(), None, [v.shape for v in leaves]], name="while")
        outputs = _stack_rows(g, written, leaves[0], n)   # (time, batch, units)
        if not time_major:
            outputs = api.transpose(outputs, [1, 0, 2])
    return outputs, _like_state(cell, final)


__all__ = ["BasicRNNCell", "GRUCell", "dynamic_rnn"]
