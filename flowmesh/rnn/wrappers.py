"""Cell wrappers of ``tf.nn.rnn_cell``: ``DropoutWrapper``, ``ResidualWrapper`` and
``DeviceWrapper``. A wrapper calls the wrapped cell directly, so the wrapped cell's
variables keep their names (``rnn/basic_lstm_cell/kernel`` with or without a wrapper)."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, get_default_graph, name_scope
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import _structure as nest
from flowmesh.ops import math_ops, random_ops
from flowmesh.ops.nn_impl import dropout
from flowmesh.rnn.cell_base import LSTMStateTuple, RNNCell, assert_like_rnncell


class _Wrapper(RNNCell):
    """Base of the wrappers: sizes, zero state and building come from the wrapped cell."""

    def __init__(self, cell: Any, **kwargs: Any):
        super().__init__(**kwargs)
        assert_like_rnncell("cell", cell)
        self.cell = cell

    @property
    def wrapped_cell(self) -> Any:
        return self.cell

    @property
    def state_size(self) -> Any:
        return self.cell.state_size

    @property
    def output_size(self) -> Any:
        return self.cell.output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope(f"{type(self).__name__}ZeroState"):
            return self.cell.zero_state(batch_size, dtype)

    def prebuild(self, input_shape: TensorShape, dtype: Any, batch_size: Any) -> None:
        from flowmesh.rnn.multi_cell import prebuild_cell

        prebuild_cell(self.cell, input_shape, dtype, batch_size)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Any, Any]:
        return self._call_wrapped_cell(inputs, state, self.cell.__call__, scope=scope)

    def _call_wrapped_cell(self, inputs: Any, state: Any, cell_call_fn: Callable[..., Any],
                           **kwargs: Any) -> tuple[Any, Any]:
        raise NotImplementedError

    @property
    def trainable_weights(self) -> list[Any]:
        return list(getattr(self.cell, "trainable_weights", []))

    @property
    def non_trainable_weights(self) -> list[Any]:
        return list(getattr(self.cell, "non_trainable_weights", []))


def default_dropout_state_filter_visitor(substate: Any) -> Any:
    """Drops out every state term except the memory ``c`` of an ``LSTMStateTuple``."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _check_keep_prob(name: str, value: Any) -> Any:
    if isinstance(value, numbers.Real):
        if not 0.0 < float(value) <= 1.0:
            raise ValueError(f"Parameter {name} must be between 0 and 1: {value}")
        return float(value)
    return convert_to_tensor(value, name=name)


