"""og.nn.rnn_cell: TF1's tf.nn.rnn_cell namespace of cells and wrappers."""

from .nn import LSTMCell, LSTMStateTuple
from .rnn import BasicRNNCell, DropoutWrapper, GRUCell, MultiRNNCell


class BasicLSTMCell(LSTMCell):
    """TF1's BasicLSTMCell: LSTMCell's gates, variables under "basic_lstm_cell".

    Raises:
        TypeError: state_is_tuple is not True (TF1's concatenated state is not
            supported), or as LSTMCell.
    """

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None):
        if state_is_tuple is not True:
            raise TypeError("BasicLSTMCell: only state_is_tuple=True is supported")
        super().__init__(num_units, forget_bias=forget_bias, activation=activation,
                         name=name or "basic_lstm_cell")


__all__ = ["BasicLSTMCell", "BasicRNNCell", "DropoutWrapper", "GRUCell", "LSTMCell",
           "LSTMStateTuple", "MultiRNNCell"]
