"""Keras recurrent layers: ``RNN``, ``SimpleRNN``, ``LSTM``, ``GRU`` and ``Bidirectional``.

``RNN(cell)`` runs a Keras cell over the time axis with the ``While`` loop of
``dynamic_rnn`` (:func:`flowmesh.rnn.dynamic_rnn.rnn_loop`); an ``LSTM`` whose math is
torch's (``activation="tanh"``, ``recurrent_activation="sigmoid"``), and a ``GRU`` with
``reset_after=True`` and those activations, run as one fused op instead. Weights are ``<layer>/<cell>/kernel``, ``recurrent_kernel`` and ``bias``
(``lstm/lstm_cell/kernel``), as tf.keras names them. Outputs follow Keras:
``return_sequences`` gives ``[batch, time, units]`` (in processing order with
``go_backwards``), ``return_state`` appends the final states (``[h, c]`` for an LSTM).
"""

from __future__ import annotations

from typing import Any

from flowmesh import config as settings
from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import get_default_graph
from flowmesh.core.shapes import TensorShape
from flowmesh.keras import activations
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers.recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell
from flowmesh.ops import _structure as nest
from flowmesh.ops import array_ops, manip_ops

_LAYER_ARGS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll",
               "time_major")
_BASE_ARGS = ("name", "trainable", "dtype", "input_shape", "batch_input_shape", "batch_size",
              "input_dim", "activity_regularizer", "weights")


class _StepCell:
    """Adapts a Keras cell (``call(x, states) -> (out, states)``) to ``rnn_loop``."""

    def __init__(self, cell: Layer):
        self.cell = cell

    def __call__(self, inputs: Any, state: Any) -> tuple[Any, Any]:
        output, new_states = self.cell.call(inputs, list(state))
        return output, tuple(new_states)


class RNN(Layer):
    """Runs ``cell`` over ``inputs [batch, time, ...]``.

    Args:
        cell: a Keras cell (``SimpleRNNCell``, ``LSTMCell``, ``GRUCell``).
        return_sequences: return every step's output instead of the last one.
        return_state: also return the final states.
        go_backwards: process the sequence from its end.
        stateful: not supported (an error).
        unroll: accepted (the loop is never unrolled).
        time_major: inputs and outputs are ``[time, batch, ...]``.
    """

    def __init__(self, cell: Layer, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 time_major: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if stateful:
            raise NotImplementedError(f"{type(self).__name__} '{self.name}': stateful=True is "
                                      "not supported; pass initial_state explicitly")
        self.cell = cell
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.time_major = bool(go_backwards), bool(time_major)
        self.unroll = unroll
        self.input_spec = InputSpec(ndim=3)

    def build(self, input_shape: Any) -> None:
        dims = TensorShape(input_shape).as_list()
        step_shape = TensorShape(dims[1:] if self.time_major else [dims[0]] + dims[2:])
        with get_default_graph().name_scope(self.cell.name):
            self.cell.build(step_shape)
        self.cell.built = True
        self.built = True

    def call(self, inputs: Any, initial_state: Any = None, training: Any = None,
             mask: Any = None) -> Any:
        if mask is not None:
            raise NotImplementedError(f"{type(self).__name__} '{self.name}': masks are not "
                                      "supported")
        x = convert_to_tensor(inputs)
        if not self.time_major:
            x = array_ops.transpose(x, [1, 0, 2])
        if self.go_backwards:
            x = manip_ops.reverse(x, [0])
        batch = x.shape.as_list()[1]
        batch = batch if batch is not None else array_ops.shape(x)[1]
        states = self._initial_states(initial_state, batch, x.dtype)
        outputs, final = self._run(x, states)
        last = outputs[-1]
        if self.return_sequences:
            result = outputs if self.time_major else array_ops.transpose(outputs, [1, 0, 2])
        else:
            result = last
        if self.return_state:
            return [result] + list(final)
        return result

    def _initial_states(self, initial_state: Any, batch: Any, dtype: dtypes.DType) -> list[Any]:
        if initial_state is None:
            return self.cell.get_initial_state(batch, dtype)
        states = [convert_to_tensor(s) for s in nest.flatten(initial_state)]
        if len(states) != len(self.cell._state_sizes()):
            raise ValueError(f"Layer {self.name} expects {len(self.cell._state_sizes())} initial "
                             f"states, but it received {len(states)}")
        return states

    def _run(self, x: Any, states: list[Any]) -> tuple[Any, list[Any]]:
        fused = _fused_lstm(self.cell, x, states)
        if fused is None:
            fused = _fused_gru(self.cell, x, states)
        if fused is not None:
            return fused
        from flowmesh.rnn.dynamic_rnn import rnn_loop

        outputs, final = rnn_loop(_StepCell(self.cell), x, [x], tuple(states), None, 32, False)
        return outputs, list(final)

    def get_config(self) -> dict[str, Any]:
        config = {**super().get_config(), **{k: getattr(self, k) for k in _LAYER_ARGS
                                             if hasattr(self, k)}}
        config.pop("stateful", None)
        return config


def _fused_lstm(cell: Any, x: Any, states: list[Any]) -> tuple[Any, list[Any]] | None:
    """One ``FusedLSTM`` for a Keras LSTM whose math is torch's, else None."""
    if not settings.FUSED_RNN.get() or type(cell) is not LSTMCell:
        return None
    if cell.activation is not activations.tanh or cell.recurrent_activation is not \
            activations.sigmoid or x.shape.rank != 3:
        return None
    if x.dtype not in (dtypes.float32, dtypes.float64):
        return None
    from flowmesh.ops.rnn_ops import fused_lstm

    h0, c0 = (convert_to_tensor(s) for s in states)
    kernel = array_ops.concat([convert_to_tensor(cell.kernel),
                               convert_to_tensor(cell.recurrent_kernel)], 0)
    bias = convert_to_tensor(cell.bias) if cell.bias is not None else \
        array_ops.zeros([4 * cell.units], dtype=x.dtype)
    y, c, h = fused_lstm(x, c0, h0, kernel, bias, forget_bias=0.0, gate_order="ifco")
    steps, batch = x.shape.as_list()[:2]
    y.set_shape(TensorShape([steps, batch, cell.units]))
    return y, [h, c]


def _fused_gru(cell: Any, x: Any, states: list[Any]) -> tuple[Any, list[Any]] | None:
    """One ``FusedGRU`` for a Keras GRU whose math is torch's (``reset_after``, sigmoid,
    tanh, with biases), else None."""
    if not settings.FUSED_RNN.get() or type(cell) is not GRUCell or not cell.reset_after:
        return None
    if cell.activation is not activations.tanh or cell.recurrent_activation is not \
            activations.sigmoid or cell.bias is None or x.shape.rank != 3:
        return None
    if x.dtype not in (dtypes.float32, dtypes.float64):
        return None
    from flowmesh.ops.rnn_ops import fused_gru

    y, h = fused_gru(x, convert_to_tensor(states[0]), convert_to_tensor(cell.kernel),
                     convert_to_tensor(cell.recurrent_kernel), convert_to_tensor(cell.bias))
    steps, batch = x.shape.as_list()[:2]
    y.set_shape(TensorShape([steps, batch, cell.units]))
    return y, [h]


class _CellLayer(RNN):
    """A recurrent layer owning one cell built from its own arguments."""

    cell_class: Any = None
    cell_name = ""

    def __init__(self, units: int, **kwargs: Any):
        layer_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in _LAYER_ARGS + _BASE_ARGS}
        self._cell_config = {"units": units, **kwargs}
        cell = self.cell_class(units, name=self.cell_name, dtype=layer_kwargs.get("dtype"),
                               **kwargs)
        super().__init__(cell, **layer_kwargs)

    @property
    def units(self) -> int:
        return self.cell.units

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), **self._cell_config}


