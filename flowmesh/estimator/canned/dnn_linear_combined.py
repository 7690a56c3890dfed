"""``DNNLinearCombinedClassifier`` / ``Regressor`` ("wide & deep"): the sum of a linear
model's and a DNN's logits, each part trained by its own optimizer (linear: Ftrl, dnn:
Adagrad by default); variables under ``linear/...`` and ``dnn/...`` as TensorFlow's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core.graph import GraphKeys, control_dependencies, get_collection
from flowmesh.errors import InvalidArgumentError
from flowmesh.estimator.canned._common import check_features, classification_head, regression_head
from flowmesh.estimator.canned.dnn import DNN_LEARNING_RATE, _check, dnn_logits
from flowmesh.estimator.canned.linear import linear_learning_rate, linear_logits
from flowmesh.estimator.estimator import Estimator
from flowmesh.estimator.optimizers import get_optimizer_instance
from flowmesh.ops import control_flow_ops, math_ops, nn_ops
from flowmesh.ops.variable_scope import variable_scope
from flowmesh.train.training_util import get_global_step


class _Combined(Estimator):
    def __init__(self, head: Any, model_dir: Any, linear_columns: Any, linear_optimizer: Any,
                 dnn_columns: Any, dnn_optimizer: Any, hidden_units: Any, activation_fn: Callable,
                 dropout: Any, config: Any, warm_start_from: Any, sparse_combiner: str,
                 input_layer_partitioner: Any = None):
        linear_columns, dnn_columns = list(linear_columns or []), list(dnn_columns or [])
        if not linear_columns and not dnn_columns:
            raise InvalidArgumentError("give linear_feature_columns, dnn_feature_columns or both")
        units = _check(hidden_units, dropout) if dnn_columns else []

        def model_fn(features: Any, labels: Any, mode: str) -> Any:
            parts, optimizers = [], []
            check_features(features, linear_columns + dnn_columns, mode)
            if dnn_columns:
                with variable_scope("dnn") as scope:
                    parts.append(dnn_logits(features, dnn_columns, units, head.logits_dimension,
                                            activation_fn, dropout, mode, input_layer_partitioner))
                optimizers.append((scope.name, dnn_optimizer, DNN_LEARNING_RATE))
            if linear_columns:
                with variable_scope("linear") as scope:
                    parts.append(linear_logits(features, linear_columns, head.logits_dimension,
                                               sparse_combiner))
                optimizers.append((scope.name, linear_optimizer, linear_learning_rate(len(linear_columns))))
            logits = parts[0] if len(parts) == 1 else math_ops.add_n(parts)

            def train_op_fn(loss: Any) -> Any:
                steps = []
                for scope_name, opt, rate in optimizers:
                    variables = get_collection(GraphKeys.TRAINABLE_VARIABLES, scope=scope_name)
                    steps.append(get_optimizer_instance(opt, rate).minimize(loss, var_list=variables))
                with control_dependencies([control_flow_ops.group(*steps)]):
                    return get_global_step().assign_add(1).op

            return head.create_estimator_spec(features, mode, logits, labels, train_op_fn)

        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedClassifier(_Combined):
    """Wide & deep classifier."""

    def __init__(self, model_dir: str | None = None, linear_feature_columns: Any = None,
                 linear_optimizer: Any = "Ftrl", dnn_feature_columns: Any = None,
                 dnn_optimizer: Any = "Adagrad", dnn_hidden_units: Any = None,
                 dnn_activation_fn: Callable = nn_ops.relu, dnn_dropout: float | None = None,
                 n_classes: int = 2, weight_column: str | None = None, label_vocabulary: Any = None,
                 input_layer_partitioner: Any = None, config: Any = None, warm_start_from: Any = None,
                 loss_reduction: Any = None, batch_norm: bool = False, linear_sparse_combiner: str = "sum"):
        super().__init__(classification_head(n_classes, weight_column, label_vocabulary, loss_reduction), model_dir,
                         linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer,
                         dnn_hidden_units, dnn_activation_fn, dnn_dropout, config, warm_start_from,
                         linear_sparse_combiner, input_layer_partitioner)


class DNNLinearCombinedRegressor(_Combined):
    """Wide & deep regressor."""

    def __init__(self, model_dir: str | None = None, linear_feature_columns: Any = None,
                 linear_optimizer: Any = "Ftrl", dnn_feature_columns: Any = None,
                 dnn_optimizer: Any = "Adagrad", dnn_hidden_units: Any = None,
                 dnn_activation_fn: Callable = nn_ops.relu, dnn_dropout: float | None = None,
                 label_dimension: int = 1, weight_column: str | None = None,
                 input_layer_partitioner: Any = None, config: Any = None, warm_start_from: Any = None,
                 loss_reduction: Any = None, batch_norm: bool = False, linear_sparse_combiner: str = "sum"):
        super().__init__(regression_head(label_dimension, weight_column, loss_reduction), model_dir,
                         linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer,
                         dnn_hidden_units, dnn_activation_fn, dnn_dropout, config, warm_start_from,
                         linear_sparse_combiner, input_layer_partitioner)