class DropoutWrapper(_Wrapper):
    """Dropout on a cell's inputs, outputs and (filtered) states.

    Args:
        cell: the wrapped RNNCell.
        input_keep_prob, output_keep_prob, state_keep_prob: keep probabilities (floats in
            ``(0, 1]`` or scalar tensors); a constant 1 adds no dropout.
        variational_recurrent: one dropout mask per ``run`` for every time step (Gal &
            Ghahramani); needs ``dtype`` and, with input dropout, ``input_size``.
        input_size: depth(s) of the inputs (variational input dropout only).
        dtype: dtype of the masks (variational only).
        seed: random seed.
        dropout_state_filter_visitor: ``fn(substate) -> bool or structure of bools``
            choosing the state terms to drop (default: all but LSTM ``c``).

    Raises:
        ValueError: a keep probability outside ``(0, 1]``, or a variational wrapper
            without ``dtype``/``input_size``.
    """

    def __init__(self, cell: Any, input_keep_prob: Any = 1.0, output_keep_prob: Any = 1.0,
                 state_keep_prob: Any = 1.0, variational_recurrent: bool = False,
                 input_size: Any = None, dtype: Any = None, seed: int | None = None,
                 dropout_state_filter_visitor: Callable[[Any], Any] | None = None, **kwargs: Any):
        super().__init__(cell, dtype=dtype, **kwargs)
        if dropout_state_filter_visitor is not None and not callable(dropout_state_filter_visitor):
            raise TypeError("dropout_state_filter_visitor must be callable")
        self._filter = dropout_state_filter_visitor or default_dropout_state_filter_visitor
        self._input_keep_prob = _check_keep_prob("input_keep_prob", input_keep_prob)
        self._output_keep_prob = _check_keep_prob("output_keep_prob", output_keep_prob)
        self._state_keep_prob = _check_keep_prob("state_keep_prob", state_keep_prob)
        self._seed = seed
        self._variational = bool(variational_recurrent)
        self._noise: dict[str, Any] = {}
        if self._variational:
            self._make_recurrent_noise(input_size, dtype)

    def _make_recurrent_noise(self, input_size: Any, dtype: Any) -> None:
        if dtype is None:
            raise ValueError("When variational_recurrent=True, dtype must be provided")

        def noise(sizes: Any, salt: str) -> Any:
            def one(size: Any) -> Tensor:
                dims = [size] if isinstance(size, int) else TensorShape(size).as_list()
                return random_ops.random_uniform([1] + dims, dtype=dtype, seed=self._seed,
                                                 name=f"{salt}_noise")
            return nest.map_structure(one, sizes)

        if _should_drop(self._input_keep_prob):
            if input_size is None:
                raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or "
                                 "is unknown, input_size must be provided")
            self._noise["input"] = noise(input_size, "input")
        self._noise["state"] = noise(self.cell.state_size, "state")
        self._noise["output"] = noise(self.cell.output_size, "output")

    def _drop(self, values: Any, salt: str, keep_prob: Any, mask: Any = None) -> Any:
        flat = nest.flatten(values)
        keep = nest.flatten(mask) if mask is not None else [True] * len(flat)
        noises = nest.flatten(self._noise[salt]) if self._variational else [None] * len(flat)
        out = []
        for i, (value, drop, noise) in enumerate(zip(flat, keep, noises)):
            if not drop:
                out.append(value)
            elif noise is None:
                seed = None if self._seed is None else self._seed + i + len(salt)
                out.append(dropout(value, keep_prob=keep_prob, seed=seed))
            else:
                binary = math_ops.floor(math_ops.add(keep_prob, noise))
                result = math_ops.multiply(math_ops.divide(value, keep_prob), binary)
                result.set_shape(value.shape)
                out.append(result)
        return nest.pack_sequence_as(values, out)

    def _state_mask(self, state: Any) -> Any:
        """A bool per state leaf: TensorFlow's traversal of the state filter (a False
        level stops, True or a structure of bools goes on into the children)."""
        def visit(sub: Any) -> Any:
            decision = self._filter(sub)
            if not nest.is_nested(sub):
                return bool(decision)
            children = list(sub)
            flags = [decision] * len(children) if isinstance(decision, bool) else list(decision)
            masks = [visit(c) if flag else nest.map_structure(lambda _: False, c)
                     for c, flag in zip(children, flags)]
            return nest.pack_sequence_as(sub, [m for mask in masks for m in nest.flatten(mask)])
        return visit(state)

    def _call_wrapped_cell(self, inputs: Any, state: Any, cell_call_fn: Callable[..., Any],
                           **kwargs: Any) -> tuple[Any, Any]:
        if _should_drop(self._input_keep_prob):
            inputs = self._drop(inputs, "input", self._input_keep_prob)
        output, new_state = cell_call_fn(inputs, state, **kwargs)
        if _should_drop(self._state_keep_prob):
            new_state = self._drop(new_state, "state", self._state_keep_prob,
                                   self._state_mask(new_state))
        if _should_drop(self._output_keep_prob):
            output = self._drop(output, "output", self._output_keep_prob)
        return output, new_state


def _should_drop(keep_prob: Any) -> bool:
    return not isinstance(keep_prob, float) or keep_prob < 1.0


class ResidualWrapper(_Wrapper):
    """Adds the cell's inputs to its outputs (``residual_fn(inputs, outputs)``, default
    ``inputs + outputs`` leaf by leaf)."""

    def __init__(self, cell: Any, residual_fn: Callable[[Any, Any], Any] | None = None,
                 **kwargs: Any):
        super().__init__(cell, **kwargs)
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs: Any, state: Any, cell_call_fn: Callable[..., Any],
                           **kwargs: Any) -> tuple[Any, Any]:
        outputs, new_state = cell_call_fn(inputs, state, **kwargs)

        def add(inp: Any, out: Any) -> Any:
            inp, out = convert_to_tensor(inp), convert_to_tensor(out)
            if not inp.shape.is_compatible_with(out.shape):
                raise ValueError(
                    f"ResidualWrapper: the cell's input {inp.name} {inp.shape} and output "
                    f"{out.name} {out.shape} must have the same shape; give the cell "
                    "num_units equal to the input depth or pass residual_fn."
                )
            return math_ops.add(inp, out)

        if self._residual_fn is not None:
            return self._residual_fn(inputs, outputs), new_state
        nest.assert_same_structure(inputs, outputs)
        return nest.map_structure(add, inputs, outputs), new_state


class DeviceWrapper(_Wrapper):
    """Runs (and builds) the wrapped cell under ``tf.device(device)``."""

    def __init__(self, cell: Any, device: Any, **kwargs: Any):
        super().__init__(cell, **kwargs)
        self._device = device

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with name_scope("DeviceWrapperZeroState"), get_default_graph().device(self._device):
            return self.cell.zero_state(batch_size, dtype)

    def prebuild(self, input_shape: TensorShape, dtype: Any, batch_size: Any) -> None:
        with get_default_graph().device(self._device):
            super().prebuild(input_shape, dtype, batch_size)

    def _call_wrapped_cell(self, inputs: Any, state: Any, cell_call_fn: Callable[..., Any],
                           **kwargs: Any) -> tuple[Any, Any]:
        with get_default_graph().device(self._device):
            return cell_call_fn(inputs, state, **kwargs)
