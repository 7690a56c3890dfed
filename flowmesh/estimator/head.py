"""TensorFlow's canned-estimator heads: loss, predictions and eval metrics from logits.

* ``RegressionHead``: squared error; predictions ``{'predictions'}``; metrics ``loss``,
  ``average_loss``, ``label/mean``, ``prediction/mean``.
* ``BinaryClassHead`` (``n_classes=2``): sigmoid cross entropy on one logit; predictions
  ``logits logistic probabilities class_ids classes all_class_ids all_classes``; metrics
  ``accuracy accuracy_baseline auc auc_precision_recall average_loss label/mean
  prediction/mean precision recall loss``.
* ``MultiClassHead``: sparse softmax cross entropy; predictions ``logits probabilities
  class_ids classes all_class_ids all_classes``; metrics ``accuracy average_loss loss``.

The training loss is the weighted *sum* over the batch by default (TensorFlow 1's canned
estimators, ``loss_reduction=tf.losses.Reduction.SUM``; other reductions as asked);
``average_loss`` is the weighted mean per example.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh import metrics
from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.estimator.estimator_spec import EstimatorSpec
from flowmesh.estimator.mode_keys import ModeKeys
from flowmesh.ops import array_ops, cast_ops, math_ops, nn_ops
from flowmesh.ops.constant_op import constant
from flowmesh.ops.gather_ops import gather
from flowmesh.ops.losses import compute_weighted_loss
from flowmesh.ops.manip_ops import tile
from flowmesh.ops.range_ops import range as range_op
from flowmesh.ops.reduction_ops import argmax, reduce_mean, reduce_sum
from flowmesh.ops.string_ops import as_string
from flowmesh.ops.summary_ops import scalar as summary_scalar


class _Head:
    """Shared flow: labels and weights, the loss, and the spec per mode."""

    logits_dimension = 1

    def __init__(self, weight_column: str | None = None, loss_reduction: str | None = None):
        from flowmesh.ops.losses import Reduction

        reduction = loss_reduction or Reduction.SUM
        if reduction not in Reduction.all() or reduction == Reduction.NONE:
            raise InvalidArgumentError(f"loss_reduction must be one of tf.losses.Reduction except NONE, "
                                       f"got {loss_reduction!r}")
        self._weight_column = weight_column
        self._reduction = reduction

    def _weights(self, features: dict) -> Any:
        if self._weight_column is None:
            return 1.0
        if self._weight_column not in features:
            raise InvalidArgumentError(f"weight_column '{self._weight_column}' is missing from the "
                                       f"features {sorted(features)}")
        w = cast_ops.cast(convert_to_tensor(features[self._weight_column]), dtypes.float32)
        return array_ops.reshape(w, [-1, 1])

    def _check_logits(self, logits: Any) -> Tensor:
        logits = convert_to_tensor(logits)
        last = logits.shape.dims[-1] if logits.shape.ndims else None
        last = getattr(last, "value", last)
        if logits.shape.ndims != 2 or last not in (None, self.logits_dimension):
            raise InvalidArgumentError(f"logits must have shape [batch, {self.logits_dimension}], "
                                       f"got {logits.shape}")
        return logits

    def create_estimator_spec(self, features: dict, mode: str, logits: Any, labels: Any = None,
                              train_op_fn: Callable[[Tensor], Any] | None = None) -> EstimatorSpec:
        """The EstimatorSpec for ``mode`` (``train_op_fn(loss)`` builds the train op)."""
        logits = self._check_logits(logits)
        predictions = self._predictions(logits)
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=predictions)
        if labels is None:
            raise InvalidArgumentError(f"labels are required in mode {mode!r}; return (features, "
                                       "labels) from the input_fn")
        labels = self._labels(labels, mode)
        weights = self._weights(features)
        unreduced = self._unreduced_loss(labels, logits)
        loss = self._reduce(unreduced, weights)
        if mode == ModeKeys.EVAL:
            return EstimatorSpec(mode, predictions=predictions, loss=loss,
                                 eval_metric_ops=self._metrics(labels, logits, predictions, unreduced, weights))
        if train_op_fn is None:
            raise InvalidArgumentError("train_op_fn is required in mode 'train'")
        summary_scalar("loss", loss)
        summary_scalar("average_loss", reduce_mean(unreduced))
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op_fn(loss))

    def _reduce(self, unreduced: Tensor, weights: Any) -> Tensor:
        """The training loss: ``unreduced`` weighted and reduced. Without a weight column and
        with the default SUM reduction it is the plain sum (the same value: multiplying by
        1.0 is exact), which spares every step a multiply and its gradient."""
        from flowmesh.ops.losses import Reduction

        if isinstance(weights, float) and weights == 1.0 and self._reduction == Reduction.SUM \
                and unreduced.dtype == dtypes.float32:
            return reduce_sum(unreduced, name="weighted_loss/Sum")
        return compute_weighted_loss(unreduced, weights, loss_collection=None, reduction=self._reduction)

    def _labels(self, labels: Any, mode: str) -> Tensor:
        raise NotImplementedError

    def _unreduced_loss(self, labels: Tensor, logits: Tensor) -> Tensor:
        raise NotImplementedError

    def _predictions(self, logits: Tensor) -> dict:
        raise NotImplementedError

    def _metrics(self, labels: Tensor, logits: Tensor, predictions: dict, unreduced: Tensor,
                 weights: Any) -> dict:
        raise NotImplementedError


def _dense_labels(labels: Any, mode: str, width: int) -> Tensor:
    labels = convert_to_tensor(labels)
    if labels.shape.ndims == 1:
        labels = array_ops.reshape(labels, [-1, 1])
    dim = labels.shape.dims[1] if labels.shape.ndims == 2 else -1
    if getattr(dim, "value", dim) not in (None, width):
        raise InvalidArgumentError(f"labels must have shape [batch, {width}] in mode {mode!r}, got "
                                   f"{labels.shape}")
    return labels


def _weighted(weights: Any, like: Tensor) -> Any:
    return None if isinstance(weights, float) else weights * array_ops.ones_like(like)


class RegressionHead(_Head):
    """Mean squared error regression with ``label_dimension`` outputs."""

    def __init__(self, label_dimension: int = 1, weight_column: str | None = None,
                 loss_reduction: str | None = None):
        super().__init__(weight_column, loss_reduction)
        self.logits_dimension = label_dimension

    def _labels(self, labels: Any, mode: str) -> Tensor:
        labels = _dense_labels(labels, mode, self.logits_dimension)
        if not (labels.dtype.is_floating or labels.dtype.is_integer):
            raise InvalidArgumentError(f"regression labels must be numeric, got {labels.dtype.name} "
                                       f"in mode {mode!r}")
        return cast_ops.cast(labels, dtypes.float32)

    def _unreduced_loss(self, labels: Tensor, logits: Tensor) -> Tensor:
        return math_ops.squared_difference(labels, logits)

    def _predictions(self, logits: Tensor) -> dict:
        return {"predictions": logits}

    def _metrics(self, labels, logits, predictions, unreduced, weights) -> dict:
        w = _weighted(weights, unreduced)
        return {"average_loss": metrics.mean(unreduced, w, name="average_loss"),
                "label/mean": metrics.mean(labels, w, name="label/mean"),
                "prediction/mean": metrics.mean(logits, w, name="prediction/mean")}


class _ClassHead(_Head):
    """Label handling shared by the classification heads."""

    def __init__(self, n_classes: int, weight_column: str | None = None,
                 label_vocabulary: Any = None, loss_reduction: str | None = None):
        super().__init__(weight_column, loss_reduction)
        self._n_classes = n_classes
        if label_vocabulary is not None and len(label_vocabulary) != n_classes:
            raise InvalidArgumentError(f"label_vocabulary has {len(label_vocabulary)} entries for "
                                       f"n_classes={n_classes}")
        self._vocabulary = list(label_vocabulary) if label_vocabulary is not None else None

    def _labels(self, labels: Any, mode: str) -> Tensor:
        labels = _dense_labels(labels, mode, 1)
        if self._vocabulary is not None:
            if labels.dtype != dtypes.string:
                raise InvalidArgumentError(f"with label_vocabulary the labels must be strings, got "
                                           f"{labels.dtype.name} in mode {mode!r}")
            vocab = constant(self._vocabulary)
            found = math_ops.equal(labels, vocab)
            return argmax(cast_ops.cast(found, dtypes.int32), -1, output_type=dtypes.int64)[:, None]
        if not labels.dtype.is_integer:
            raise InvalidArgumentError(
                f"classification labels must be integer class ids in [0, {self._n_classes}) (or "
                f"strings with label_vocabulary), got dtype {labels.dtype.name} in mode {mode!r}; "
                "cast them with tf.cast(labels, tf.int64)")
        return cast_ops.cast(labels, dtypes.int64)

    def _class_strings(self, class_ids: Tensor) -> Tensor:
        if self._vocabulary is None:
            return as_string(class_ids)
        return gather(constant(self._vocabulary), class_ids)

    def _all_classes(self, logits: Tensor) -> dict:
        ids = range_op(0, self._n_classes, dtype=dtypes.int32)
        all_ids = tile(array_ops.reshape(ids, [1, -1]), array_ops.stack([array_ops.shape(logits)[0], 1]))
        return {"all_class_ids": all_ids, "all_classes": self._class_strings(all_ids)}


class BinaryClassHead(_ClassHead):
    """Two classes from one logit (sigmoid cross entropy)."""

    def __init__(self, weight_column: str | None = None, label_vocabulary: Any = None,
                 loss_reduction: str | None = None):
        super().__init__(2, weight_column, label_vocabulary, loss_reduction)

    def _unreduced_loss(self, labels: Tensor, logits: Tensor) -> Tensor:
        return nn_ops.sigmoid_cross_entropy_with_logits(labels=cast_ops.cast(labels, dtypes.float32),
                                                        logits=logits)

    def _predictions(self, logits: Tensor) -> dict:
        logistic = math_ops.sigmoid(logits)
        two = array_ops.concat([array_ops.zeros_like(logits), logits], 1)
        class_ids = argmax(two, 1, output_type=dtypes.int64)[:, None]
        out = {"logits": logits, "logistic": logistic, "probabilities": nn_ops.softmax(two),
               "class_ids": class_ids, "classes": self._class_strings(class_ids)}
        out.update(self._all_classes(logits))
        return out

    def _metrics(self, labels, logits, predictions, unreduced, weights) -> dict:
        w = _weighted(weights, unreduced)
        logistic = predictions["logistic"]
        float_labels = cast_ops.cast(labels, dtypes.float32)
        label_mean = metrics.mean(float_labels, w, name="label/mean")
        baseline = math_ops.maximum(label_mean[0], 1.0 - label_mean[0])
        return {
            "accuracy": metrics.accuracy(labels, predictions["class_ids"], w, name="accuracy"),
            "accuracy_baseline": (baseline, math_ops.maximum(label_mean[1], 1.0 - label_mean[1])),
            "auc": metrics.auc(labels, logistic, w, name="auc"),
            "auc_precision_recall": metrics.auc(labels, logistic, w, curve="PR",
                                                name="auc_precision_recall"),
            "average_loss": metrics.mean(unreduced, w, name="average_loss"),
            "label/mean": label_mean,
            "prediction/mean": metrics.mean(logistic, w, name="prediction/mean"),
            "precision": metrics.precision(labels, predictions["class_ids"], w, name="precision"),
            "recall": metrics.recall(labels, predictions["class_ids"], w, name="recall"),
        }


class MultiClassHead(_ClassHead):
    """``n_classes`` > 2 classes (sparse softmax cross entropy)."""

    def __init__(self, n_classes: int, weight_column: str | None = None, label_vocabulary: Any = None,
                 loss_reduction: str | None = None):
        if n_classes < 3:
            raise InvalidArgumentError(f"MultiClassHead needs n_classes > 2, got {n_classes}")
        super().__init__(n_classes, weight_column, label_vocabulary, loss_reduction)
        self.logits_dimension = n_classes

    def _unreduced_loss(self, labels: Tensor, logits: Tensor) -> Tensor:
        per = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=array_ops.reshape(labels, [-1]),
                                                              logits=logits)
        return array_ops.reshape(per, [-1, 1])

    def _predictions(self, logits: Tensor) -> dict:
        class_ids = argmax(logits, 1, output_type=dtypes.int64)[:, None]
        out = {"logits": logits, "probabilities": nn_ops.softmax(logits), "class_ids": class_ids,
               "classes": self._class_strings(class_ids)}
        out.update(self._all_classes(logits))
        return out

    def _metrics(self, labels, logits, predictions, unreduced, weights) -> dict:
        w = _weighted(weights, unreduced)
        return {"accuracy": metrics.accuracy(labels, predictions["class_ids"], w, name="accuracy"),
                "average_loss": metrics.mean(unreduced, w, name="average_loss")}


def classification_head(n_classes: int, weight_column: str | None = None,
                        label_vocabulary: Any = None, loss_reduction: str | None = None) -> _ClassHead:
    """The binary head for ``n_classes == 2``, the multi-class head above."""
    if n_classes is None or n_classes < 2:
        raise InvalidArgumentError(f"n_classes must be >= 2, got {n_classes}")
    if n_classes == 2:
        return BinaryClassHead(weight_column, label_vocabulary, loss_reduction)
    return MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction)
