"""``tf.keras.metrics``: per-sample metric functions, metric classes and lookup by name.

``Model.compile(metrics=[...])`` evaluates each function (or ``MeanMetricWrapper``
class such as ``BinaryAccuracy``) per sample in the training graph and the training loop
averages them over the samples seen in the epoch, as Keras's stateful ``Mean`` metrics do;
accumulating metrics (``AUC``, ``Precision``, ``MeanIoU``... in :mod:`metrics_confusion` and
:mod:`metrics_more`) are updated each batch (see :mod:`metrics_base`).
"""

from __future__ import annotations

from typing import Any

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.keras import losses
from flowmesh.keras.metrics_base import Mean, MeanMetricWrapper, MeanTensor, Metric, Sum, wrapper_class
from flowmesh.keras.metrics_confusion import (
    AUC,
    FalseNegatives,
    FalsePositives,
    Precision,
    PrecisionAtRecall,
    Recall,
    RecallAtPrecision,
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
    TrueNegatives,
    TruePositives,
)
from flowmesh.keras.metrics_more import (
    BinaryIoU,
    F1Score,
    FBetaScore,
    IoU,
    MeanIoU,
    MeanRelativeError,
    OneHotIoU,
    OneHotMeanIoU,
    R2Score,
    RootMeanSquaredError,
)
from flowmesh.ops import array_ops, cast_ops, math_ops, nn_impl
from flowmesh.ops.reduction_ops import argmax, reduce_mean

_fill_namespace(globals(), "keras.metrics")


def _float(x: Any) -> Any:
    return cast_ops.cast(x, dtypes.float32)


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> Any:
    y_pred = convert_to_tensor(y_pred)
    y_true = cast_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    hits = math_ops.equal(y_true, cast_ops.cast(math_ops.greater(y_pred, threshold), y_pred.dtype))
    return reduce_mean(_float(hits), axis=-1)


def _argmax_scores(y_pred: Any) -> Any:
    """What to take the arg-max of: a ``Softmax`` output's input (the logits; softmax keeps
    their order), so a training step that needs only the loss, which Keras computes from the
    logits too, does not run the softmax."""
    op = getattr(y_pred, "op", None)
    if op is not None and op.type == "Softmax" and len(op.inputs) == 1:
        return op.inputs[0]
    return y_pred


def categorical_accuracy(y_true: Any, y_pred: Any) -> Any:
    return _float(math_ops.equal(argmax(y_true, axis=-1), argmax(_argmax_scores(convert_to_tensor(y_pred)),
                                                                    axis=-1)))


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> Any:
    y_pred = convert_to_tensor(y_pred)
    y_true = convert_to_tensor(y_true)
    if y_true.shape.rank is not None and y_pred.shape.rank is not None and y_true.shape.rank == y_pred.shape.rank:
        y_true = array_ops.squeeze(y_true, [-1])
    predicted = cast_ops.cast(argmax(_argmax_scores(y_pred), axis=-1), dtypes.int64)
    return _float(math_ops.equal(cast_ops.cast(y_true, dtypes.int64), predicted))


def top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Any:
    return _float(nn_impl.in_top_k(y_pred, cast_ops.cast(argmax(y_true, axis=-1), dtypes.int32), k))


def sparse_top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Any:
    y_true = convert_to_tensor(y_true)
    if y_true.shape.rank is not None and y_true.shape.rank > 1:
        y_true = array_ops.reshape(y_true, [-1])
    return _float(nn_impl.in_top_k(y_pred, cast_ops.cast(y_true, dtypes.int32), k))


def accuracy(y_true: Any, y_pred: Any) -> Any:
    y_pred = convert_to_tensor(y_pred)
    return _float(math_ops.equal(cast_ops.cast(convert_to_tensor(y_true), y_pred.dtype), y_pred))


mse = MSE = mean_squared_error = losses.mean_squared_error
mae = MAE = mean_absolute_error = losses.mean_absolute_error
mape = MAPE = mean_absolute_percentage_error = losses.mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error = losses.mean_squared_logarithmic_error
categorical_crossentropy = losses.categorical_crossentropy
sparse_categorical_crossentropy = losses.sparse_categorical_crossentropy
binary_crossentropy = losses.binary_crossentropy
binary_focal_crossentropy = losses.binary_focal_crossentropy
categorical_focal_crossentropy = losses.categorical_focal_crossentropy
hinge, squared_hinge, categorical_hinge, poisson = losses.hinge, losses.squared_hinge, losses.categorical_hinge, \
    losses.poisson
