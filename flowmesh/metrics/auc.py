"""``tf.metrics.auc``: the area under the ROC or PR curve from confusion counts at fixed
thresholds, with TensorFlow's thresholds (``num_thresholds`` evenly spaced in (0, 1) plus
``-1e-7`` and ``1 + 1e-7``), epsilons and summation methods."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.metrics._core import (
    add_to_collections,
    as_float,
    broadcast_weights,
    finish,
    metric_variable,
    remove_squeezable_dimensions,
)
from flowmesh.ops import array_ops, cast_ops, math_ops, select_ops, state_ops
from flowmesh.ops.constant_op import constant
from flowmesh.ops.manip_ops import tile
from flowmesh.ops.reduction_ops import reduce_sum
from flowmesh.ops.variable_scope import variable_scope

_NAMES = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
          "fp": "false_positives"}


def confusion_matrix_at_thresholds(labels: Any, predictions: Any, thresholds: list[float],
                                   weights: Any = None, includes: Any = None
                                   ) -> tuple[dict[str, Any], dict[str, Tensor]]:
    """Per-threshold weighted counts: ``tp[i]`` counts positives predicted ``> thresholds[i]``.

    Returns:
        ``(variables, update_ops)``, dicts keyed by ``'tp' 'fn' 'tn' 'fp'`` (those in
        ``includes``), each of shape ``[len(thresholds)]``.
    """
    includes = tuple(includes or ("tp", "fn", "tn", "fp"))
    for key in includes:
        if key not in _NAMES:
            raise InvalidArgumentError(f"Invalid key: {key}; use 'tp', 'fn', 'tn' or 'fp'")
    predictions, labels, weights = remove_squeezable_dimensions(
        as_float(predictions), cast_ops.cast(labels, dtypes.bool), weights)
    n = len(thresholds)
    pred_row = array_ops.reshape(predictions, [1, -1])
    thresh = array_ops.reshape(constant(thresholds, dtype=dtypes.float32), [n, 1])
    pred_pos = math_ops.greater(tile(pred_row, [n, 1]), thresh)
    label_pos = tile(array_ops.reshape(labels, [1, -1]), [n, 1])
    w = None
    if weights is not None:
        w = tile(array_ops.reshape(broadcast_weights(as_float(weights), predictions), [1, -1]),
                 [n, 1])
    cases = {"tp": (label_pos, pred_pos), "fn": (label_pos, math_ops.logical_not(pred_pos)),
             "tn": (math_ops.logical_not(label_pos), math_ops.logical_not(pred_pos)),
             "fp": (math_ops.logical_not(label_pos), pred_pos)}
    values: dict[str, Any] = {}
    updates: dict[str, Tensor] = {}
    for key in ("tp", "fn", "tn", "fp"):
        if key not in includes:
            continue
        var = metric_variable([n], dtypes.float32, name=_NAMES[key])
        hit = cast_ops.cast(math_ops.logical_and(*cases[key]), dtypes.float32)
        if w is not None:
            hit = hit * w
        updates[key] = state_ops.assign_add(var, reduce_sum(hit, 1))
        values[key] = var
    return values, updates


def _interpolate_pr_auc(tp: Tensor, fp: Tensor, fn: Tensor, n: int) -> Tensor:
    dtp = tp[:n - 1] - tp[1:]
    p = tp + fp
    slope = math_ops.div_no_nan(dtp, math_ops.maximum(p[:n - 1] - p[1:], 0.0), name="prec_slope")
    intercept = tp[1:] - math_ops.multiply(slope, p[1:])
    both = math_ops.logical_and(p[:n - 1] > 0, p[1:] > 0)
    ratio = select_ops.where(both, math_ops.div_no_nan(p[:n - 1], math_ops.maximum(p[1:], 0.0)),
                             array_ops.ones_like(p[1:]))
    return reduce_sum(math_ops.div_no_nan(slope * (dtp + intercept * math_ops.log(ratio)),
                                          math_ops.maximum(tp[1:] + fn[1:], 0.0)),
                      name="interpolate_pr_auc")


def _area(c: dict[str, Tensor], n: int, curve: str, method: str, name: str) -> Tensor:
    tp, fn, tn, fp = c["tp"], c["fn"], c["tn"], c["fp"]
    if curve == "PR" and method == "careful_interpolation":
        return _interpolate_pr_auc(tp, fp, fn, n)
    eps = 1e-6
    rec = math_ops.divide(tp + eps, tp + fn + eps)
    if curve == "ROC":
        x, y = math_ops.divide(fp, fp + tn + eps), rec
    else:
        x, y = rec, math_ops.divide(tp + eps, tp + fp + eps)
    dx = x[:n - 1] - x[1:]
    if method in ("trapezoidal", "careful_interpolation"):
        height = (y[:n - 1] + y[1:]) / 2.0
    elif method == "minoring":
        height = math_ops.minimum(y[:n - 1], y[1:])
    else:
        height = math_ops.maximum(y[:n - 1], y[1:])
    return reduce_sum(math_ops.multiply(dx, height), name=name)


def auc(labels: Any, predictions: Any, weights: Any = None, num_thresholds: int = 200,
        metrics_collections: Any = None, updates_collections: Any = None, curve: str = "ROC",
        name: str | None = None, summation_method: str = "trapezoidal",
        thresholds: Any = None) -> tuple[Tensor, Tensor]:
    """The approximate AUC (Riemann sum over confusion counts at thresholds).

    Args:
        labels: cast to bool. predictions: floats in ``[0, 1]``.
        curve: ``'ROC'`` or ``'PR'``. summation_method: ``'trapezoidal'``,
            ``'careful_interpolation'``, ``'minoring'`` or ``'majoring'``.
        thresholds: explicit thresholds (then ``num_thresholds`` is ignored).
    Returns:
        ``(auc, update_op)``.
    """
    if curve not in ("ROC", "PR"):
        raise InvalidArgumentError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
    if summation_method not in ("trapezoidal", "careful_interpolation", "minoring", "majoring"):
        raise InvalidArgumentError(
            f"Invalid summation_method: {summation_method}; use 'trapezoidal', "
            "'careful_interpolation', 'minoring' or 'majoring'")
    with variable_scope(name, "auc", (labels, predictions, weights)):
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
        else:
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        kepsilon = 1e-7
        cuts = [0.0 - kepsilon] + inner + [1.0 + kepsilon]
        n = len(cuts)
        values, updates = confusion_matrix_at_thresholds(labels, predictions, cuts, weights)
        value = finish(metrics_collections, lambda v: _area(
            {k: x.read_value() for k, x in v.items()}, n, curve, summation_method, "value"), values)
        update_op = _area(updates, n, curve, summation_method, "update_op")
        add_to_collections(updates_collections, update_op)
        return value, update_op
