"""Shared pieces of the streaming metrics: metric variables, shape alignment, weights.

Every ``tf.metrics`` function keeps its state in *metric variables*: non-trainable
variables initialized to zero in the ``LOCAL_VARIABLES`` and ``METRIC_VARIABLES``
collections (``tf.local_variables_initializer()`` resets them). A metric returns
``(value, update_op)``: ``value`` reads the variables, ``update_op`` adds one batch and
returns the value including that batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import GraphKeys, Tensor, add_to_collection
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops, cast_ops, math_ops
from flowmesh.ops.variables import Variable


def metric_variable(shape: Any, dtype: Any, validate_shape: bool = True,
                    name: str | None = None) -> Variable:
    """A zero-initialized, non-trainable variable in ``LOCAL_VARIABLES`` and ``METRIC_VARIABLES``."""
    return Variable(lambda: array_ops.zeros(shape, dtype), trainable=False,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                    validate_shape=validate_shape, name=name)


def add_to_collections(names: Any, value: Any) -> None:
    """Adds ``value`` to each collection in ``names`` (None: none)."""
    for key in names or ():
        add_to_collection(key, value)


def finish(metrics_collections: Any, value_fn: Callable[..., Tensor], *args: Any) -> Tensor:
    """Builds the metric's value from its variables and adds it to ``metrics_collections``."""
    value = value_fn(*args)
    add_to_collections(metrics_collections, value)
    return value


def _squeeze_pair(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor]:
    """Drops a trailing size-1 dimension of the operand whose rank is one larger."""
    lr, pr = labels.shape.ndims, predictions.shape.ndims
    if lr is None or pr is None:
        return labels, predictions
    if pr - lr == 1 and predictions.shape.dims[-1] in (1, None):
        predictions = array_ops.squeeze(predictions, [-1])
    elif lr - pr == 1 and labels.shape.dims[-1] in (1, None):
        labels = array_ops.squeeze(labels, [-1])
    return labels, predictions


def _dim(d: Any) -> Any:
    return getattr(d, "value", d)


def remove_squeezable_dimensions(predictions: Any, labels: Any,
                                 weights: Any) -> tuple[Tensor, Tensor | None, Tensor | None]:
    """TensorFlow's alignment: squeeze a trailing 1 of labels/predictions whose ranks differ
    by one, then squeeze or expand the weights' last dimension to the predictions' rank."""
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels = convert_to_tensor(labels)
        labels, predictions = _squeeze_pair(labels, predictions)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise InvalidArgumentError(
                f"metrics: predictions {predictions.name} of shape {predictions.shape} and labels "
                f"{labels.name} of shape {labels.shape} are not compatible; give them the same "
                "shape (a trailing dimension of size 1 is squeezed)")
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    wr, pr = weights.shape.ndims, predictions.shape.ndims
    if wr == 0 or wr is None or pr is None:
        return predictions, labels, weights
    if wr - pr == 1:
        weights = array_ops.squeeze(weights, [-1])
    elif pr - wr == 1:
        weights = array_ops.expand_dims(weights, -1)
    return predictions, labels, weights


def broadcast_weights(weights: Tensor, values: Tensor) -> Tensor:
    """``weights`` broadcast to the shape of ``values`` (TensorFlow's ``broadcast_weights``)."""
    weights = convert_to_tensor(weights)
    if weights.shape.is_fully_defined() and values.shape.is_fully_defined() \
            and weights.shape.as_list() == values.shape.as_list():
        return weights
    ws, vs = weights.shape, values.shape
    if ws.ndims is not None and vs.ndims is not None and ws.ndims > 0:
        if ws.ndims != vs.ndims:
            raise InvalidArgumentError(
                f"metrics: weights of shape {ws} cannot be broadcast to values of shape {vs}: "
                "weights must be a scalar or have the values' rank")
        for w, v in zip(ws.dims, vs.dims):
            w, v = _dim(w), _dim(v)
            if w not in (1, None) and v is not None and w != v:
                raise InvalidArgumentError(
                    f"metrics: weights of shape {ws} cannot be broadcast to values of shape {vs}: "
                    "each weights dimension must be 1 or equal the values' dimension")
    return math_ops.multiply(weights, array_ops.ones_like(values))


def as_float(x: Any) -> Tensor:
    """``x`` cast to float32."""
    return cast_ops.cast(convert_to_tensor(x), dtypes.float32)
