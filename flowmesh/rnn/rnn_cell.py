"""``tf.nn.rnn_cell`` (also ``tf.compat.v1.nn.rnn_cell``): cells and wrappers."""

from flowmesh.rnn.cell_base import LayerRNNCell, LSTMStateTuple, RNNCell
from flowmesh.rnn.cells import BasicLSTMCell, BasicRNNCell, GRUCell, LSTMCell
from flowmesh.rnn.multi_cell import MultiRNNCell
from flowmesh.rnn.wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper

__all__ = [
    "BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell",
    "LSTMCell", "LSTMStateTuple", "LayerRNNCell", "MultiRNNCell", "RNNCell", "ResidualWrapper",
]
