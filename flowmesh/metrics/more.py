"""More mean-based streaming metrics of ``tf.compat.v1.metrics``: ``mean_tensor``,
``mean_cosine_distance``, ``mean_relative_error``, ``percentage_below`` and ``mean_iou``
(from a streamed float64 confusion matrix), as TensorFlow's ``metrics_impl.py``."""

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
from flowmesh.metrics.mean import mean
from flowmesh.ops import (
    array_ops,
    cast_ops,
    linalg_ops,
    math_ops,
    reduction_ops,
    search_ops,
    select_ops,
    state_ops,
)
from flowmesh.ops.variable_scope import variable_scope


def mean_tensor(values: Any, weights: Any = None, metrics_collections: Any = None,
                updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The element-wise streamed (weighted) mean of ``values`` (a fully defined shape)."""
    with variable_scope(name, "mean", (values, weights)):
        values = as_float(values)
        if not values.shape.is_fully_defined():
            raise ValueError(f"mean_tensor: values need a fully defined shape, got {values.shape}")
        total = metric_variable(values.shape.as_list(), dtypes.float32, name="total_tensor")
        count = metric_variable(values.shape.as_list(), dtypes.float32, name="count_tensor")
        num_values = array_ops.ones_like(values)
        if weights is not None:
            values, _, weights = remove_squeezable_dimensions(values, None, weights)
            weights = broadcast_weights(as_float(weights), values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        update_total = state_ops.assign_add(total, values)
        with control_dependencies([values]):
            update_count = state_ops.assign_add(count, num_values)
        value = finish(metrics_collections, lambda t, c: math_ops.div_no_nan(
            t, math_ops.maximum(c, 0.0), name="value"), total, count)
        update_op = math_ops.div_no_nan(update_total, math_ops.maximum(update_count, 0.0), name="update_op")
        add_to_collections(updates_collections, update_op)
        return value, update_op


def mean_cosine_distance(labels: Any, predictions: Any, dim: int, weights: Any = None,
                         metrics_collections: Any = None, updates_collections: Any = None,
                         name: str | None = None) -> tuple[Tensor, Tensor]:
    """``1 - mean(sum(labels * predictions, dim))``: the streamed cosine distance of unit
    vectors along ``dim``."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    radial = reduction_ops.reduce_sum(math_ops.multiply(predictions, labels), axis=[dim], keepdims=True)
    distance, update = mean(radial, weights, None, None, name or "mean_cosine_distance")
    distance, update = math_ops.subtract(1.0, distance), math_ops.subtract(1.0, update)
    add_to_collections(metrics_collections, distance)
    add_to_collections(updates_collections, update)
    return distance, update


def mean_relative_error(labels: Any, predictions: Any, normalizer: Any, weights: Any = None,
                        metrics_collections: Any = None, updates_collections: Any = None,
                        name: str | None = None) -> tuple[Tensor, Tensor]:
    """The streamed mean of ``|labels - predictions| / normalizer`` (0 where the normalizer
    is 0)."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    normalizer = convert_to_tensor(normalizer)
    predictions, normalizer, _ = remove_squeezable_dimensions(predictions, normalizer, None)
    if not predictions.shape.is_compatible_with(normalizer.shape):
        raise InvalidArgumentError(f"mean_relative_error: predictions of shape {predictions.shape} and normalizer "
                                   f"of shape {normalizer.shape} are not compatible")
    relative = select_ops.where(math_ops.equal(normalizer, 0.0), array_ops.zeros_like(labels),
                                math_ops.divide(math_ops.abs(labels - predictions), normalizer))
    return mean(relative, weights, metrics_collections, updates_collections, name or "mean_relative_error")


def percentage_below(values: Any, threshold: Any, weights: Any = None, metrics_collections: Any = None,
                     updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The streamed (weighted) fraction of ``values`` below ``threshold``."""
    below = cast_ops.cast(math_ops.less(values, threshold), dtypes.float32)
    return mean(below, weights, metrics_collections, updates_collections, name or "percentage_below_threshold")


def _flat(t: Any) -> Tensor:
    t = convert_to_tensor(t)
    return array_ops.reshape(t, [-1]) if (t.shape.ndims or 0) > 1 else t


def _mean_iou(total_cm: Tensor) -> Tensor:
    over_rows = cast_ops.cast(reduction_ops.reduce_sum(total_cm, 0), dtypes.float32)
    over_cols = cast_ops.cast(reduction_ops.reduce_sum(total_cm, 1), dtypes.float32)
    diagonal = cast_ops.cast(linalg_ops.diag_part(total_cm), dtypes.float32)
    denominator = over_rows + over_cols - diagonal
    valid = reduction_ops.reduce_sum(cast_ops.cast(math_ops.not_equal(denominator, 0), dtypes.float32))
    denominator = select_ops.where(math_ops.greater(denominator, 0), denominator, array_ops.ones_like(denominator))
    iou = math_ops.divide(diagonal, denominator)
    return select_ops.where(math_ops.greater(valid, 0), reduction_ops.reduce_sum(iou, name="mean_iou") / valid, 0.0)


def mean_iou(labels: Any, predictions: Any, num_classes: int, weights: Any = None, metrics_collections: Any = None,
             updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The streamed mean over classes of intersection-over-union (``tp / (tp + fp + fn)``)
    of integer class ``labels`` and ``predictions``; classes never seen are left out.
    ``update_op`` returns the accumulated float64 confusion matrix, as TensorFlow's does."""
    with variable_scope(name, "mean_iou", (predictions, labels, weights)):
        labels, predictions = convert_to_tensor(labels), convert_to_tensor(predictions)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise InvalidArgumentError(f"mean_iou: predictions of shape {predictions.shape} and labels of shape "
                                       f"{labels.shape} are not compatible")
        total_cm = metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
        current = search_ops.confusion_matrix(_flat(cast_ops.cast(labels, dtypes.int64)),
                                              _flat(cast_ops.cast(predictions, dtypes.int64)), num_classes,
                                              weights=None if weights is None else _flat(weights),
                                              dtype=dtypes.float64)
        update_op = state_ops.assign_add(total_cm, current)
        value = finish(metrics_collections, lambda v: _mean_iou(v.read_value()), total_cm)
        add_to_collections(updates_collections, update_op)
        return value, update_op
