"""``tf.keras.losses``: per-sample loss functions, ``Loss`` classes and lookup by name.

A loss function maps ``(y_true, y_pred)`` to one value per sample (the mean over the last
axis where Keras does so). ``Model.compile`` reduces it over the batch as Keras does: the
sum of ``loss * sample_weight`` divided by the number of samples.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.keras import backend
from flowmesh.ops import array_ops, cast_ops, clip_ops, math_ops, nn_impl, nn_ops
from flowmesh.ops.reduction_ops import reduce_max, reduce_mean, reduce_sum


def _pair(y_true: Any, y_pred: Any) -> tuple[Any, Any]:
    y_pred = convert_to_tensor(y_pred)
    y_true = cast_ops.cast(convert_to_tensor(y_true), y_pred.dtype)
    return y_true, y_pred


def mean_squared_error(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    return reduce_mean(math_ops.squared_difference(y_pred, y_true), axis=-1)


def mean_absolute_error(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    return reduce_mean(math_ops.abs(y_pred - y_true), axis=-1)


def mean_absolute_percentage_error(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    diff = math_ops.abs((y_true - y_pred) / math_ops.maximum(math_ops.abs(y_true), backend.epsilon()))
    return 100.0 * reduce_mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    first = math_ops.log(math_ops.maximum(y_pred, backend.epsilon()) + 1.0)
    second = math_ops.log(math_ops.maximum(y_true, backend.epsilon()) + 1.0)
    return reduce_mean(math_ops.squared_difference(first, second), axis=-1)


def _clip_probabilities(y_pred: Any) -> Any:
    eps = backend.epsilon()
    return clip_ops.clip_by_value(y_pred, eps, 1.0 - eps)


def _logits_of(output: Any, from_logits: bool, op_type: str) -> tuple[Any, bool]:
    """As TensorFlow's Keras in graph mode: the output of a ``Softmax``/``Sigmoid`` op is
    replaced by that op's input (the logits), which is exact and numerically safer."""
    op = getattr(output, "op", None)
    if not from_logits and op is not None and op.type == op_type and len(op.inputs) == 1:
        return op.inputs[0], True
    return output, from_logits


def categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                             label_smoothing: float = 0.0, axis: int = -1) -> Any:
    """``-sum(y_true * log(y_pred))`` over ``axis``; ``from_logits`` applies softmax first."""
    y_true, y_pred = _pair(y_true, y_pred)
    y_pred, from_logits = _logits_of(y_pred, from_logits, "Softmax")
    if label_smoothing:
        classes = cast_ops.cast(array_ops.shape(y_true)[-1], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    if from_logits:
        return nn_ops.softmax_cross_entropy_with_logits_v2(labels=y_true, logits=y_pred, axis=axis)
    y_pred = y_pred / reduce_sum(y_pred, axis=axis, keepdims=True)
    return -reduce_sum(y_true * math_ops.log(_clip_probabilities(y_pred)), axis=axis)


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                                    axis: int = -1) -> Any:
    """Cross entropy with integer labels (``y_true`` of shape [batch] or [batch, 1])."""
    y_pred = convert_to_tensor(y_pred)
    labels = convert_to_tensor(y_true)
    if labels.shape.rank is not None and y_pred.shape.rank is not None and \
            labels.shape.rank == y_pred.shape.rank:
        labels = array_ops.squeeze(labels, [-1])
    labels = cast_ops.cast(labels, dtypes.int64)
    y_pred, from_logits = _logits_of(y_pred, from_logits, "Softmax")
    logits = y_pred if from_logits else math_ops.log(_clip_probabilities(y_pred))
    return nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)


def binary_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                        label_smoothing: float = 0.0, axis: int = -1) -> Any:
    """Mean over ``axis`` of the element-wise binary cross entropy."""
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    y_pred, from_logits = _logits_of(y_pred, from_logits, "Sigmoid")
    if from_logits:
        return reduce_mean(nn_ops.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred), axis=axis)
    p = _clip_probabilities(y_pred)
    bce = y_true * math_ops.log(p + backend.epsilon()) + (1.0 - y_true) * math_ops.log(1.0 - p + backend.epsilon())
    return -reduce_mean(bce, axis=axis)


def _signed_labels(y_true: Any) -> Any:
    """Labels that are all 0 or 1 as -1/1 (tf-keras's hinge losses), others as given."""
    from flowmesh.ops.reduction_ops import reduce_all

    binary = reduce_all(math_ops.logical_or(math_ops.equal(y_true, 0.0), math_ops.equal(y_true, 1.0)))
    return y_true + cast_ops.cast(binary, y_true.dtype) * (y_true - 1.0)


