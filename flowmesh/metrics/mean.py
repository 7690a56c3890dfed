"""Mean-based streaming metrics: ``mean``, ``accuracy``, ``mean_squared_error``,
``root_mean_squared_error``, ``mean_absolute_error``, ``mean_per_class_accuracy``.

Variable names follow TensorFlow (``accuracy/total``, ``accuracy/count``, ...), so
``tf.local_variables()`` and checkpoints of evaluation graphs look the same.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, control_dependencies
from flowmesh.errors import InvalidArgumentError
from flowmesh.metrics._core import (
    add_to_collections,
    as_float,
    broadcast_weights,
    finish,
    metric_variable,
    remove_squeezable_dimensions,
)
from flowmesh.ops import array_ops, cast_ops, math_ops, state_ops
from flowmesh.ops.reduction_ops import reduce_mean, reduce_sum
from flowmesh.ops.variable_scope import variable_scope


def mean(values: Any, weights: Any = None, metrics_collections: Any = None,
         updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The (weighted) mean of ``values`` over every batch seen since the local variables'
    initialization.

    Returns:
        ``(mean, update_op)``: ``mean`` is ``total / count``; ``update_op`` adds the batch
        (``total += sum(values * weights)``, ``count += sum(weights)``) and returns the new mean.
    """
    with variable_scope(name, "mean", (values, weights)):
        values = as_float(values)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = cast_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            values, _, weights = remove_squeezable_dimensions(values, None, weights)
            weights = broadcast_weights(as_float(weights), values)
            values = math_ops.multiply(values, weights)
            num_values = reduce_sum(weights)
        update_total = state_ops.assign_add(total, reduce_sum(values))
        with control_dependencies([values]):
            update_count = state_ops.assign_add(count, num_values)
        value = finish(metrics_collections, lambda t, c: math_ops.div_no_nan(
            t, math_ops.maximum(c, 0.0), name="value"), total, count)
        update_op = math_ops.div_no_nan(update_total, math_ops.maximum(update_count, 0.0),
                                        name="update_op")
        add_to_collections(updates_collections, update_op)
        return value, update_op


def accuracy(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
             updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """How often ``predictions`` equals ``labels`` (weighted), streamed like :func:`mean`."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    if labels.dtype != predictions.dtype:
        predictions = cast_ops.cast(predictions, labels.dtype)
    is_correct = cast_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def _float_pair(labels: Any, predictions: Any, weights: Any) -> tuple[Tensor, Tensor, Any]:
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    if labels.dtype != predictions.dtype:
        raise InvalidArgumentError(
            f"metrics: labels {labels.name} ({labels.dtype.name}) and predictions "
            f"{predictions.name} ({predictions.dtype.name}) must have the same dtype; "
            "cast one of them with tf.cast")
    return labels, predictions, weights


def mean_squared_error(labels: Any, predictions: Any, weights: Any = None,
                       metrics_collections: Any = None, updates_collections: Any = None,
                       name: str | None = None) -> tuple[Tensor, Tensor]:
    """The streamed mean of ``(labels - predictions) ** 2``."""
    labels, predictions, weights = _float_pair(labels, predictions, weights)
    squared = math_ops.squared_difference(labels, predictions)
    return mean(squared, weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def root_mean_squared_error(labels: Any, predictions: Any, weights: Any = None,
                            metrics_collections: Any = None, updates_collections: Any = None,
                            name: str | None = None) -> tuple[Tensor, Tensor]:
    """The square root of the streamed mean squared error."""
    labels, predictions, weights = _float_pair(labels, predictions, weights)
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None,
                                         name or "root_mean_squared_error")
    rmse = finish(metrics_collections, math_ops.sqrt, mse)
    update_op = math_ops.sqrt(update_mse)
    add_to_collections(updates_collections, update_op)
    return rmse, update_op


def mean_absolute_error(labels: Any, predictions: Any, weights: Any = None,
                        metrics_collections: Any = None, updates_collections: Any = None,
                        name: str | None = None) -> tuple[Tensor, Tensor]:
    """The streamed mean of ``|labels - predictions|``."""
    labels, predictions, weights = _float_pair(labels, predictions, weights)
    return mean(math_ops.abs(predictions - labels), weights, metrics_collections,
                updates_collections, name or "mean_absolute_error")


def _flat(t: Tensor) -> Tensor:
    return array_ops.reshape(t, [-1]) if (t.shape.ndims or 0) > 1 else t


def mean_per_class_accuracy(labels: Any, predictions: Any, num_classes: int, weights: Any = None,
                            metrics_collections: Any = None, updates_collections: Any = None,
                            name: str | None = None) -> tuple[Tensor, Tensor]:
    """The mean over classes of each class's accuracy (classes never seen count as 0)."""
    with variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = _flat(cast_ops.cast(convert_to_tensor(labels), dtypes.int64))
        predictions = _flat(convert_to_tensor(predictions))
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        ones = array_ops.ones_like(labels, dtype=dtypes.float32)
        if labels.dtype != predictions.dtype:
            predictions = cast_ops.cast(predictions, labels.dtype)
        is_correct = cast_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = _flat(as_float(weights))
            is_correct *= weights
            ones *= weights
        update_total = state_ops.scatter_add(total, labels, ones)
        update_count = state_ops.scatter_add(count, labels, is_correct)
        value = finish(metrics_collections, lambda c, t: reduce_mean(math_ops.div_no_nan(
            c, math_ops.maximum(t, 0.0)), name="mean_accuracy"), count, total)
        update_op = math_ops.div_no_nan(update_count, math_ops.maximum(update_total, 0.0),
                                        name="update_op")
        add_to_collections(updates_collections, update_op)
        return value, update_op
