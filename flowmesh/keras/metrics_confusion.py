"""Confusion-matrix metrics at thresholds (tf-keras's ``metrics_utils``): ``TruePositives``
& co., ``Precision``, ``Recall``, ``AUC``, ``SensitivityAtSpecificity``,
``SpecificityAtSensitivity``, ``PrecisionAtRecall``, ``RecallAtPrecision``.

A prediction is positive at a threshold when it is strictly greater; each variable holds
one (weighted) count per threshold (per label too with ``multi_label``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core.convert import convert_to_tensor
from flowmesh.keras.metrics_base import Metric
from flowmesh.ops import array_ops, cast_ops, manip_ops, math_ops, reduction_ops

_KINDS = ("true_positives", "false_positives", "true_negatives", "false_negatives")
_NEG_INF = -1e10


def _thresholds(thresholds: Any, default: float = 0.5) -> list[float]:
    if thresholds is None:
        return [default]
    return [float(t) for t in (thresholds if isinstance(thresholds, (list, tuple, np.ndarray)) else [thresholds])]


def _top_k_only(y_pred: Any, k: int) -> Any:
    """``y_pred`` with everything but the top ``k`` entries of the last axis set very low."""
    from flowmesh.ops.nn_impl import top_k

    _, indices = top_k(y_pred, k, sorted=False)
    hot = reduction_ops.reduce_sum(manip_ops.one_hot(indices, array_ops.shape(y_pred)[-1], dtype=y_pred.dtype),
                                   axis=-2)
    return y_pred * hot + _NEG_INF * (1.0 - hot)


def update_confusion_matrix(variables: dict[str, Any], y_true: Any, y_pred: Any, thresholds: list[float],
                            top_k: int | None = None, class_id: int | None = None, sample_weight: Any = None,
                            multi_label: bool = False, label_weights: Any = None) -> Any:
    """The op adding this batch's (weighted) counts to ``variables`` (keys from ``_KINDS``)."""
    from flowmesh.keras.metrics_base import _weights_like
    from flowmesh.ops.control_flow_ops import group

    y_pred = cast_ops.cast(convert_to_tensor(y_pred), "float32")
    y_true = cast_ops.cast(convert_to_tensor(y_true), "float32")
    if y_true.shape.rank is not None and y_pred.shape.rank is not None and y_true.shape.rank == y_pred.shape.rank + 1:
        y_true = array_ops.squeeze(y_true, [-1])
    if top_k is not None:
        y_pred = _top_k_only(y_pred, top_k)
    if class_id is not None:
        y_true, y_pred = y_true[..., class_id], y_pred[..., class_id]
    n = len(thresholds)
    dims = array_ops.shape(y_pred)
    count = dims[0]
    labels = reduction_ops.reduce_prod(dims[1:]) if y_pred.shape.rank and y_pred.shape.rank > 1 else 1
    if multi_label:
        preds, truth = array_ops.expand_dims(y_pred, 0), array_ops.expand_dims(cast_ops.cast(y_true, "bool"), 0)
        pretile, tiles, data_tiles = [n, 1, -1], [1, count, labels], [n, 1, 1]
    else:
        preds = array_ops.reshape(y_pred, [1, -1])
        truth = array_ops.reshape(cast_ops.cast(y_true, "bool"), [1, -1])
        pretile, tiles, data_tiles = [n, -1], [1, count * labels], [n, 1]
    thresh = manip_ops.tile(array_ops.reshape(np.asarray(thresholds, np.float32), pretile), array_ops.stack(tiles))
    pred_pos = math_ops.greater(manip_ops.tile(preds, data_tiles), thresh)
    label_pos = manip_ops.tile(truth, data_tiles)
    weights = None
    if sample_weight is not None:
        weights = manip_ops.tile(array_ops.reshape(_weights_like(sample_weight, y_pred), array_ops.stack(tiles)),
                                 data_tiles)
    if label_weights is not None and not multi_label:
        lw = array_ops.expand_dims(convert_to_tensor(label_weights, dtype="float32"), 0) * array_ops.ones_like(y_pred)
        lw = manip_ops.tile(array_ops.reshape(lw, array_ops.stack(tiles)), data_tiles)
        weights = lw if weights is None else weights * lw
    pairs = {"true_positives": (label_pos, pred_pos),
             "false_negatives": (label_pos, math_ops.logical_not(pred_pos)),
             "false_positives": (math_ops.logical_not(label_pos), pred_pos),
             "true_negatives": (math_ops.logical_not(label_pos), math_ops.logical_not(pred_pos))}
    updates = []
    for key, variable in variables.items():
        label, pred = pairs[key]
        both = cast_ops.cast(math_ops.logical_and(label, pred), "float32")
        if weights is not None:
            both = both * weights
        updates.append(variable.assign_add(reduction_ops.reduce_sum(both, 1)))
    return group(*updates)


