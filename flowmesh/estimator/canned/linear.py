"""``LinearClassifier`` / ``LinearRegressor``: linear models over feature columns.

Variables as TensorFlow's: ``linear/linear_model/<column>/weights`` and
``linear/linear_model/bias_weights``. Default optimizer: Ftrl with learning rate
``min(0.2, 1 / sqrt(number of feature columns))``.
"""

from __future__ import annotations

import math
from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.estimator.canned._common import (
    check_columns,
    check_features,
    classification_head,
    minimize_fn,
    regression_head,
)
from flowmesh.estimator.estimator import Estimator
from flowmesh.feature_column import linear_model
from flowmesh.ops.variable_scope import variable_scope


def linear_learning_rate(num_columns: int) -> float:
    """TensorFlow's default Ftrl learning rate for a linear model of ``num_columns`` columns."""
    return min(0.2, 1.0 / math.sqrt(num_columns))


def linear_logits(features: dict, feature_columns: list, units: int, sparse_combiner: str) -> Tensor:
    """The linear model's logits (call inside the ``linear`` variable scope)."""
    return linear_model(features, feature_columns, units=units, sparse_combiner=sparse_combiner)


class _Linear(Estimator):
    def __init__(self, head: Any, feature_columns: Any, model_dir: Any, optimizer: Any, config: Any,
                 warm_start_from: Any, sparse_combiner: str, partitioner: Any = None):
        columns = check_columns(feature_columns, type(self).__name__)
        train_op_fn = minimize_fn(optimizer, linear_learning_rate(len(columns)))

        def model_fn(features: Any, labels: Any, mode: str) -> Any:
            with variable_scope("linear", partitioner=partitioner):
                logits = linear_logits(check_features(features, columns, mode), columns, head.logits_dimension,
                                       sparse_combiner)
            return head.create_estimator_spec(features, mode, logits, labels, train_op_fn)

        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearClassifier(_Linear):
    """A linear classifier (logistic regression for ``n_classes=2``)."""

    def __init__(self, feature_columns: Any, model_dir: str | None = None, n_classes: int = 2,
                 weight_column: str | None = None, label_vocabulary: Any = None,
                 optimizer: Any = "Ftrl", config: Any = None, partitioner: Any = None,
                 warm_start_from: Any = None, loss_reduction: Any = None, sparse_combiner: str = "sum"):
        super().__init__(classification_head(n_classes, weight_column, label_vocabulary, loss_reduction), feature_columns,
                         model_dir, optimizer, config, warm_start_from, sparse_combiner, partitioner)


class LinearRegressor(_Linear):
    """A linear regressor (``label_dimension`` outputs)."""

    def __init__(self, feature_columns: Any, model_dir: str | None = None, label_dimension: int = 1,
                 weight_column: str | None = None, optimizer: Any = "Ftrl", config: Any = None,
                 partitioner: Any = None, warm_start_from: Any = None, loss_reduction: Any = None,
                 sparse_combiner: str = "sum"):
        super().__init__(regression_head(label_dimension, weight_column, loss_reduction), feature_columns, model_dir,
                         optimizer, config, warm_start_from, sparse_combiner, partitioner)
