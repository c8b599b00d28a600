"""TF1's unrolled recurrent networks: og.nn.static_rnn and static_bidirectional_rnn.

They run a cell over a Python list of per-step inputs, one copy of the cell's ops per
step (no loop), as tf.nn.static_rnn does: the graph grows with the number of steps,
and every step's output is its own tensor. With `sequence_length`, steps past an
example's length leave its state as it was and output zeros, as in dynamic_rnn
(train/rnn.py); the cells' variables are named as TF1's ("rnn/lstm_cell/kernel",
"bidirectional_rnn/fw/...").
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from . import api
from . import graph as _g
from .rnn import _check_cell, _leaves, _packed, _sequence_lengths


def _step_inputs(inputs, what: str) -> list:
    """The per-step inputs as tensors: a non-empty list or tuple of 2-D (batch,
    features) tensors with a known, common feature dim.

    Raises:
        TypeError: inputs is not a list or tuple.
        ShapeError: it is empty, or a step is not such a tensor.
    """
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(f"{what}: inputs must be a list of (batch, features) tensors, one "
                        f"per step, got {type(inputs).__name__} (for a 3-D tensor use "
                        f"og.nn.dynamic_rnn, or og.unstack it along time)")
    if not inputs:
        raise ShapeError(f"{what}: inputs must hold at least one step")
    steps = [_g.convert_to_tensor(x) for x in inputs]
    first = steps[0].shape
    for t, x in enumerate(steps):
        if x.shape is None or len(x.shape) != 2 or x.shape[-1] is None:
            raise ShapeError(f"{what}: step {t} must be 2-D (batch, features) with a known "
                             f"feature dim, got shape {x.shape}")
        if x.shape[-1] != first[-1]:
            raise ShapeError(f"{what}: step {t} has {x.shape[-1]} features but step 0 "
                             f"has {first[-1]}")
    return steps


def _unrolled(cell, steps: list, initial_state, dtype, sequence_length, what: str):
    """(outputs, final state) of `cell` run over `steps` in the current scope."""
    g = steps[0].graph
    if initial_state is None:
        batch = api.reshape(g.op("Shape", [steps[0]], {"start": 0, "end": 1}), [])
        initial_state = cell.zero_state(batch, dtype or steps[0].dtype)
    structure = initial_state
    state = [_g.convert_to_tensor(s) for s in _leaves(initial_state)]
    length = _sequence_lengths(sequence_length, g, what)
    outputs = []
    for t, x in enumerate(steps):
        out, new = cell(x, _packed(structure, state))
        new = _leaves(new)
        if length is not None:
            running = api.expand_dims(api.less(api.constant(np.int64(t)), length), 1)
            new = [api.where(running, v, s) for v, s in zip(new, state)]
            out = api.where(running, out, api.zeros_like(out))
        outputs.append(out)
        state = new
    return outputs, _packed(structure, state)


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None,
               scope=None) -> tuple:
    """Run `cell` over `inputs`, a list of (batch, features) tensors, one per step
    (TF1's tf.nn.static_rnn): returns (outputs, final state), outputs a list of
    (batch, output_size) tensors. `initial_state` defaults to the cell's zero state
    (of `dtype`, or the inputs' dtype); with `sequence_length` (batch,), an example's
    state stops changing after its length and its later outputs are 0.

    Raises:
        TypeError: cell is not an og.nn RNN cell, inputs is not a list or tuple, or
            scope is not a str.
        ShapeError: inputs is empty, a step is not 2-D with the common feature dim, or
            sequence_length is not 1-D.
    """
    _check_cell(cell, "static_rnn")
    _g.check_name(scope, "static_rnn")
    steps = _step_inputs(inputs, "static_rnn")
    from .variable_scope import variable_scope

    with steps[0].graph.as_default(), variable_scope(scope or "rnn"):
        return _unrolled(cell, steps, initial_state, dtype, sequence_length, "static_rnn")


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None) -> tuple:
    """TF1's tf.nn.static_bidirectional_rnn: cell_fw runs over `inputs` and cell_bw over
    each example's first sequence_length steps reversed (all steps without
    sequence_length); returns (outputs, final state fw, final state bw), each output
    the step's forward and backward outputs concatenated (batch, fw size + bw size).
    Variables live under "<scope or bidirectional_rnn>/fw" and ".../bw".

    Raises:
        TypeError / ShapeError: as static_rnn.
    """
    _check_cell(cell_fw, "static_bidirectional_rnn: cell_fw")
    _check_cell(cell_bw, "static_bidirectional_rnn: cell_bw")
    _g.check_name(scope, "static_bidirectional_rnn")
    steps = _step_inputs(inputs, "static_bidirectional_rnn")
    g = steps[0].graph
    from .api_extra import reverse_sequence
    from .variable_scope import variable_scope

    what = "static_bidirectional_rnn"

    def backwards(sequence: list) -> list:
        if sequence_length is None:
            return sequence[::-1]
        stacked = reverse_sequence(api.stack(sequence, axis=0), sequence_length,
                                   seq_axis=0, batch_axis=1)
        return api.unstack(stacked, num=len(sequence), axis=0)

    with g.as_default(), variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw"):
            out_fw, state_fw = _unrolled(cell_fw, steps, initial_state_fw, dtype,
                                         sequence_length, what)
        with variable_scope("bw"):
            out_bw, state_bw = _unrolled(cell_bw, backwards(steps), initial_state_bw,
                                         dtype, sequence_length, what)
        out_bw = backwards(out_bw)
        outputs = [api.concat([f, b], axis=1) for f, b in zip(out_fw, out_bw)]
    return outputs, state_fw, state_bw
