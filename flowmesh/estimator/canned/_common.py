"""Pieces shared by the canned estimators: the dense layers with TensorFlow's variable
names, the train op, and argument checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor
from flowmesh.errors import InvalidArgumentError
from flowmesh.estimator.head import RegressionHead, classification_head
from flowmesh.estimator.optimizers import get_optimizer_instance
from flowmesh.ops import nn_ops
from flowmesh.ops.init_ops import glorot_uniform_initializer, zeros_initializer
from flowmesh.ops.linalg_ops import matmul
from flowmesh.ops.variable_scope import get_variable
from flowmesh.train.training_util import get_global_step


def dense(x: Tensor, units: int, activation: Callable | None = None) -> Tensor:
    """``activation(x @ kernel + bias)`` with variables ``kernel`` (Glorot uniform) and
    ``bias`` (zeros) in the current variable scope, as ``tf.layers.dense`` names them."""
    width = x.shape.as_list()[-1]
    if width is None:
        raise InvalidArgumentError(f"the input of a dense layer needs a known last dimension, got {x.shape}")
    kernel = get_variable("kernel", [width, units], dtype=dtypes.float32,
                          initializer=glorot_uniform_initializer())
    bias = get_variable("bias", [units], dtype=dtypes.float32, initializer=zeros_initializer())
    out = nn_ops.bias_add(matmul(x, kernel), bias)
    return activation(out) if activation is not None else out


def minimize_fn(optimizer: Any, learning_rate: float) -> Callable[[Tensor], Any]:
    """``loss -> train_op`` with the optimizer built inside the model's graph."""
    def train_op_fn(loss: Tensor) -> Any:
        opt = get_optimizer_instance(optimizer, learning_rate)
        return opt.minimize(loss, global_step=get_global_step())
    return train_op_fn


def check_features(features: Any, columns: list, mode: str) -> dict:
    """``features`` if it is a dict holding every key the columns read.

    Raises:
        InvalidArgumentError: not a dict, or a missing key (names the key, its column and
            the mode).
    """
    if not isinstance(features, dict):
        raise InvalidArgumentError(f"canned estimators need a dict of features in mode {mode!r}, got "
                                   f"{type(features).__name__}; return {{'name': tensor, ...}} from the input_fn")
    for column in columns:
        for key in column.parse_example_spec:
            if key not in features:
                raise InvalidArgumentError(
                    f"feature column '{column.name}' needs the feature '{key}', which is missing from "
                    f"the input in mode {mode!r} (got keys {sorted(map(str, features))})")
    return features


def check_columns(feature_columns: Any, what: str) -> list:
    from flowmesh.feature_column import FeatureColumn

    cols = list(feature_columns or [])
    if not cols:
        raise InvalidArgumentError(f"{what}: feature_columns must not be empty")
    for c in cols:
        if not isinstance(c, FeatureColumn):
            raise InvalidArgumentError(f"{what}: not a feature column: {c!r}")
    return cols


def regression_head(label_dimension: int, weight_column: str | None,
                    loss_reduction: str | None = None) -> RegressionHead:
    return RegressionHead(label_dimension, weight_column, loss_reduction)


__all__ = ["classification_head", "regression_head", "dense", "minimize_fn"]
