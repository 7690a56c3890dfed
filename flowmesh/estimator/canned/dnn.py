"""``DNNClassifier`` / ``DNNRegressor``: feed-forward networks over feature columns.

Variables as TensorFlow's: ``dnn/input_from_feature_columns/input_layer/...``,
``dnn/hiddenlayer_<i>/kernel|bias``, ``dnn/logits/kernel|bias``. Default optimizer:
Adagrad with learning rate 0.05.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.estimator.canned._common import (
    check_columns,
    check_features,
    classification_head,
    dense,
    minimize_fn,
    regression_head,
)
from flowmesh.estimator.estimator import Estimator
from flowmesh.estimator.mode_keys import ModeKeys
from flowmesh.feature_column import input_layer
from flowmesh.ops import nn_impl, nn_ops
from flowmesh.ops.variable_scope import variable_scope

DNN_LEARNING_RATE = 0.05


def dnn_logits(features: dict, feature_columns: list, hidden_units: list, units: int,
               activation_fn: Callable, dropout: float | None, mode: str,
               input_layer_partitioner: Any = None) -> Tensor:
    """The network's logits ``[batch, units]`` (call inside the ``dnn`` variable scope)."""
    with variable_scope("input_from_feature_columns", partitioner=input_layer_partitioner):
        net = input_layer(features, feature_columns)
    for i, width in enumerate(hidden_units):
        with variable_scope(f"hiddenlayer_{i}"):
            net = dense(net, width, activation_fn)
            if dropout is not None and mode == ModeKeys.TRAIN:
                net = nn_impl.dropout(net, rate=dropout)
    with variable_scope("logits"):
        return dense(net, units)


def _check(hidden_units: Any, dropout: Any) -> list:
    units = list(hidden_units or [])
    if not units or any(int(u) <= 0 for u in units):
        raise InvalidArgumentError(f"hidden_units must be a non-empty list of positive sizes, got {hidden_units}")
    if dropout is not None and not 0 <= dropout < 1:
        raise InvalidArgumentError(f"dropout must be in [0, 1), got {dropout}")
    return [int(u) for u in units]


class _DNN(Estimator):
    def __init__(self, head: Any, hidden_units: Any, feature_columns: Any, model_dir: Any,
                 optimizer: Any, activation_fn: Callable, dropout: Any, config: Any,
                 warm_start_from: Any, input_layer_partitioner: Any = None):
        units = _check(hidden_units, dropout)
        columns = check_columns(feature_columns, type(self).__name__)
        train_op_fn = minimize_fn(optimizer, DNN_LEARNING_RATE)

        def model_fn(features: Any, labels: Any, mode: str) -> Any:
            with variable_scope("dnn"):
                logits = dnn_logits(check_features(features, columns, mode), columns, units, head.logits_dimension,
                                    activation_fn, dropout, mode, input_layer_partitioner)
            return head.create_estimator_spec(features, mode, logits, labels, train_op_fn)

        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNClassifier(_DNN):
    """A feed-forward classifier (``n_classes`` classes; predictions ``logits probabilities
    class_ids classes ...``)."""

    def __init__(self, hidden_units: Any, feature_columns: Any, model_dir: str | None = None,
                 n_classes: int = 2, weight_column: str | None = None, label_vocabulary: Any = None,
                 optimizer: Any = "Adagrad", activation_fn: Callable = nn_ops.relu,
                 dropout: float | None = None, input_layer_partitioner: Any = None,
                 config: Any = None, warm_start_from: Any = None, loss_reduction: Any = None,
                 batch_norm: bool = False):
        if batch_norm:
            raise InvalidArgumentError("DNNClassifier(batch_norm=True) is not supported by flowmesh yet")
        super().__init__(classification_head(n_classes, weight_column, label_vocabulary, loss_reduction), hidden_units,
                         feature_columns, model_dir, optimizer, activation_fn, dropout, config,
                         warm_start_from, input_layer_partitioner)


class DNNRegressor(_DNN):
    """A feed-forward regressor (``label_dimension`` outputs; predictions ``predictions``)."""

    def __init__(self, hidden_units: Any, feature_columns: Any, model_dir: str | None = None,
                 label_dimension: int = 1, weight_column: str | None = None,
                 optimizer: Any = "Adagrad", activation_fn: Callable = nn_ops.relu,
                 dropout: float | None = None, input_layer_partitioner: Any = None,
                 config: Any = None, warm_start_from: Any = None, loss_reduction: Any = None,
                 batch_norm: bool = False):
        if batch_norm:
            raise InvalidArgumentError("DNNRegressor(batch_norm=True) is not supported by flowmesh yet")
        super().__init__(regression_head(label_dimension, weight_column, loss_reduction), hidden_units,
                         feature_columns, model_dir, optimizer, activation_fn, dropout, config,
                         warm_start_from, input_layer_partitioner)
