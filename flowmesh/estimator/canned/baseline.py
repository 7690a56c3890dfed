"""``BaselineClassifier`` / ``BaselineRegressor``: ignore the features and learn one bias
per output (the class prior or the label mean). Variable ``baseline/bias``; default
optimizer Ftrl with learning rate 0.3."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError
from flowmesh.estimator.canned._common import classification_head, minimize_fn, regression_head
from flowmesh.estimator.estimator import Estimator
from flowmesh.ops import array_ops
from flowmesh.ops.init_ops import zeros_initializer
from flowmesh.ops.manip_ops import tile
from flowmesh.ops.variable_scope import get_variable, variable_scope

BASELINE_LEARNING_RATE = 0.3


def _batch_size(features: Any, weight_column: str | None) -> Any:
    if weight_column is not None and isinstance(features, dict) and weight_column in features:
        return array_ops.shape(features[weight_column])[0]
    values = list(features.values()) if isinstance(features, dict) else [features]
    if not values:
        raise InvalidArgumentError("Baseline estimators need at least one feature to know the batch size")
    return array_ops.shape(values[0])[0]


class _Baseline(Estimator):
    def __init__(self, head: Any, model_dir: Any, weight_column: Any, optimizer: Any, config: Any):
        train_op_fn = minimize_fn(optimizer, BASELINE_LEARNING_RATE)

        def model_fn(features: Any, labels: Any, mode: str) -> Any:
            with variable_scope("baseline"):
                bias = get_variable("bias", [head.logits_dimension], dtype=dtypes.float32,
                                    initializer=zeros_initializer())
                batch = _batch_size(features, weight_column)
                logits = tile(array_ops.reshape(bias, [1, -1]), array_ops.stack([batch, 1]))
            return head.create_estimator_spec(features, mode, logits, labels, train_op_fn)

        super().__init__(model_fn, model_dir=model_dir, config=config)


class BaselineClassifier(_Baseline):
    """Predicts the class distribution of the training labels."""

    def __init__(self, model_dir: str | None = None, n_classes: int = 2, weight_column: str | None = None,
                 label_vocabulary: Any = None, optimizer: Any = "Ftrl", config: Any = None,
                 loss_reduction: Any = None):
        super().__init__(classification_head(n_classes, weight_column, label_vocabulary, loss_reduction), model_dir,
                         weight_column, optimizer, config)


class BaselineRegressor(_Baseline):
    """Predicts the mean of the training labels."""

    def __init__(self, model_dir: str | None = None, label_dimension: int = 1,
                 weight_column: str | None = None, optimizer: Any = "Ftrl", config: Any = None,
                 loss_reduction: Any = None):
        super().__init__(regression_head(label_dimension, weight_column, loss_reduction), model_dir, weight_column,
                         optimizer, config)