kld = KLD = kl_divergence = kullback_leibler_divergence = losses.kl_divergence
logcosh = log_cosh = losses.log_cosh


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    """The cosine of the angle between ``y_true`` and ``y_pred`` (the metric is positive;
    the loss of the same name is its negative)."""
    return -losses.cosine_similarity(y_true, y_pred, axis=axis)


Accuracy = wrapper_class("Accuracy", accuracy, "accuracy")
BinaryAccuracy = wrapper_class("BinaryAccuracy", binary_accuracy, "binary_accuracy")
CategoricalAccuracy = wrapper_class("CategoricalAccuracy", categorical_accuracy, "categorical_accuracy")
SparseCategoricalAccuracy = wrapper_class("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                          "sparse_categorical_accuracy")
TopKCategoricalAccuracy = wrapper_class("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                        "top_k_categorical_accuracy")
SparseTopKCategoricalAccuracy = wrapper_class("SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
                                              "sparse_top_k_categorical_accuracy")
MeanSquaredError = wrapper_class("MeanSquaredError", losses.mean_squared_error, "mean_squared_error")
MeanAbsoluteError = wrapper_class("MeanAbsoluteError", losses.mean_absolute_error, "mean_absolute_error")
MeanAbsolutePercentageError = wrapper_class("MeanAbsolutePercentageError", losses.mean_absolute_percentage_error,
                                            "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = wrapper_class("MeanSquaredLogarithmicError", losses.mean_squared_logarithmic_error,
                                            "mean_squared_logarithmic_error")
CategoricalCrossentropy = wrapper_class("CategoricalCrossentropy", losses.categorical_crossentropy,
                                        "categorical_crossentropy")
SparseCategoricalCrossentropy = wrapper_class("SparseCategoricalCrossentropy", losses.sparse_categorical_crossentropy,
                                              "sparse_categorical_crossentropy")
BinaryCrossentropy = wrapper_class("BinaryCrossentropy", losses.binary_crossentropy, "binary_crossentropy")
Hinge = wrapper_class("Hinge", losses.hinge, "hinge")
SquaredHinge = wrapper_class("SquaredHinge", losses.squared_hinge, "squared_hinge")
CategoricalHinge = wrapper_class("CategoricalHinge", losses.categorical_hinge, "categorical_hinge")
KLDivergence = wrapper_class("KLDivergence", losses.kl_divergence, "kullback_leibler_divergence")
Poisson = wrapper_class("Poisson", losses.poisson, "poisson")
LogCoshError = wrapper_class("LogCoshError", losses.log_cosh, "logcosh")
class CosineSimilarity(MeanMetricWrapper):
    """The mean cosine similarity of ``y_true`` and ``y_pred`` along ``axis``."""

    fn = staticmethod(cosine_similarity)

    def __init__(self, name: str = "cosine_similarity", dtype: Any = None, axis: int = -1):
        super().__init__(cosine_similarity, name=name, dtype=dtype, axis=axis)

_BY_NAME: dict[str, Any] = {
    "binary_accuracy": binary_accuracy, "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy,
    "top_k_categorical_accuracy": top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
    "cosine_similarity": cosine_similarity, "cosine_proximity": cosine_similarity,
}
_CLASSES = {cls.__name__: cls for cls in (
    Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy, TopKCategoricalAccuracy,
    SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, CategoricalCrossentropy, SparseCategoricalCrossentropy, BinaryCrossentropy, Hinge,
    SquaredHinge, CategoricalHinge, KLDivergence, Poisson, LogCoshError, CosineSimilarity, Mean, Sum, MeanTensor,
    AUC, Precision, Recall, TruePositives, FalsePositives, TrueNegatives, FalseNegatives, SensitivityAtSpecificity,
    SpecificityAtSensitivity, PrecisionAtRecall, RecallAtPrecision, IoU, MeanIoU, BinaryIoU, OneHotIoU,
    OneHotMeanIoU, RootMeanSquaredError, MeanRelativeError, R2Score, FBetaScore, F1Score)}


def per_sample(metric: Any) -> Any:
    """The per-sample function ``compile`` averages for ``metric`` (a function or a
    ``MeanMetricWrapper``), or None for an accumulating metric (``AUC``...)."""
    if isinstance(metric, MeanMetricWrapper):
        return metric.per_sample
    if isinstance(metric, Metric):
        return None
    return metric


def serialize(metric: Any) -> Any:
    """A metric object as ``{"class_name", "config"}``; a function by its name."""
    if isinstance(metric, Metric):
        return {"class_name": type(metric).__name__, "config": metric.get_config()}
    return getattr(metric, "__name__", metric)


def deserialize(config: Any, custom_objects: dict | None = None) -> Any:
    """A metric from :func:`serialize`'s output (or a name)."""
    if isinstance(config, str):
        return get(config)
    table = {**_CLASSES, **(custom_objects or {})}
    cls = table.get(config["class_name"])
    if cls is None:
        raise ValueError(f"Unknown metric: {config['class_name']!r}. Valid: {sorted(_CLASSES)}")
    return cls.from_config(dict(config.get("config", {})))


def get(identifier: Any) -> Any:
    """A metric function from a name (any loss name works too) or a callable.

    Raises:
        ValueError: an unknown name (the message lists the valid ones).
    """
    if callable(identifier):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str) and identifier in _CLASSES:
        return _CLASSES[identifier]()
    if isinstance(identifier, str):
        if identifier in _BY_NAME:
            return _BY_NAME[identifier]
        if identifier in losses._BY_NAME:
            return losses._BY_NAME[identifier]
        valid = sorted(set(_BY_NAME) | set(losses._BY_NAME) | {"accuracy", "acc", "crossentropy", "ce"})
        raise ValueError(f"Unknown metric function: {identifier!r}. Valid names: {valid}")
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")


def _pick_by_loss(loss_fn: Any, output_shape: Any, binary: Any, categorical: Any, sparse: Any) -> Any:
    """Keras's choice for ``"accuracy"``/``"crossentropy"``: sparse categorical for a sparse
    categorical loss, binary for a binary loss or one output unit, else categorical."""
    loss_name = getattr(loss_fn, "__name__", "") or type(loss_fn).__name__
    fn_name = getattr(getattr(loss_fn, "fn", None), "__name__", loss_name)
    last = output_shape[-1] if output_shape else None
    if "sparse_categorical" in fn_name:
        return sparse
    if "binary" in fn_name or last == 1:
        return binary
    return categorical


def resolve(identifier: Any, loss_fn: Any, output_shape: Any) -> tuple[str, Any]:
    """``(display name, fn)`` for one ``compile(metrics=...)`` entry, named as tf-keras names
    them in TensorFlow 1.x graph mode (``disable_v2_behavior``): ``"accuracy"``/``"acc"``
    -> ``acc``, ``"crossentropy"``/``"ce"`` -> ``ce`` (the function picked from the loss
    and output, as Keras does), a metric object by its ``name``, anything else by its
    function's name (``"mae"`` -> ``mean_absolute_error``)."""
    if isinstance(identifier, str) and identifier in ("accuracy", "acc"):
        return "acc", _pick_by_loss(loss_fn, output_shape, binary_accuracy, categorical_accuracy,
                                    sparse_categorical_accuracy)
    if isinstance(identifier, str) and identifier in ("crossentropy", "ce"):
        return "ce", _pick_by_loss(loss_fn, output_shape, binary_crossentropy, categorical_crossentropy,
                                   sparse_categorical_crossentropy)
    fn = identifier if isinstance(identifier, Metric) else get(identifier)
    name = fn.name if isinstance(fn, Metric) else None
    return name or getattr(fn, "__name__", None) or type(fn).__name__, fn


def config_name(identifier: Any) -> Any:
    """How ``compile``'s metric entry is written to a saved model's ``training_config``."""
    if isinstance(identifier, str):
        return identifier
    if isinstance(identifier, Metric) and type(identifier) in _CLASSES.values():
        return serialize(identifier)
    if isinstance(identifier, Metric):
        return identifier.name
    return getattr(identifier, "__name__", None) or type(identifier).__name__
