"""Streaming metrics over confusion counts at thresholds: ``true_positives_at_thresholds``
(and the other three counts), ``precision_at_thresholds``, ``recall_at_thresholds``,
``sensitivity_at_specificity``, ``specificity_at_sensitivity``; counts and epsilons as
TensorFlow's ``metrics_impl.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.metrics._core import add_to_collections, finish
from flowmesh.metrics.auc import confusion_matrix_at_thresholds
from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops
from flowmesh.ops.variable_scope import variable_scope

_KEPSILON = 1e-7


def _count_at_thresholds(key: str, default: str) -> Callable:
    def metric(labels: Any, predictions: Any, thresholds: Any, weights: Any = None, metrics_collections: Any = None,
               updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default, (predictions, labels, weights)):
            values, updates = confusion_matrix_at_thresholds(labels, predictions, list(thresholds), weights,
                                                             includes=(key,))
            value = finish(metrics_collections, lambda v: array_ops.identity(v.read_value()), values[key])
            add_to_collections(updates_collections, updates[key])
            return value, updates[key]
    metric.__name__ = f"{default}_at_thresholds"
    metric.__doc__ = (f"The streamed (weighted) count of {default.replace('_', ' ')} at each threshold "
                      "(a prediction above the threshold is positive). Returns ``(counts, update_op)``, "
                      "each of shape ``[len(thresholds)]``.")
    return metric


true_positives_at_thresholds = _count_at_thresholds("tp", "true_positives")
false_positives_at_thresholds = _count_at_thresholds("fp", "false_positives")
true_negatives_at_thresholds = _count_at_thresholds("tn", "true_negatives")
false_negatives_at_thresholds = _count_at_thresholds("fn", "false_negatives")


def _ratio_at_thresholds(default: str, other: str) -> Callable:
    def metric(labels: Any, predictions: Any, thresholds: Any, weights: Any = None, metrics_collections: Any = None,
               updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, f"{default}_at_thresholds", (predictions, labels, weights)):
            values, updates = confusion_matrix_at_thresholds(labels, predictions, list(thresholds), weights,
                                                             includes=("tp", other))

            def ratio(tp: Tensor, o: Tensor, suffix: str) -> Tensor:
                return math_ops.divide(tp, _KEPSILON + tp + o, name=f"{default}_{suffix}")
            value = finish(metrics_collections, lambda v: ratio(v["tp"].read_value(), v[other].read_value(),
                                                                "value"), values)
            update_op = ratio(updates["tp"], updates[other], "update_op")
            add_to_collections(updates_collections, update_op)
            return value, update_op
    metric.__name__ = f"{default}_at_thresholds"
    return metric


precision_at_thresholds = _ratio_at_thresholds("precision", "fp")
precision_at_thresholds.__doc__ = "Streamed ``tp / (tp + fp + 1e-7)`` at each threshold."
recall_at_thresholds = _ratio_at_thresholds("recall", "fn")
recall_at_thresholds.__doc__ = "Streamed ``tp / (tp + fn + 1e-7)`` at each threshold."


def _thresholds(num_thresholds: int, top: float) -> list[float]:
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _KEPSILON] + inner + [top]


def _at_operating_point(default: str, target_name: str, compute: Callable, top: float) -> Callable:
    def metric(labels: Any, predictions: Any, target: float, weights: Any = None, num_thresholds: int = 200,
               metrics_collections: Any = None, updates_collections: Any = None,
               name: str | None = None) -> tuple[Tensor, Tensor]:
        if target < 0 or target > 1:
            raise ValueError(f"`{target_name}` must be in the range [0, 1]. Currently, `{target_name}` is {target}.")
        with variable_scope(name, default, (predictions, labels, weights)):
            values, updates = confusion_matrix_at_thresholds(labels, predictions, _thresholds(num_thresholds, top),
                                                             weights)
            value = finish(metrics_collections, lambda v: compute(
                {k: x.read_value() for k, x in v.items()}, target, "value"), values)
            update_op = compute(updates, target, "update_op")
            add_to_collections(updates_collections, update_op)
            return value, update_op
    metric.__name__ = default
    return metric


def _sensitivity(c: dict[str, Tensor], specificity: float, name: str) -> Tensor:
    specificities = math_ops.divide(c["tn"], c["tn"] + c["fp"] + _KEPSILON)
    index = cast_ops.cast(reduction_ops.argmin(math_ops.abs(specificities - specificity), 0), dtypes.int32)
    return math_ops.divide(c["tp"][index], c["tp"][index] + c["fn"][index] + _KEPSILON, name)


def _specificity(c: dict[str, Tensor], sensitivity: float, name: str) -> Tensor:
    distance = math_ops.abs(math_ops.divide(c["tp"], c["tp"] + c["fn"] + _KEPSILON) - sensitivity)
    at_min = cast_ops.cast(math_ops.equal(distance, reduction_ops.reduce_min(distance)), dtypes.int64)
    index = cast_ops.cast(reduction_ops.argmax(reduction_ops.cumsum(at_min), 0), dtypes.int32)  # the last closest
    return math_ops.divide(c["tn"][index], c["tn"][index] + c["fp"][index] + _KEPSILON, name)


_sensitivity_at = _at_operating_point("sensitivity_at_specificity", "specificity", _sensitivity, 1.0 + _KEPSILON)
_specificity_at = _at_operating_point("specificity_at_sensitivity", "sensitivity", _specificity, 1.0 - _KEPSILON)


def sensitivity_at_specificity(labels: Any, predictions: Any, specificity: float, weights: Any = None,
                               num_thresholds: int = 200, metrics_collections: Any = None,
                               updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The streamed sensitivity (recall) at the threshold whose specificity is closest to
    ``specificity``, over ``num_thresholds`` thresholds in [0, 1]."""
    return _sensitivity_at(labels, predictions, specificity, weights, num_thresholds, metrics_collections,
                           updates_collections, name)


def specificity_at_sensitivity(labels: Any, predictions: Any, sensitivity: float, weights: Any = None,
                               num_thresholds: int = 200, metrics_collections: Any = None,
                               updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The streamed specificity at the (last) threshold whose sensitivity is closest to
    ``sensitivity``."""
    return _specificity_at(labels, predictions, sensitivity, weights, num_thresholds, metrics_collections,
                           updates_collections, name)
