"""Recurrent networks: ``tf.nn.rnn_cell`` cells and wrappers, ``static_rnn``,
``static_bidirectional_rnn``, ``static_state_saving_rnn``, ``dynamic_rnn``,
``bidirectional_dynamic_rnn`` and ``raw_rnn`` (a loop driven by a user ``loop_fn``).

Files follow a step's data: ``cell_base`` (scopes, variables, zero state) -> ``cells`` /
``multi_cell`` / ``wrappers`` -> ``static_rnn`` (unrolled) and ``dynamic_rnn`` (a
``While`` loop, or ``fused``: one op running torch's LSTM kernel).
"""

from flowmesh.rnn import rnn_cell
from flowmesh.rnn.dynamic_rnn import bidirectional_dynamic_rnn, dynamic_rnn
from flowmesh.rnn.raw_rnn import raw_rnn
from flowmesh.rnn.static_rnn import static_bidirectional_rnn, static_rnn, static_state_saving_rnn

__all__ = ["bidirectional_dynamic_rnn", "dynamic_rnn", "raw_rnn", "rnn_cell",
           "static_bidirectional_rnn", "static_rnn", "static_state_saving_rnn"]
