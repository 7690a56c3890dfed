"""Keras recurrent layers: ``RNN``, ``SimpleRNN``, ``LSTM``, ``GRU`` and ``Bidirectional``.

``RNN(cell)`` runs a Keras cell over the time axis with the ``While`` loop of
``dynamic_rnn`` (:func:`flowmesh.rnn.dynamic_rnn.rnn_loop`); an ``LSTM`` whose math is
torch's (``activation="tanh"``, ``recurrent_activation="sigmoid"``), and a ``GRU`` with
``reset_after=True`` and those activations, run as one fused op instead. Weights are ``<layer>/<cell>/kernel``, ``recurrent_kernel`` and ``bias``
(``lstm/lstm_cell/kernel``), as tf.keras names them. Outputs follow Keras:
``return_sequences`` gives ``[batch, time, units]`` (in processing order with
``go_backwards``), ``return_state`` appends the final states (``[h, c]`` for an LSTM).

Masks (``Masking``, ``Embedding(mask_zero=True)`` or ``mask=``) follow tf-keras's
``backend.rnn``: at a masked step the states are carried over unchanged and the output
repeats the previous step's output (zeros with ``zero_output_for_mask``, which
``Bidirectional`` sets when it returns sequences). Layers with ``recurrent_dropout`` run
the ``While`` loop; masked ones the fused kernel when the padding is at the end (see
:mod:`recurrent_fused`), else the loop.
``stateful=True`` keeps the final states in variables (see :mod:`recurrent_state`).
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import get_default_graph
from flowmesh.core.shapes import TensorShape
from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers import recurrent_fused, recurrent_state
from flowmesh.keras.layers.recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell
from flowmesh.keras.layers.recurrent_stacked import StackedRNNCells, output_size, state_sizes
from flowmesh.keras.layers.recurrent_stacked import initial_state as cell_initial_state
from flowmesh.ops import _structure as nest
from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops, select_ops

_LAYER_ARGS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll",
               "time_major", "zero_output_for_mask")
_BASE_ARGS = ("name", "trainable", "dtype", "input_shape", "batch_input_shape", "batch_size",
              "input_dim", "activity_regularizer", "weights")


class _StepCell:
    """Adapts a Keras cell (``call(x, states) -> (out, states)``) to ``rnn_loop``."""

    def __init__(self, cell: Layer):
        self.cell = cell

    def __call__(self, inputs: Any, state: Any) -> tuple[Any, Any]:
        output, new_states = self.cell.call(inputs, list(state))
        return output, tuple(new_states)


class _MaskedStepCell:
    """A step of a masked sequence (inputs ``(x_t, mask_t)``, state ``(previous output,
    *states)``): where ``mask_t`` is false the states are kept and the output is the
    previous one (or zeros), as tf-keras's ``backend.rnn`` does."""

    def __init__(self, cell: Layer, zero_output: bool):
        self.cell, self.zero_output = cell, zero_output

    def __call__(self, inputs: Any, state: Any) -> tuple[Any, Any]:
        x, keep = inputs
        previous, *states = state
        output, new_states = self.cell.call(x, list(states))
        fill = array_ops.zeros_like(output) if self.zero_output else previous
        output = select_ops.where(keep, output, fill)
        kept = [select_ops.where(keep, new, old) for new, old in zip(new_states, states)]
        return output, (output, *kept)


