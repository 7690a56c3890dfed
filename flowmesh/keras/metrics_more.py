"""Accumulating metrics beyond per-sample means (tf-keras's definitions): the IoU family
(``IoU``, ``MeanIoU``, ``BinaryIoU``, ``OneHotIoU``, ``OneHotMeanIoU``),
``RootMeanSquaredError``, ``MeanRelativeError``, ``R2Score``, ``FBetaScore``/``F1Score``."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core.convert import convert_to_tensor
from flowmesh.keras.metrics_base import Mean, Metric, _weights_like
from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops


class IoU(Metric):
    """Intersection over union ``tp / (tp + fp + fn)`` per class of ``target_class_ids``,
    averaged over the classes that occur, from a confusion matrix of all the batches."""

    def __init__(self, num_classes: int, target_class_ids: Any, name: str | None = None, dtype: Any = None,
                 ignore_class: int | None = None, sparse_y_true: bool = True, sparse_y_pred: bool = True,
                 axis: int = -1):
        super().__init__(name=name, dtype=dtype)
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which is "
                             f"[0, {num_classes}).")
        self.num_classes, self.target_class_ids = num_classes, list(target_class_ids)
        self.ignore_class, self.sparse_y_true, self.sparse_y_pred, self.axis = \
            ignore_class, sparse_y_true, sparse_y_pred, axis

    def build_state(self, y_pred: Any) -> None:
        self.add_weight("total_confusion_matrix", [self.num_classes, self.num_classes], dtype="float64")

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        from flowmesh.ops.gather_ops import gather
        from flowmesh.ops.search_ops import confusion_matrix
        from flowmesh.ops.select_ops import where

        self._ensure(y_pred)
        y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
        if not self.sparse_y_true:
            y_true = reduction_ops.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = reduction_ops.argmax(y_pred, axis=self.axis)
        y_true = array_ops.reshape(cast_ops.cast(y_true, "int64"), [-1])
        y_pred = array_ops.reshape(cast_ops.cast(y_pred, "int64"), [-1])
        weight = None
        if sample_weight is not None:
            weight = array_ops.reshape(cast_ops.cast(convert_to_tensor(sample_weight), "float64"), [-1])
            weight = weight * array_ops.ones_like(cast_ops.cast(y_true, "float64"))
        if self.ignore_class is not None:
            keep = where(math_ops.not_equal(y_true, self.ignore_class))[:, 0]
            y_true, y_pred = gather(y_true, keep), gather(y_pred, keep)
            weight = gather(weight, keep) if weight is not None else None
        matrix = confusion_matrix(y_true, y_pred, self.num_classes, weights=weight, dtype="float64")
        return self._var("total_confusion_matrix").assign_add(matrix)

    def result(self) -> Any:
        from flowmesh.ops.gather_ops import gather
        from flowmesh.ops.linalg_ops import matrix_diag_part

        self._ensure()
        matrix = self._var("total_confusion_matrix")
        rows = cast_ops.cast(reduction_ops.reduce_sum(matrix, axis=0), self._dtype)
        cols = cast_ops.cast(reduction_ops.reduce_sum(matrix, axis=1), self._dtype)
        tp = cast_ops.cast(matrix_diag_part(matrix), self._dtype)
        ids = np.asarray(self.target_class_ids, np.int32)
        tp, denominator = gather(tp, ids), gather(rows + cols - tp, ids)
        valid = reduction_ops.reduce_sum(cast_ops.cast(math_ops.greater(denominator, 1e-9), self._dtype))
        return math_ops.div_no_nan(reduction_ops.reduce_sum(math_ops.div_no_nan(tp, denominator)), valid)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "num_classes": self.num_classes, "target_class_ids": self.target_class_ids,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class MeanIoU(IoU):
    """The mean IoU over all ``num_classes`` classes."""

    def __init__(self, num_classes: int, name: str | None = None, dtype: Any = None, ignore_class: int | None = None,
                 sparse_y_true: bool = True, sparse_y_pred: bool = True, axis: int = -1):
        super().__init__(num_classes, list(range(num_classes)), name, dtype, ignore_class, sparse_y_true,
                         sparse_y_pred, axis)

    def get_config(self) -> dict[str, Any]:
        return {k: v for k, v in super().get_config().items() if k != "target_class_ids"}


class BinaryIoU(IoU):
    """IoU of binary predictions (``y_pred > threshold``) for ``target_class_ids``."""

    def __init__(self, target_class_ids: Any = (0, 1), threshold: float = 0.5, name: str | None = None,
                 dtype: Any = None):
        super().__init__(2, list(target_class_ids), name, dtype)
        self.threshold = threshold

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        y_pred = cast_ops.cast(math_ops.greater(cast_ops.cast(convert_to_tensor(y_pred), self._dtype),
                                                self.threshold), "int64")
        return super().update_state(cast_ops.cast(convert_to_tensor(y_true), "int64"), y_pred, sample_weight)

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "target_class_ids": self.target_class_ids,
                "threshold": self.threshold}


class OneHotIoU(IoU):
    """IoU of one-hot labels and predicted scores (their arg-maxes)."""

    def __init__(self, num_classes: int, target_class_ids: Any, name: str | None = None, dtype: Any = None,
                 ignore_class: int | None = None, sparse_y_pred: bool = False, axis: int = -1):
        super().__init__(num_classes, target_class_ids, name, dtype, ignore_class, False, sparse_y_pred, axis)

    def get_config(self) -> dict[str, Any]:
        return {k: v for k, v in super().get_config().items() if k != "sparse_y_true"}


class OneHotMeanIoU(MeanIoU):
    """The mean IoU of one-hot labels and predicted scores."""

    def __init__(self, num_classes: int, name: str | None = None, dtype: Any = None, ignore_class: int | None = None,
                 sparse_y_pred: bool = False, axis: int = -1):
        super().__init__(num_classes, name, dtype, ignore_class, False, sparse_y_pred, axis)

    def get_config(self) -> dict[str, Any]:
        return {k: v for k, v in super().get_config().items() if k != "sparse_y_true"}


class RootMeanSquaredError(Mean):
    """``sqrt`` of the weighted mean squared error."""

    def __init__(self, name: str = "root_mean_squared_error", dtype: Any = None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        y_pred = cast_ops.cast(convert_to_tensor(y_pred), self._dtype)
        y_true = cast_ops.cast(convert_to_tensor(y_true), self._dtype)
        return super().update_state(math_ops.squared_difference(y_pred, y_true), sample_weight=sample_weight)

    def result(self) -> Any:
        return math_ops.sqrt(super().result())


class MeanRelativeError(Mean):
    """The weighted mean of ``|y_pred - y_true| / normalizer``."""

    def __init__(self, normalizer: Any, name: str | None = None, dtype: Any = None):
        super().__init__(name=name or "mean_relative_error", dtype=dtype)
        self.normalizer = normalizer

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        y_pred = cast_ops.cast(convert_to_tensor(y_pred), self._dtype)
        y_true = cast_ops.cast(convert_to_tensor(y_true), self._dtype)
        normalizer = cast_ops.cast(convert_to_tensor(self.normalizer), self._dtype)
        relative = math_ops.div_no_nan(math_ops.abs(y_true - y_pred), normalizer)
        return super().update_state(relative, sample_weight=sample_weight)

    def get_config(self) -> dict[str, Any]:
        normalizer = self.normalizer
        return {**super().get_config(), "normalizer": np.asarray(normalizer).tolist()}


class R2Score(Metric):
    """The coefficient of determination per output column, averaged (``uniform_average``),
    weighted by the columns' variances (``variance_weighted_average``) or not (None);
    ``num_regressors`` > 0 gives the adjusted R2."""

    def __init__(self, class_aggregation: str | None = "uniform_average", num_regressors: int = 0,
                 name: str = "r2_score", dtype: Any = None):
        super().__init__(name=name, dtype=dtype)
        if class_aggregation not in (None, "uniform_average", "variance_weighted_average"):
            raise ValueError(f"Invalid value for argument `class_aggregation`. Received: {class_aggregation}")
        if num_regressors < 0:
            raise ValueError(f"Invalid value for argument `num_regressors`. Received: {num_regressors}")
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors

    def build_state(self, y_pred: Any) -> None:
        width = y_pred.shape.as_list()[-1]
        for name in ("squared_sum", "sum", "residual", "count"):
            self.add_weight(name, [width])
        self.add_weight("num_samples", [], dtype="int32")

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        from flowmesh.ops.control_flow_ops import group

        y_pred = cast_ops.cast(convert_to_tensor(y_pred), self._dtype)
        y_true = cast_ops.cast(convert_to_tensor(y_true), self._dtype)
        if y_pred.shape.rank != 2:
            raise ValueError(f"R2Score expects 2D inputs with shape (batch_size, output_dim). Received input "
                             f"shapes: y_pred.shape={y_pred.shape} and y_true.shape={y_true.shape}.")
        self._ensure(y_pred)
        weight = _weights_like(sample_weight if sample_weight is not None else 1.0, y_true)
        weighted = y_true * weight
        return group(self._var("sum").assign_add(reduction_ops.reduce_sum(weighted, axis=0)),
                     self._var("squared_sum").assign_add(reduction_ops.reduce_sum(y_true * weighted, axis=0)),
                     self._var("residual").assign_add(reduction_ops.reduce_sum(
                         math_ops.square(y_true - y_pred) * weight, axis=0)),
                     self._var("count").assign_add(reduction_ops.reduce_sum(weight, axis=0)),
                     self._var("num_samples").assign_add(array_ops.size(y_true)))

    def result(self) -> Any:
        from flowmesh.ops.select_ops import where

        self._ensure()
        total_sum, count = self._var("sum"), self._var("count")
        mean = total_sum / count
        total = self._var("squared_sum") - total_sum * mean
        raw = 1.0 - self._var("residual") / total
        raw = where(math_ops.is_inf(raw), array_ops.zeros_like(raw), raw)
        if self.class_aggregation == "uniform_average":
            score = reduction_ops.reduce_mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            score = reduction_ops.reduce_sum(total * raw) / reduction_ops.reduce_sum(total)
        else:
            score = raw
        if self.num_regressors:
            n = cast_ops.cast(self._var("num_samples"), self._dtype)
            score = 1.0 - (1.0 - score) * (n - 1.0) / (n - float(self.num_regressors) - 1.0)
        return score

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}


class FBetaScore(Metric):
    """The F-beta score per class (``average``: None, ``micro``, ``macro``, ``weighted``) of
    ``[batch, classes]`` predictions: the arg-max per sample, or ``> threshold``."""

    def __init__(self, average: str | None = None, beta: float = 1.0, threshold: float | None = None,
                 name: str = "fbeta_score", dtype: Any = None):
        super().__init__(name=name, dtype=dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError(f"Invalid `average` argument value. Expected one of: {{None, 'micro', 'macro', "
                             f"'weighted'}}. Received: average={average}")
        if beta <= 0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: beta={beta}")
        self.average, self.beta, self.threshold = average, float(beta), threshold

    def build_state(self, y_pred: Any) -> None:
        shape = [] if self.average == "micro" else [y_pred.shape.as_list()[-1]]
        for name in ("true_positives", "false_positives", "false_negatives", "intermediate_weights"):
            self.add_weight(name, shape)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        from flowmesh.ops.control_flow_ops import group

        y_true = cast_ops.cast(convert_to_tensor(y_true), self._dtype)
        y_pred = cast_ops.cast(convert_to_tensor(y_pred), self._dtype)
        self._ensure(y_pred)
        if self.threshold is None:  # the arg-max (ties all count), never an all-zero row
            top = reduction_ops.reduce_max(y_pred, axis=-1, keepdims=True)
            y_pred = cast_ops.cast(math_ops.logical_and(math_ops.greater_equal(y_pred, top),
                                                        math_ops.greater(math_ops.abs(y_pred), 1e-12)), self._dtype)
        else:
            y_pred = cast_ops.cast(math_ops.greater(y_pred, self.threshold), self._dtype)
        axis = None if self.average == "micro" else 0

        def total(value: Any) -> Any:
            if sample_weight is not None:
                value = value * array_ops.expand_dims(cast_ops.cast(convert_to_tensor(sample_weight),
                                                                    self._dtype), 1)
            return reduction_ops.reduce_sum(value, axis=axis)

        return group(self._var("true_positives").assign_add(total(y_pred * y_true)),
                     self._var("false_positives").assign_add(total(y_pred * (1 - y_true))),
                     self._var("false_negatives").assign_add(total((1 - y_pred) * y_true)),
                     self._var("intermediate_weights").assign_add(total(y_true)))

    def result(self) -> Any:
        self._ensure()
        tp, fp, fn = self._var("true_positives"), self._var("false_positives"), self._var("false_negatives")
        precision = math_ops.div_no_nan(tp, tp + fp)
        recall = math_ops.div_no_nan(tp, tp + fn)
        beta2 = self.beta ** 2
        score = math_ops.div_no_nan((1 + beta2) * precision * recall, beta2 * precision + recall)
        if self.average == "weighted":
            weights = math_ops.div_no_nan(self._var("intermediate_weights"),
                                          reduction_ops.reduce_sum(self._var("intermediate_weights")))
            return reduction_ops.reduce_sum(score * weights)
        if self.average is not None:
            return reduction_ops.reduce_mean(score)
        return score

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "average": self.average, "beta": self.beta, "threshold": self.threshold}


class F1Score(FBetaScore):
    """The F1 score (``FBetaScore`` with ``beta=1``)."""

    def __init__(self, average: str | None = None, threshold: float | None = None, name: str = "f1_score",
                 dtype: Any = None):
        super().__init__(average, 1.0, threshold, name, dtype)

    def get_config(self) -> dict[str, Any]:
        return {k: v for k, v in super().get_config().items() if k != "beta"}