def hinge(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _signed_labels(y_true)
    return reduce_mean(math_ops.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def squared_hinge(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _signed_labels(y_true)
    return reduce_mean(math_ops.square(math_ops.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    error = math_ops.abs(y_pred - y_true)
    quadratic = math_ops.minimum(error, delta)
    return reduce_mean(0.5 * math_ops.square(quadratic) + delta * (error - quadratic), axis=-1)


def log_cosh(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return reduce_mean(x + nn_impl.softplus(-2.0 * x) - 0.6931471805599453, axis=-1)


def kl_divergence(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    eps = backend.epsilon()
    y_true = clip_ops.clip_by_value(y_true, eps, 1.0)
    y_pred = clip_ops.clip_by_value(y_pred, eps, 1.0)
    return reduce_sum(y_true * math_ops.log(y_true / y_pred), axis=-1)


def poisson(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    return reduce_mean(y_pred - y_true * math_ops.log(y_pred + backend.epsilon()), axis=-1)


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    from flowmesh.ops.nn_norm_ops import l2_normalize

    y_true, y_pred = _pair(y_true, y_pred)
    return -reduce_sum(l2_normalize(y_true, axis=axis) * l2_normalize(y_pred, axis=axis), axis=axis)


def categorical_hinge(y_true: Any, y_pred: Any) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    pos = reduce_sum(y_true * y_pred, axis=-1)
    neg = reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return math_ops.maximum(neg - pos + 1.0, 0.0)


def binary_focal_crossentropy(y_true: Any, y_pred: Any, apply_class_balancing: bool = False, alpha: float = 0.25,
                              gamma: float = 2.0, from_logits: bool = False, label_smoothing: float = 0.0,
                              axis: int = -1) -> Any:
    """The mean over ``axis`` of the element-wise focal loss (``backend``'s)."""
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return reduce_mean(backend.binary_focal_crossentropy(y_true, y_pred, apply_class_balancing, alpha, gamma,
                                                         from_logits), axis=axis)


def categorical_focal_crossentropy(y_true: Any, y_pred: Any, alpha: float = 0.25, gamma: float = 2.0,
                                   from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1) -> Any:
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        classes = cast_ops.cast(array_ops.shape(y_true)[-1], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    return backend.categorical_focal_crossentropy(y_true, y_pred, alpha, gamma, from_logits, axis)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh
cosine_proximity = cosine_similarity


class Loss:
    """A configured loss: ``loss(y_true, y_pred, sample_weight=None) -> scalar`` (sum over
    the batch of ``fn * sample_weight`` divided by the batch size)."""

    fn: Any = None

    def __init__(self, reduction: str = "auto", name: str | None = None, **kwargs: Any):
        self.reduction = reduction
        self.name = name or _snake(type(self).__name__)
        self._fn_kwargs = kwargs

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return type(self).fn(y_true, y_pred, **self._fn_kwargs)

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        per_sample = self.call(y_true, y_pred)
        return reduce_weighted(per_sample, sample_weight, self.reduction)

    def get_config(self) -> dict[str, Any]:
        return {"reduction": self.reduction, "name": self.name, **self._fn_kwargs}


def match_rank(weight: Any, values: Any) -> Any:
    """``weight`` with trailing axes added (or a trailing 1 removed) to reach the rank of
    ``values``, as tf-keras's ``squeeze_or_expand_dimensions``: ``[batch]`` sample weights
    weigh every step of ``[batch, time]`` losses instead of broadcasting along time."""
    rank, target = weight.shape.rank, values.shape.rank
    if rank is None or target is None or rank == 0:
        return weight
    if rank == target + 1 and weight.shape.as_list()[-1] == 1:
        return array_ops.squeeze(weight, [-1])
    while rank < target:
        weight, rank = array_ops.expand_dims(weight, -1), rank + 1
    return weight


def reduce_weighted(per_sample: Any, sample_weight: Any, reduction: str = "auto") -> Any:
    """Keras's ``SUM_OVER_BATCH_SIZE``: ``sum(loss * weight) / number of loss elements``."""
    if sample_weight is not None:
        weight = cast_ops.cast(convert_to_tensor(sample_weight), per_sample.dtype)
        per_sample = per_sample * match_rank(weight, per_sample)
    if reduction == "none":
        return per_sample
    total = reduce_sum(per_sample)
    if reduction == "sum":
        return total
    count = cast_ops.cast(array_ops.size(per_sample), per_sample.dtype)
    return math_ops.div_no_nan(total, count)


def _snake(name: str) -> str:
    from flowmesh.keras.engine.base_layer import to_snake_case

    return to_snake_case(name)


def _loss_class(name: str, fn: Any) -> type:
    def init(self: Loss, reduction: str = "auto", name: str | None = None, **kwargs: Any) -> None:
        Loss.__init__(self, reduction=reduction, name=name or _snake(cls_name), **kwargs)

    cls_name = name
    return type(name, (Loss,), {"fn": staticmethod(fn), "__init__": init,
                                "__doc__": f"Class form of ``{fn.__name__}``."})


MeanSquaredError = _loss_class("MeanSquaredError", mean_squared_error)
MeanAbsoluteError = _loss_class("MeanAbsoluteError", mean_absolute_error)
MeanAbsolutePercentageError = _loss_class("MeanAbsolutePercentageError", mean_absolute_percentage_error)
MeanSquaredLogarithmicError = _loss_class("MeanSquaredLogarithmicError", mean_squared_logarithmic_error)
CategoricalCrossentropy = _loss_class("CategoricalCrossentropy", categorical_crossentropy)
SparseCategoricalCrossentropy = _loss_class("SparseCategoricalCrossentropy", sparse_categorical_crossentropy)
BinaryCrossentropy = _loss_class("BinaryCrossentropy", binary_crossentropy)
Hinge = _loss_class("Hinge", hinge)
SquaredHinge = _loss_class("SquaredHinge", squared_hinge)
CategoricalHinge = _loss_class("CategoricalHinge", categorical_hinge)
Huber = _loss_class("Huber", huber)
LogCosh = _loss_class("LogCosh", log_cosh)
KLDivergence = _loss_class("KLDivergence", kl_divergence)
Poisson = _loss_class("Poisson", poisson)
CosineSimilarity = _loss_class("CosineSimilarity", cosine_similarity)
BinaryFocalCrossentropy = _loss_class("BinaryFocalCrossentropy", binary_focal_crossentropy)
CategoricalFocalCrossentropy = _loss_class("CategoricalFocalCrossentropy", categorical_focal_crossentropy)


class Reduction:
    """How a ``Loss`` reduces its per-sample values (``tf.keras.losses.Reduction``)."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')

_BY_NAME: dict[str, Any] = {
    "mean_squared_error": mean_squared_error, "mse": mean_squared_error, "MSE": mean_squared_error,
    "mean_absolute_error": mean_absolute_error, "mae": mean_absolute_error, "MAE": mean_absolute_error,
    "mean_absolute_percentage_error": mean_absolute_percentage_error, "mape": mean_absolute_percentage_error,
    "mean_squared_logarithmic_error": mean_squared_logarithmic_error, "msle": mean_squared_logarithmic_error,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
    "binary_crossentropy": binary_crossentropy, "hinge": hinge, "squared_hinge": squared_hinge,
    "categorical_hinge": categorical_hinge, "huber": huber, "huber_loss": huber, "logcosh": log_cosh,
    "log_cosh": log_cosh, "kl_divergence": kl_divergence, "kld": kl_divergence,
    "kullback_leibler_divergence": kl_divergence, "poisson": poisson,
    "cosine_similarity": cosine_similarity, "cosine_proximity": cosine_similarity,
    "binary_focal_crossentropy": binary_focal_crossentropy,
    "categorical_focal_crossentropy": categorical_focal_crossentropy,
}


def get(identifier: Any) -> Any:
    """A loss function or ``Loss`` from a name, a config dict or a callable.

    Raises:
        ValueError: an unknown name (the message lists the valid ones).
    """
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict):
        cls = globals().get(identifier["class_name"])
        if not (isinstance(cls, type) and issubclass(cls, Loss)):
            raise ValueError(f"Unknown loss class: {identifier['class_name']!r}")
        return cls(**identifier.get("config", {}))
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown loss function: {identifier!r}. Valid names: {sorted(_BY_NAME)}")
        return _BY_NAME[identifier]
    raise ValueError(f"Could not interpret loss function identifier: {identifier!r}")


def serialize(loss: Any) -> Any:
    if isinstance(loss, Loss):
        return {"class_name": type(loss).__name__, "config": loss.get_config()}
    return getattr(loss, "__name__", str(loss))


def deserialize(config: Any) -> Any:
    return get(config)