class _Confusion(Metric):
    """Counts of ``kinds`` at ``thresholds``."""

    kinds: tuple[str, ...] = ()

    def __init__(self, thresholds: Any = None, top_k: int | None = None, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None, default_threshold: float = 0.5):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        # With top_k, tf-keras's default threshold is NEG_INF: every top-k entry is positive.
        self.thresholds = _thresholds(thresholds, default_threshold if top_k is None else _NEG_INF)
        self.top_k, self.class_id = top_k, class_id
        self._single = thresholds is None or not isinstance(thresholds, (list, tuple, np.ndarray))

    def _shape(self, y_pred: Any) -> list[int]:
        return [len(self.thresholds)]

    def build_state(self, y_pred: Any) -> None:
        for kind in self.kinds:
            self.add_weight(kind, self._shape(y_pred))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        y_pred = convert_to_tensor(y_pred)
        self._ensure(y_pred)
        return update_confusion_matrix({k: self._var(k) for k in self.kinds}, y_true, y_pred, self.thresholds,
                                       self.top_k, self.class_id, sample_weight)

    def _value(self, value: Any) -> Any:
        return value[0] if self._single else value

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "thresholds": self.init_thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


class _Count(_Confusion):
    def __init__(self, thresholds: Any = None, name: str | None = None, dtype: Any = None):
        super().__init__(thresholds, name=name, dtype=dtype)

    def result(self) -> Any:
        self._ensure()
        return self._value(array_ops.identity(self._var(self.kinds[0])))

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "thresholds": self.init_thresholds}


class TruePositives(_Count):
    kinds = ("true_positives",)


class FalsePositives(_Count):
    kinds = ("false_positives",)


class TrueNegatives(_Count):
    kinds = ("true_negatives",)


class FalseNegatives(_Count):
    kinds = ("false_negatives",)


class Precision(_Confusion):
    """``tp / (tp + fp)`` at each threshold (default 0.5), or among the ``top_k`` predictions."""

    kinds = ("true_positives", "false_positives")

    def result(self) -> Any:
        self._ensure()
        tp, fp = self._var("true_positives"), self._var("false_positives")
        return self._value(math_ops.div_no_nan(tp, tp + fp))


class Recall(_Confusion):
    """``tp / (tp + fn)`` at each threshold (default 0.5), or among the ``top_k`` predictions."""

    kinds = ("true_positives", "false_negatives")

    def result(self) -> Any:
        self._ensure()
        tp, fn = self._var("true_positives"), self._var("false_negatives")
        return self._value(math_ops.div_no_nan(tp, tp + fn))


def _even_thresholds(num_thresholds: int, low: float, high: float) -> list[float]:
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [low] + inner + [high]


