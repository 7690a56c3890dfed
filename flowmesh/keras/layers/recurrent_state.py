"""``stateful=True`` recurrent layers: the final states of one batch are the initial states
of the next.

The states live in non-trainable variables ``[batch, units]`` (not among the layer's
weights, as in Keras), so the batch size must be static (``batch_input_shape`` on the
first layer or ``tf.keras.Input(batch_size=...)``). Each call assigns the final states to
them; the layer's outputs depend on those assignments, so every ``Session.run`` of the
outputs (``fit``, ``evaluate``, ``predict`` or a plain run) carries the states forward.
``reset_states()`` zeroes them (or loads given NumPy values).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core.graph import get_default_graph
from flowmesh.keras.layers.recurrent_stacked import state_sizes
from flowmesh.ops import _structure as nest


def make_state_variables(layer: Any, input_dims: list[Any]) -> list[Any]:
    """One zero variable per state of ``layer.cell``, ``[batch, size]``.

    Raises:
        ValueError: the batch size is unknown.
    """
    from flowmesh.ops import array_ops
    from flowmesh.ops.variables import Variable

    batch = input_dims[1] if layer.time_major else input_dims[0]
    if batch is None:
        raise ValueError(
            f"If a RNN is stateful, it needs to know its batch size (layer '{layer.name}', input "
            f"shape {tuple(input_dims)}). Specify the batch size of your input tensors:\n"
            "- If using a Sequential model, specify the batch size by passing a "
            "`batch_input_shape` argument to your first layer.\n"
            "- If using the functional API, specify the batch size by passing a `batch_shape` "
            "argument to your Input layer.")
    dtype = layer.cell.dtype
    with get_default_graph().name_scope("states"):
        return [Variable(initial_value=lambda s=size: array_ops.zeros([batch, s], dtype=dtype),
                         trainable=False, name=f"state_{i}", dtype=dtype)
                for i, size in enumerate(state_sizes(layer.cell))]


def read_states(variables: list[Any]) -> list[Any]:
    """Copies of the states' current values. A variable's snapshot aliases its storage
    (TensorFlow 1.x reference semantics) and the final states are assigned in place in the
    same step, so the gradient (which reads the initial states after the forward loop) needs
    a copy taken before the assignment."""
    from flowmesh.ops import cast_ops, math_ops

    return [math_ops.add(v.read_value(), cast_ops.cast(0, v.dtype)) for v in variables]


def after_update(variables: list[Any], final_states: list[Any], result: Any) -> Any:
    """``result`` re-emitted after the final states were assigned to ``variables``."""
    from flowmesh.core.graph import control_dependencies
    from flowmesh.ops import array_ops

    assigns = [v.assign(s) for v, s in zip(variables, final_states)]
    with control_dependencies(assigns):
        return nest.map_structure(array_ops.identity, result)


def reset_states(layer: Any, states: Any = None) -> None:
    """Zeroes ``layer``'s state variables (or assigns ``states``) in the Keras session.

    Raises:
        AttributeError: the layer is not stateful.
        ValueError: not built, or the values do not fit the states.
    """
    from flowmesh.keras import backend

    if not getattr(layer, "stateful", False):
        raise AttributeError(f"Layer must be stateful (layer '{layer.name}' was created without "
                             "stateful=True).")
    if layer.states is None:
        raise ValueError(f"Layer '{layer.name}' is not built yet: call it on an input with a known "
                         "batch size before reset_states().")
    if states is None:
        values = [np.zeros(v.shape.as_list(), v.dtype.as_numpy_dtype) for v in layer.states]
    else:
        values = [np.asarray(s) for s in nest.flatten(states)]
        if len(values) != len(layer.states):
            raise ValueError(f"Layer '{layer.name}' expects {len(layer.states)} states, but it "
                             f"received {len(values)} state values.")
    backend.batch_set_value(list(zip(layer.states, values)))