class RNN(Layer):
    """Runs ``cell`` over ``inputs [batch, time, ...]``.

    Args:
        cell: a Keras cell (``SimpleRNNCell``, ``LSTMCell``, ``GRUCell``).
        return_sequences: return every step's output instead of the last one.
        return_state: also return the final states.
        go_backwards: process the sequence from its end.
        stateful: keep the final states of each batch as the initial states of the next
            (needs a static batch size: ``batch_input_shape`` or ``Input(batch_size=)``;
            :meth:`reset_states` zeroes them).
        unroll: accepted (the loop is never unrolled).
        time_major: inputs and outputs are ``[time, batch, ...]``.
        zero_output_for_mask: masked steps output zeros instead of the previous output.
    """

    def __init__(self, cell: Layer, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 time_major: bool = False, zero_output_for_mask: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        self.cell = cell
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.time_major = bool(go_backwards), bool(time_major)
        self.stateful, self.zero_output_for_mask = bool(stateful), bool(zero_output_for_mask)
        self.unroll = unroll
        self.input_spec = InputSpec(ndim=3)
        self.states: list[Any] | None = None
        self.supports_masking = True

    def build(self, input_shape: Any) -> None:
        dims = TensorShape(input_shape).as_list()
        step_shape = TensorShape(dims[1:] if self.time_major else [dims[0]] + dims[2:])
        with get_default_graph().name_scope(self.cell.name):
            self.cell.build(step_shape)
        self.cell.built = True
        if self.stateful:
            self.states = recurrent_state.make_state_variables(self, dims)
        self.built = True

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """The input mask for ``return_sequences`` (else None); None for each state."""
        mask = nest.flatten(mask)[0] if mask is not None else None
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * len(state_sizes(self.cell))
        return output_mask

    def call(self, inputs: Any, initial_state: Any = None, training: Any = None,
             mask: Any = None) -> Any:
        x = self._time_major_inputs(convert_to_tensor(inputs))
        mask = self._time_major_mask(mask)
        batch = x.shape.as_list()[1]
        batch = batch if batch is not None else array_ops.shape(x)[1]
        states = self._initial_states(initial_state, batch, x.dtype)
        prepare = getattr(self.cell, "prepare_dropout", None)
        if prepare is not None:
            prepare(x[0], training)
        try:
            outputs, final = self._run(x, states, mask)
        finally:
            if prepare is not None:
                self.cell.clear_dropout()
        last = outputs[-1]
        if self.return_sequences:
            result = outputs if self.time_major else array_ops.transpose(outputs, [1, 0, 2])
        else:
            result = last
        result = [result] + self._nested_states(final) if self.return_state else result
        if self.stateful:
            result = recurrent_state.after_update(self.states, final, result)
        return result

    def _nested_states(self, final: list[Any]) -> list[Any]:
        """The final states as tf-keras returns them: for stacked cells one entry per cell
        (a list when the cell has several states)."""
        if not isinstance(self.cell, StackedRNNCells):
            return list(final)
        nested, rest = [], list(final)
        for cell in self.cell.cells:
            n = len(state_sizes(cell))
            nested.append(rest[0] if n == 1 else rest[:n])
            rest = rest[n:]
        return nested

    def _time_major_inputs(self, x: Any) -> Any:
        if not self.time_major:
            x = array_ops.transpose(x, [1, 0, 2])
        return manip_ops.reverse(x, [0]) if self.go_backwards else x

    def _time_major_mask(self, mask: Any) -> Any:
        """The mask as bool ``[time, batch]`` in processing order, or None."""
        if mask is None:
            return None
        mask = convert_to_tensor(nest.flatten(mask)[0])
        if mask.dtype != dtypes.bool:
            mask = cast_ops.cast(mask, dtypes.bool)
        if mask.shape.rank != 2:
            raise ValueError(f"{type(self).__name__} '{self.name}': the mask must be [batch, time], "
                             f"got shape {mask.shape}")
        if not self.time_major:
            mask = array_ops.transpose(mask, [1, 0])
        return manip_ops.reverse(mask, [0]) if self.go_backwards else mask

    def _initial_states(self, initial_state: Any, batch: Any, dtype: dtypes.DType) -> list[Any]:
        if initial_state is None and self.stateful:
            return recurrent_state.read_states(self.states)
        if initial_state is None:
            return cell_initial_state(self.cell, batch, dtype)
        states = [convert_to_tensor(s) for s in nest.flatten(initial_state)]
        if len(states) != len(state_sizes(self.cell)):
            raise ValueError(f"Layer {self.name} expects {len(state_sizes(self.cell))} initial "
                             f"states, but it received {len(states)}")
        return states

    def _run(self, x: Any, states: list[Any], mask: Any) -> tuple[Any, list[Any]]:
        from flowmesh.rnn.dynamic_rnn import rnn_loop

        if mask is not None:
            return recurrent_fused.masked(self.cell, x, states, mask, self.zero_output_for_mask,
                                          self._masked_loop, self.return_state or self.stateful)
        fused = recurrent_fused.fused(self.cell, x, states)
        if fused is not None:
            return fused
        outputs, final = rnn_loop(_StepCell(self.cell), x, [x], tuple(states), None, 32, False)
        return outputs, list(final)

    def _masked_loop(self, x: Any, states: list[Any], mask: Any) -> tuple[Any, list[Any]]:
        from flowmesh.rnn.dynamic_rnn import rnn_loop

        batch = array_ops.shape(x)[1]
        first = array_ops.zeros(array_ops.stack([batch, output_size(self.cell)]), dtype=x.dtype)
        first.set_shape(TensorShape([x.shape[1], output_size(self.cell)]))
        step = _MaskedStepCell(self.cell, self.zero_output_for_mask)
        outputs, final = rnn_loop(step, (x, mask), [x, mask], (first, *states), None, 32, False)
        return outputs, list(final[1:])

    def reset_states(self, states: Any = None) -> None:
        """Zeroes the states of a stateful layer (or sets them to ``states``, NumPy arrays).

        Raises:
            AttributeError: the layer is not stateful.
            ValueError: the layer is not built, or ``states`` do not fit.
        """
        recurrent_state.reset_states(self, states)

    def get_config(self) -> dict[str, Any]:
        config = {**super().get_config(), **{k: getattr(self, k) for k in _LAYER_ARGS
                                             if hasattr(self, k)}}
        if not config.get("zero_output_for_mask"):
            config.pop("zero_output_for_mask", None)
        if type(self) is RNN:  # a generic RNN carries its cell, as tf-keras's
            from flowmesh.keras.saving.model_config import layer_config

            config["cell"] = layer_config(self.cell)
        return config

    @classmethod
    def from_config(cls, config: dict[str, Any], custom_objects: dict | None = None) -> RNN:
        config = dict(config)
        if isinstance(config.get("cell"), dict):
            from flowmesh.keras.saving.model_config import layer_from_config

            config["cell"] = layer_from_config(config["cell"], custom_objects)
        return cls(**config)


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
        # Masked steps output zeros when returning sequences (tf-keras forces this too).
        config = {**layer.get_config(), "zero_output_for_mask": layer.return_sequences}
        self.forward_layer = type(layer).from_config({**config, "name": f"forward_{layer.name}"})
        if backward_layer is None:
            backward_layer = type(layer).from_config(
                {**config, "name": f"backward_{layer.name}", "go_backwards": not layer.go_backwards})
        backward_layer.zero_output_for_mask = backward_layer.return_sequences
        self.backward_layer = backward_layer
        self.merge_mode = merge_mode
        self.return_sequences, self.return_state = layer.return_sequences, layer.return_state
        self.stateful = layer.stateful
        self._initial_weights = weights
        self.supports_masking = True

    def build(self, input_shape: Any) -> None:
        self.built = True

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """tf-keras's rule: the input mask for sequences (one per output without a merge
        mode), None for the final states."""
        mask = nest.flatten(mask)[0] if mask is not None else None
        output_mask: Any = mask if self.return_sequences else None
        if self.merge_mode is None:
            output_mask = [output_mask, output_mask]
        if self.return_state:
            states = [None] * (2 * len(state_sizes(self.forward_layer.cell)))
            return (output_mask if isinstance(output_mask, list) else [output_mask]) + states
        return output_mask

    def reset_states(self, states: Any = None) -> None:
        """Zeroes both directions' states (``stateful=True`` layers)."""
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        half = None if states is None else len(nest.flatten(states)) // 2
        self.forward_layer.reset_states(None if states is None else nest.flatten(states)[:half])
        self.backward_layer.reset_states(None if states is None else nest.flatten(states)[half:])

    def call(self, inputs: Any, initial_state: Any = None, training: Any = None,
             mask: Any = None) -> Any:
        fw_state = bw_state = None
        if initial_state is not None:
            flat = nest.flatten(initial_state)
            half = len(flat) // 2
            fw_state, bw_state = flat[:half], flat[half:]
        kwargs: dict[str, Any] = {"mask": mask}
        if training is not None:
            kwargs["training"] = training
        y = self.forward_layer(inputs, initial_state=fw_state, **kwargs)
        y_rev = self.backward_layer(inputs, initial_state=bw_state, **kwargs)
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

        if self.merge_mode == "concat":
            return array_ops.concat([y, y_rev], -1)
        if self.merge_mode == "sum":
            return math_ops.add(y, y_rev)
        if self.merge_mode == "ave":
            return math_ops.multiply(math_ops.add(y, y_rev), 0.5)
        if self.merge_mode == "mul":
            return math_ops.multiply(y, y_rev)
        return [y, y_rev]
