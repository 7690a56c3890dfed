"""Counting metrics over boolean predictions: ``true_positives``, ``false_positives``,
``true_negatives``, ``false_negatives``, and ``precision`` / ``recall`` built on them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.metrics._core import (
    add_to_collections,
    as_float,
    finish,
    metric_variable,
    remove_squeezable_dimensions,
)
from flowmesh.ops import array_ops, cast_ops, math_ops, select_ops, state_ops
from flowmesh.ops.reduction_ops import reduce_sum
from flowmesh.ops.variable_scope import variable_scope


def _bools(labels: Any, predictions: Any, weights: Any) -> tuple[Tensor, Tensor, Any]:
    predictions, labels, weights = remove_squeezable_dimensions(
        cast_ops.cast(predictions, dtypes.bool), cast_ops.cast(labels, dtypes.bool), weights)
    return labels, predictions, weights


def _count_condition(values: Tensor, weights: Any, metrics_collections: Any,
                     updates_collections: Any) -> tuple[Tensor, Tensor]:
    count = metric_variable([], dtypes.float32, name="count")
    values = cast_ops.cast(values, dtypes.float32)
    if weights is not None:
        values = math_ops.multiply(values, as_float(weights))
    value = finish(metrics_collections, lambda v: array_ops.identity(v.read_value()), count)
    update_op = state_ops.assign_add(count, reduce_sum(values))
    add_to_collections(updates_collections, update_op)
    return value, update_op


def _counter(default: str, condition: Callable[[Tensor, Tensor], Tensor]) -> Callable:
    def metric(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
               updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default, (predictions, labels, weights)):
            labels, predictions, weights = _bools(labels, predictions, weights)
            return _count_condition(condition(labels, predictions), weights,
                                    metrics_collections, updates_collections)
    metric.__name__ = default
    metric.__doc__ = (f"The streamed (weighted) count of {default.replace('_', ' ')}; labels and "
                      "predictions are cast to bool. Returns ``(count, update_op)``.")
    return metric


true_positives = _counter("true_positives", lambda lab, pred: math_ops.logical_and(lab, pred))
false_positives = _counter("false_positives",
                           lambda lab, pred: math_ops.logical_and(math_ops.logical_not(lab), pred))
false_negatives = _counter("false_negatives",
                           lambda lab, pred: math_ops.logical_and(lab, math_ops.logical_not(pred)))
true_negatives = _counter("true_negatives", lambda lab, pred: math_ops.logical_and(
    math_ops.logical_not(lab), math_ops.logical_not(pred)))


def _ratio(tp: Tensor, other: Tensor, name: str) -> Tensor:
    denom = tp + other
    return select_ops.where(math_ops.greater(denom, 0.0), math_ops.divide(tp, denom),
                            array_ops.zeros_like(denom), name=name)


def _ratio_metric(default: str, other_fn: Callable) -> Callable:
    def metric(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
               updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default, (predictions, labels, weights)):
            labels, predictions, weights = _bools(labels, predictions, weights)
            tp, tp_update = true_positives(labels, predictions, weights)
            other, other_update = other_fn(labels, predictions, weights)
            value = finish(metrics_collections, lambda a, b: _ratio(a, b, "value"), tp, other)
            update_op = _ratio(tp_update, other_update, "update_op")
            add_to_collections(updates_collections, update_op)
            return value, update_op
    metric.__name__ = default
    return metric


precision = _ratio_metric("precision", false_positives)
precision.__doc__ = ("Streamed precision ``tp / (tp + fp)`` (0 while nothing was predicted "
                     "positive); labels and predictions are cast to bool.")
recall = _ratio_metric("recall", false_negatives)
recall.__doc__ = ("Streamed recall ``tp / (tp + fn)`` (0 while no label was positive); labels "
                  "and predictions are cast to bool.")
