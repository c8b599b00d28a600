"""TF1's recurrent networks: og.nn.dynamic_rnn and bidirectional_dynamic_rnn over a
cell, the cells BasicRNNCell and GRUCell next to og.nn.LSTMCell, and the MultiRNNCell
and DropoutWrapper combinators (tf.nn.rnn_cell's).

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
from .nn import (LSTMCell, LSTMStateTuple, _positive_int, _scope_or, _zeros,
                 glorot_uniform)


class _Cell:
    """A cell whose state is one (batch, num_units) tensor; subclasses give `_step`."""

    def __init__(self, num_units, activation=None, name: str = "rnn_cell",
                 kernel_initializer=None, bias_initializer=None):
        self.num_units = _positive_int(num_units, f"{type(self).__name__}: num_units")
        for what, fn in (("activation", activation),
                         ("kernel_initializer", kernel_initializer),
                         ("bias_initializer", bias_initializer)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{type(self).__name__}: {what} must be a function or "
                                f"None, got {type(fn).__name__}")
        _g.check_name(name, type(self).__name__)
        self.activation = activation or api.tanh
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
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
                                              self.kernel_initializer
                                              or _scope_or(kernel_init))
                        initial = self.bias_initializer or (_zeros if bias == 0 else (
                            lambda shape, dtype, v=bias: np.full(shape, v, dtype.numpy)))
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
        TypeError: num_units is not a positive int, activation or an initializer not
            callable, or name not a str.
    """

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None):
        super().__init__(num_units, activation, name or "basic_rnn_cell")

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
        TypeError: num_units is not a positive int, activation or an initializer not
            callable, or name not a str.
    """

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None):
        super().__init__(num_units, activation, name or "gru_cell", kernel_initializer,
                         bias_initializer)

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


def _leaves(state) -> list:
    """The tensors of a (nested) state, depth first."""
    if isinstance(state, (tuple, list)):
        return [leaf for part in state for leaf in _leaves(part)]
    return [state]


def _packed(structure, leaves: list):
    """`leaves` in the nesting of `structure` (tuples for tuples and lists)."""
    it = iter(leaves)

    def build(part):
        if isinstance(part, (tuple, list)):
            parts = [build(p) for p in part]
            # a namedtuple (LSTMStateTuple) keeps its type, so .c / .h still work
            return type(part)(*parts) if hasattr(part, "_fields") else tuple(parts)
        return next(it)
    return build(structure)


def _is_cell(cell) -> bool:
    return callable(cell) and hasattr(cell, "zero_state") and hasattr(cell, "state_size")


def _check_cell(cell, what: str) -> None:
    if not _is_cell(cell):
        raise TypeError(f"{what}: cell must be an og.nn RNN cell (LSTMCell, GRUCell, "
                        f"BasicRNNCell, MultiRNNCell, DropoutWrapper), got "
                        f"{type(cell).__name__}")


def _sequence_lengths(sequence_length, g, what: str):
    if sequence_length is None:
        return None
    length = api.cast(_g.integer_tensor(sequence_length, f"{what}: sequence_length", g),
                      DType.INT64)
    if length.shape is not None and len(length.shape) != 1:
        raise ShapeError(f"{what}: sequence_length must be 1-D (batch,), got shape "
                         f"{list(length.shape)}")
    return length


def _sequences(inputs, what: str) -> Tensor:
    x = _g.convert_to_tensor(inputs)
    if x.shape is None or len(x.shape) != 3 or x.shape[-1] is None:
        raise ShapeError(f"{what}: inputs must be 3-D with a known feature dim, got "
                         f"shape {x.shape}")
    return x


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False,
                scope=None) -> tuple:
    """Run `cell` along the time axis of `inputs` (TF1's tf.nn.dynamic_rnn): returns
    (outputs, final state), outputs (batch, time, units) (time-major with
    time_major=True). With `sequence_length` (batch,), an example's state stops
    changing after its length and its later outputs are 0. `initial_state` defaults
    to the cell's zero state (of `dtype`, or the inputs' dtype); states may nest
    (MultiRNNCell's tuple of its cells' states).

    Raises:
        ShapeError: inputs are not 3-D with a known feature dim, or sequence_length is
            not 1-D.
        TypeError: cell is not an og.nn RNN cell, or scope is not a str.
    """
    _check_cell(cell, "dynamic_rnn")
    _g.check_name(scope, "dynamic_rnn")
    x = _sequences(inputs, "dynamic_rnn")
    g = x.graph
    from .variable_scope import variable_scope

    # a variable scope, as TF1's: the cell's variables are "rnn/<cell>/kernel", ...
    with g.as_default(), variable_scope(scope or "rnn"):
        steps = x if time_major else api.transpose(x, [1, 0, 2])   # (time, batch, in)
        batch = g.op("Shape", [steps], {"start": 1, "end": 2})
        if initial_state is None:
            initial_state = cell.zero_state(api.reshape(batch, []), dtype or x.dtype)
        structure = initial_state
        leaves = [_g.convert_to_tensor(s) for s in _leaves(initial_state)]
        length = _sequence_lengths(sequence_length, g, "dynamic_rnn")
        n = api.reshape(g.op("Shape", [steps], {"start": 0, "end": 1}), [])

        def body(t, outputs, state):
            out, new = cell(api.gather(steps, t), _packed(structure, list(state)))
            new = _leaves(new)
            if length is not None:
                running = api.expand_dims(api.less(t, length), 1)
                new = [api.where(running, v, s) for v, s in zip(new, state)]
                out = api.where(running, out, api.zeros_like(out))
            return [t + np.int64(1), _accumulate(outputs, t, out, n), new]

        _, written, final = while_loop(
            lambda t, outputs, state: api.less(t, n), body,
            [api.constant(np.int64(0)), g.op("AccumulatorNew", []), leaves],
            shape_invariants=[(), None, [v.shape for v in leaves]], name="while")
        outputs = _stack_rows(g, written, _output_like(cell, leaves[0]), n)
        # zero steps stack no rows, so the batch size comes from the input: (0, B, U)
        outputs = api.reshape(outputs, [n, api.reshape(batch, []), cell.output_size])
        if not time_major:
            outputs = api.transpose(outputs, [1, 0, 2])
    return outputs, _packed(structure, final)


def _output_like(cell, leaf: Tensor) -> Tensor:
    """A (batch, output_size) zeros tensor telling `_stack_rows` the output's row
    shape and dtype (a state leaf when the sizes agree)."""
    size = getattr(cell, "output_size", None)
    if leaf.shape is not None and len(leaf.shape) == 2 and leaf.shape[1] == size:
        return leaf
    batch = leaf.graph.op("Shape", [leaf], {"start": 0, "end": 1})
    return _zeros_for(api.reshape(batch, []), size, leaf.dtype)


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False,
                              time_major=False, scope=None) -> tuple:
    """TF1's tf.nn.bidirectional_dynamic_rnn: cell_fw runs over inputs and cell_bw over
    each example's first sequence_length steps reversed (all steps without
    sequence_length), its outputs reversed back; returns ((outputs_fw, outputs_bw),
    (state_fw, state_bw)). Variables live under "<scope or bidirectional_rnn>/fw" and
    ".../bw".

    Raises:
        ShapeError / TypeError: as dynamic_rnn.
    """
    _check_cell(cell_fw, "bidirectional_dynamic_rnn: cell_fw")
    _check_cell(cell_bw, "bidirectional_dynamic_rnn: cell_bw")
    _g.check_name(scope, "bidirectional_dynamic_rnn")
    x = _sequences(inputs, "bidirectional_dynamic_rnn")
    g = x.graph
    from .api_extra import reverse_sequence
    from .api_math import reverse
    from .variable_scope import variable_scope

    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def backwards(t):
        if sequence_length is None:
            return reverse(t, [time_axis])
        return reverse_sequence(t, sequence_length, seq_axis=time_axis,
                                batch_axis=batch_axis)

    with g.as_default(), variable_scope(scope or "bidirectional_rnn"):
        out_fw, state_fw = dynamic_rnn(cell_fw, x, sequence_length, initial_state_fw,
                                       dtype, time_major=time_major, scope="fw")
        out_bw, state_bw = dynamic_rnn(cell_bw, backwards(x), sequence_length,
                                       initial_state_bw, dtype, time_major=time_major,
                                       scope="bw")
        out_bw = backwards(out_bw)
    return (out_fw, out_bw), (state_fw, state_bw)


class MultiRNNCell:
    """TF1's MultiRNNCell: `cells` run one after another in each step, each on the
    previous one's output; the state is the tuple of their states. Cell i's variables
    live under "multi_rnn_cell/cell_<i>/".

    Raises:
        TypeError: cells is not a non-empty list of og.nn RNN cells, or
            state_is_tuple is False (TF1's concatenated states are not supported).
    """

    def __init__(self, cells, state_is_tuple=True):
        if not isinstance(cells, (list, tuple)) or not cells:
            raise TypeError("MultiRNNCell: cells must be a non-empty list of cells")
        for k, c in enumerate(cells):
            _check_cell(c, f"MultiRNNCell: cells[{k}]")
        if state_is_tuple is not True:
            raise TypeError("MultiRNNCell: only state_is_tuple=True is supported (TF1 "
                            "deprecates the concatenated state)")
        self.cells = list(cells)

    @property
    def state_size(self) -> tuple:
        return tuple(c.state_size for c in self.cells)

    @property
    def output_size(self) -> int:
        return self.cells[-1].output_size

    def zero_state(self, batch_size, dtype=np.float32) -> tuple:
        """The tuple of each cell's zero state."""
        return tuple(c.zero_state(batch_size, dtype) for c in self.cells)

    def __call__(self, x, state):
        from .variable_scope import variable_scope

        if not isinstance(state, (tuple, list)) or len(state) != len(self.cells):
            raise ShapeError(f"MultiRNNCell: state must be a tuple of {len(self.cells)} "
                             "cell states")
        x = _g.convert_to_tensor(x)
        new = []
        with x.graph.as_default(), variable_scope("multi_rnn_cell"):
            for k, (cell, s) in enumerate(zip(self.cells, state)):
                with variable_scope(f"cell_{k}"):
                    x, s = cell(x, s)
                new.append(s)
        return x, tuple(new)


class DropoutWrapper:
    """TF1's DropoutWrapper: dropout on a cell's inputs, outputs and state, each kept
    with its probability (a number in (0, 1], or a float scalar tensor such as a
    keep_prob placeholder); 1.0 adds nothing. As TF1's default, an LSTM state drops
    only its h, never its c. Masks are drawn anew at every step.

    Raises:
        TypeError: cell is not an og.nn RNN cell, or a probability is neither a number
            nor a tensor.
        ValueError: a numeric probability is outside (0, 1].
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0,
                 state_keep_prob=1.0, variational_recurrent=False, input_size=None,
                 dtype=None, seed=None, dropout_state_filter_visitor=None):
        _check_cell(cell, "DropoutWrapper")
        if variational_recurrent or dropout_state_filter_visitor is not None:
            raise TypeError("DropoutWrapper: variational_recurrent and "
                            "dropout_state_filter_visitor are not supported")
        self.cell = cell
        self.keep = {}
        for key, p in (("input", input_keep_prob), ("output", output_keep_prob),
                       ("state", state_keep_prob)):
            if not _g._is_symbolic(p):
                if isinstance(p, bool) or not isinstance(p, (int, float, np.number)):
                    raise TypeError(f"DropoutWrapper: {key}_keep_prob must be a number or "
                                    f"a tensor, got {p!r:.40}")
                if not 0.0 < float(p) <= 1.0:
                    raise ValueError(f"DropoutWrapper: {key}_keep_prob must be in (0, 1], "
                                     f"got {p}")
                p = float(p)
            self.keep[key] = p

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self) -> int:
        return self.cell.output_size

    def zero_state(self, batch_size, dtype=np.float32):
        """The wrapped cell's zero state."""
        return self.cell.zero_state(batch_size, dtype)

    def _drop(self, t: Tensor, key: str) -> Tensor:
        from .nn import dropout

        p = self.keep[key]
        if not _g._is_symbolic(p) and p == 1.0:
            return t
        rate = 1.0 - p if not _g._is_symbolic(p) else 1.0 - api.cast(p, t.dtype)
        return dropout(t, rate=rate)

    def _drop_state(self, cell, state):
        if isinstance(cell, DropoutWrapper):
            return self._drop_state(cell.cell, state)
        if isinstance(cell, MultiRNNCell):
            return tuple(self._drop_state(c, s) for c, s in zip(cell.cells, state))
        if isinstance(cell, LSTMCell):
            c, h = state
            return LSTMStateTuple(c, self._drop(h, "state"))
        return self._drop(state, "state")

    def __call__(self, x, state):
        out, new = self.cell(self._drop(_g.convert_to_tensor(x), "input"), state)
        return self._drop(out, "output"), self._drop_state(self.cell, new)


__all__ = ["BasicRNNCell", "DropoutWrapper", "GRUCell", "MultiRNNCell",
           "bidirectional_dynamic_rnn", "dynamic_rnn"]