class _AtConstraint(_Confusion):
    """The best of one rate where another meets ``value`` (tf-keras's sensitivity/specificity
    family: ``num_thresholds`` evenly spaced in [0, 1])."""

    kinds = ("true_positives", "true_negatives", "false_positives", "false_negatives")
    _value_name = "value"

    def __init__(self, value: float, num_thresholds: int = 200, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None):
        if not 0 <= value <= 1:
            raise ValueError(f"`{self._value_name}` must be in the range [0, 1]. Received: {value}")
        if num_thresholds <= 0:
            raise ValueError(f"Argument `num_thresholds` must be an integer > 0. Received: {num_thresholds}")
        super().__init__(None, class_id=class_id, name=name, dtype=dtype)
        self.value, self.num_thresholds = value, num_thresholds
        self.thresholds = [0.5] if num_thresholds == 1 else _even_thresholds(num_thresholds, 0.0, 1.0)

    def _rates(self) -> dict[str, Any]:
        self._ensure()
        tp, tn = self._var("true_positives"), self._var("true_negatives")
        fp, fn = self._var("false_positives"), self._var("false_negatives")
        return {"sensitivity": math_ops.div_no_nan(tp, tp + fn), "specificity": math_ops.div_no_nan(tn, tn + fp),
                "precision": math_ops.div_no_nan(tp, tp + fp), "recall": math_ops.div_no_nan(tp, tp + fn)}

    def _max_under(self, constrained: Any, dependent: Any) -> Any:
        """The largest ``dependent`` where ``constrained >= value``, 0 where none is (the
        rates are >= 0, so the infeasible entries are set to 0 and the maximum taken)."""
        from flowmesh.ops.select_ops import where

        feasible = math_ops.greater_equal(constrained, self.value)
        return reduction_ops.reduce_max(where(feasible, dependent, array_ops.zeros_like(dependent)))

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "num_thresholds": self.num_thresholds,
                "class_id": self.class_id, self._value_name: self.value}


class SensitivityAtSpecificity(_AtConstraint):
    """The best sensitivity (recall) where specificity >= ``specificity``."""

    _value_name = "specificity"

    def __init__(self, specificity: float, num_thresholds: int = 200, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)

    def result(self) -> Any:
        rates = self._rates()
        return self._max_under(rates["specificity"], rates["sensitivity"])


class SpecificityAtSensitivity(_AtConstraint):
    """The best specificity where sensitivity >= ``sensitivity``."""

    _value_name = "sensitivity"

    def __init__(self, sensitivity: float, num_thresholds: int = 200, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)

    def result(self) -> Any:
        rates = self._rates()
        return self._max_under(rates["sensitivity"], rates["specificity"])


class PrecisionAtRecall(_AtConstraint):
    """The best precision where recall >= ``recall``."""

    _value_name = "recall"

    def __init__(self, recall: float, num_thresholds: int = 200, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)

    def result(self) -> Any:
        rates = self._rates()
        return self._max_under(rates["recall"], rates["precision"])


class RecallAtPrecision(_AtConstraint):
    """The best recall where precision >= ``precision``."""

    _value_name = "precision"

    def __init__(self, precision: float, num_thresholds: int = 200, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)

    def result(self) -> Any:
        rates = self._rates()
        return self._max_under(rates["precision"], rates["recall"])