class SimpleRNN(_CellLayer):
    """Fully connected RNN (``tf.keras.layers.SimpleRNN``)."""

    cell_class = SimpleRNNCell
    cell_name = "simple_rnn_cell"


class LSTM(_CellLayer):
    """Long short-term memory (``tf.keras.layers.LSTM``); final states ``[h, c]``."""

    cell_class = LSTMCell
    cell_name = "lstm_cell"


class GRU(_CellLayer):
    """Gated recurrent unit (``tf.keras.layers.GRU``; ``reset_after=False`` by default as
    in TF 1.x)."""

    cell_class = GRUCell
    cell_name = "gru_cell"


class Bidirectional(Layer):
    """Runs a recurrent layer forwards and a copy of it backwards and merges the outputs.

    Args:
        layer: a recurrent layer (``LSTM``, ``GRU``, ``SimpleRNN``); copies named
            ``forward_<name>`` and ``backward_<name>`` do the work.
        merge_mode: ``"concat"`` (default), ``"sum"``, ``"mul"``, ``"ave"`` or None (a list
            of both outputs).
        backward_layer: an explicit backward layer (must process the sequence backwards).
    """

    _MODES = ("concat", "sum", "mul", "ave", None)

    def __init__(self, layer: Layer, merge_mode: str | None = "concat", weights: Any = None,
                 backward_layer: Layer | None = None, **kwargs: Any):
        if not isinstance(layer, RNN):
            raise ValueError(f"Please initialize `Bidirectional` layer with a recurrent layer "
                             f"(LSTM, GRU, SimpleRNN), got {layer!r}")
        if merge_mode not in self._MODES:
            raise ValueError(f"Invalid merge mode {merge_mode!r}. Merge mode should be one of "
                             f"{list(self._MODES)}")
        super().__init__(**kwargs)
        config = layer.get_config()
        self.forward_layer = type(layer).from_config({**config, "name": f"forward_{layer.name}"})
        if backward_layer is None:
            backward_layer = type(layer).from_config(
                {**config, "name": f"backward_{layer.name}", "go_backwards": not layer.go_backwards})
        self.backward_layer = backward_layer
        self.merge_mode = merge_mode
        self.return_sequences, self.return_state = layer.return_sequences, layer.return_state
        self._initial_weights = weights

    def build(self, input_shape: Any) -> None:
        self.built = True

    def call(self, inputs: Any, initial_state: Any = None, training: Any = None) -> Any:
        fw_state = bw_state = None
        if initial_state is not None:
            flat = nest.flatten(initial_state)
            half = len(flat) // 2
            fw_state, bw_state = flat[:half], flat[half:]
        y = self.forward_layer(inputs, initial_state=fw_state)
        y_rev = self.backward_layer(inputs, initial_state=bw_state)
        states: list[Any] = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            axis = 0 if self.forward_layer.time_major else 1
            y_rev = manip_ops.reverse(y_rev, [axis])
        output = self._merge(y, y_rev)
        if self.return_state:
            return (output if isinstance(output, list) else [output]) + states
        return output

    def _merge(self, y: Any, y_rev: Any) -> Any:
        from flowmesh.ops import math_ops

        if self.merge_mode == "concat":
            return array_ops.concat([y, y_rev], -1)
        if self.merge_mode == "sum":
            return math_ops.add(y, y_rev)
        if self.merge_mode == "ave":
            return math_ops.multiply(math_ops.add(y, y_rev), 0.5)
        if self.merge_mode == "mul":
            return math_ops.multiply(y, y_rev)
        return [y, y_rev]
