"""``tf.keras.metrics``: per-sample metric functions, metric classes and lookup by name.

``Model.compile(metrics=[...])`` evaluates each metric per sample in the training graph;
the training loop averages them over the samples seen in the epoch, as Keras's stateful
``Mean`` metrics do.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.keras import losses
from flowmesh.ops import array_ops, math_ops, nn_impl
from flowmesh.ops.reduction_ops import argmax, reduce_mean


def _float(x: Any) -> Any:
    return math_ops.cast(x, dtypes.float32)


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> Any:
    y_pred = convert_to_tensor(y_pred)
    y_true = math_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    hits = math_ops.equal(y_true, math_ops.cast(math_ops.greater(y_pred, threshold), y_pred.dtype))
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
    predicted = math_ops.cast(argmax(_argmax_scores(y_pred), axis=-1), dtypes.int64)
    return _float(math_ops.equal(math_ops.cast(y_true, dtypes.int64), predicted))


def top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Any:
    return _float(nn_impl.in_top_k(y_pred, math_ops.cast(argmax(y_true, axis=-1), dtypes.int32), k))


def sparse_top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Any:
    y_true = convert_to_tensor(y_true)
    if y_true.shape.rank is not None and y_true.shape.rank > 1:
        y_true = array_ops.reshape(y_true, [-1])
    return _float(nn_impl.in_top_k(y_pred, math_ops.cast(y_true, dtypes.int32), k))


def accuracy(y_true: Any, y_pred: Any) -> Any:
    y_pred = convert_to_tensor(y_pred)
    return _float(math_ops.equal(math_ops.cast(convert_to_tensor(y_true), y_pred.dtype), y_pred))


mse = MSE = mean_squared_error = losses.mean_squared_error
mae = MAE = mean_absolute_error = losses.mean_absolute_error
mape = MAPE = mean_absolute_percentage_error = losses.mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error = losses.mean_squared_logarithmic_error
categorical_crossentropy = losses.categorical_crossentropy
sparse_categorical_crossentropy = losses.sparse_categorical_crossentropy
binary_crossentropy = losses.binary_crossentropy
hinge, squared_hinge, kld, poisson = losses.hinge, losses.squared_hinge, losses.kld, losses.poisson


class Metric:
    """A named per-sample metric function (``fn(y_true, y_pred, **kwargs)``)."""

    fn: Any = None

    def __init__(self, name: str | None = None, dtype: Any = None, **kwargs: Any):
        from flowmesh.keras.engine.base_layer import to_snake_case

        self.name = name or to_snake_case(type(self).__name__)
        self._fn_kwargs = kwargs

    def __call__(self, y_true: Any, y_pred: Any) -> Any:
        return type(self).fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, **self._fn_kwargs}


class MeanMetricWrapper(Metric):
    """Wraps any ``fn(y_true, y_pred)`` as a metric named ``name``."""

    def __init__(self, fn: Any, name: str | None = None, dtype: Any = None, **kwargs: Any):
        super().__init__(name=name or getattr(fn, "__name__", "metric"), **kwargs)
        self._wrapped = fn

    def __call__(self, y_true: Any, y_pred: Any) -> Any:
        return self._wrapped(y_true, y_pred, **self._fn_kwargs)


def _metric_class(name: str, fn: Any, default_name: str) -> type:
    def init(self: Metric, name: str | None = None, dtype: Any = None, **kwargs: Any) -> None:
        Metric.__init__(self, name=name or default_name, **kwargs)

    return type(name, (Metric,), {"fn": staticmethod(fn), "__init__": init,
                                  "__doc__": f"Class form of ``{fn.__name__}``."})


Accuracy = _metric_class("Accuracy", accuracy, "accuracy")
BinaryAccuracy = _metric_class("BinaryAccuracy", binary_accuracy, "binary_accuracy")
CategoricalAccuracy = _metric_class("CategoricalAccuracy", categorical_accuracy, "categorical_accuracy")
SparseCategoricalAccuracy = _metric_class("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                          "sparse_categorical_accuracy")
TopKCategoricalAccuracy = _metric_class("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                        "top_k_categorical_accuracy")
SparseTopKCategoricalAccuracy = _metric_class("SparseTopKCategoricalAccuracy",
                                              sparse_top_k_categorical_accuracy,
                                              "sparse_top_k_categorical_accuracy")
MeanSquaredError = _metric_class("MeanSquaredError", losses.mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _metric_class("MeanAbsoluteError", losses.mean_absolute_error, "mean_absolute_error")
CategoricalCrossentropy = _metric_class("CategoricalCrossentropy", losses.categorical_crossentropy,
                                        "categorical_crossentropy")
SparseCategoricalCrossentropy = _metric_class("SparseCategoricalCrossentropy",
                                              losses.sparse_categorical_crossentropy,
                                              "sparse_categorical_crossentropy")
BinaryCrossentropy = _metric_class("BinaryCrossentropy", losses.binary_crossentropy, "binary_crossentropy")

_BY_NAME: dict[str, Any] = {
    "binary_accuracy": binary_accuracy, "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy,
    "top_k_categorical_accuracy": top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
}


def get(identifier: Any) -> Any:
    """A metric function from a name (any loss name works too) or a callable.

    Raises:
        ValueError: an unknown name (the message lists the valid ones).
    """
    if callable(identifier):
        return identifier
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
    name = getattr(fn, "name", None) if isinstance(fn, Metric) else None
    return name or getattr(fn, "__name__", None) or type(fn).__name__, fn


def config_name(identifier: Any) -> Any:
    """How ``compile``'s metric entry is written to a saved model's ``training_config``."""
    if isinstance(identifier, str):
        return identifier
    if isinstance(identifier, Metric):
        return identifier.name
    return getattr(identifier, "__name__", None) or type(identifier).__name__