class AUC(_Confusion):
    """Area under the ROC or PR curve from counts at ``num_thresholds`` thresholds
    (``summation_method``: ``interpolation`` (PR: Davis & Goadrich), ``minoring``,
    ``majoring``); ``multi_label``: one curve per label, averaged (``label_weights``)."""

    kinds = ("true_positives", "true_negatives", "false_positives", "false_negatives")

    def __init__(self, num_thresholds: int = 200, curve: str = "ROC", summation_method: str = "interpolation",
                 name: str | None = None, dtype: Any = None, thresholds: Any = None, multi_label: bool = False,
                 num_labels: int | None = None, label_weights: Any = None, from_logits: bool = False):
        super().__init__(None, name=name, dtype=dtype)
        self.curve, self.summation_method = curve.upper(), summation_method.lower()
        if self.curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid curve: "{curve}". Valid options are: "[ROC, PR]"')
        if self.summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid summation method: "{summation_method}".')
        eps = 1e-7
        if thresholds is not None:
            self.num_thresholds = len(thresholds) + 2
            self.thresholds = [0.0 - eps] + sorted(float(t) for t in thresholds) + [1.0 + eps]
            self._init_thresholds = True
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. Received: {num_thresholds}")
            self.num_thresholds = num_thresholds
            self.thresholds = _even_thresholds(num_thresholds, 0.0 - eps, 1.0 + eps)
            self._init_thresholds = False
        self.multi_label, self.num_labels, self.from_logits = multi_label, num_labels, from_logits
        self.label_weights = None if label_weights is None else np.asarray(label_weights, np.float32)

    def _shape(self, y_pred: Any) -> list[int]:
        if not self.multi_label:
            return [self.num_thresholds]
        labels = self.num_labels or y_pred.shape.as_list()[-1]
        return [self.num_thresholds, labels]

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        y_pred = convert_to_tensor(y_pred)
        if self.from_logits:
            y_pred = math_ops.sigmoid(y_pred)
        self._ensure(y_pred)
        return update_confusion_matrix({k: self._var(k) for k in self.kinds}, y_true, y_pred, self.thresholds,
                                       sample_weight=sample_weight, multi_label=self.multi_label,
                                       label_weights=None if self.multi_label else self.label_weights)

    def _per_label(self, by_label: Any) -> Any:
        if self.label_weights is None:
            return reduction_ops.reduce_mean(by_label)
        weights = convert_to_tensor(self.label_weights)
        return math_ops.div_no_nan(reduction_ops.reduce_sum(by_label * weights), reduction_ops.reduce_sum(weights))

    def _interpolate_pr_auc(self, tp: Any, fp: Any, fn: Any) -> Any:
        from flowmesh.ops.select_ops import where

        n = self.num_thresholds
        dtp = tp[:n - 1] - tp[1:]
        p = tp + fp
        dp = p[:n - 1] - p[1:]
        slope = math_ops.div_no_nan(dtp, math_ops.maximum(dp, 0.0))
        intercept = tp[1:] - slope * p[1:]
        both = math_ops.logical_and(math_ops.greater(p[:n - 1], 0.0), math_ops.greater(p[1:], 0.0))
        ratio = where(both, math_ops.div_no_nan(p[:n - 1], math_ops.maximum(p[1:], 0.0)), array_ops.ones_like(p[1:]))
        increment = math_ops.div_no_nan(slope * (dtp + intercept * math_ops.log(ratio)),
                                        math_ops.maximum(tp[1:] + fn[1:], 0.0))
        if self.multi_label:
            return self._per_label(reduction_ops.reduce_sum(increment, axis=0))
        return reduction_ops.reduce_sum(increment)

    def result(self) -> Any:
        self._ensure()
        tp, fp = self._var("true_positives"), self._var("false_positives")
        tn, fn = self._var("true_negatives"), self._var("false_negatives")
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolate_pr_auc(tp, fp, fn)
        recall = math_ops.div_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = math_ops.div_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, math_ops.div_no_nan(tp, tp + fp)
        n = self.num_thresholds
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = math_ops.minimum(y[:n - 1], y[1:])
        else:
            heights = math_ops.maximum(y[:n - 1], y[1:])
        terms = (x[:n - 1] - x[1:]) * heights
        if self.multi_label:
            return self._per_label(reduction_ops.reduce_sum(terms, axis=0))
        return reduction_ops.reduce_sum(terms)

    def get_config(self) -> dict[str, Any]:
        config = {"name": self.name, "dtype": self.dtype, "num_thresholds": self.num_thresholds,
                  "curve": self.curve, "summation_method": self.summation_method, "multi_label": self.multi_label,
                  "num_labels": self.num_labels, "label_weights": None if self.label_weights is None else
                  self.label_weights.tolist(), "from_logits": self.from_logits}
        if self._init_thresholds:
            config["thresholds"] = self.thresholds[1:-1]
        return config
