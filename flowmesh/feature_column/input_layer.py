"""``input_layer``, ``linear_model`` and ``make_parse_example_spec``.

Variables and scopes follow TensorFlow's v1 feature columns, so checkpoints interchange:
``input_layer/<column>/embedding_weights``, ``linear_model/<column>/weights`` and
``linear_model/bias_weights``. Columns are processed in order of their names.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import Tensor, add_to_collection
from flowmesh.errors import InvalidArgumentError
from flowmesh.feature_column._base import Builder, CategoricalColumn, DenseColumn, FeatureColumn, num_elements
from flowmesh.feature_column.dense_columns import combine_embeddings
from flowmesh.ops import array_ops, math_ops
from flowmesh.ops.init_ops import zeros_initializer
from flowmesh.ops.linalg_ops import matmul
from flowmesh.ops.variable_scope import get_variable, variable_scope


def _columns(feature_columns: Any, what: str) -> list[FeatureColumn]:
    if isinstance(feature_columns, FeatureColumn):
        feature_columns = [feature_columns]
    cols = list(feature_columns or [])
    if not cols:
        raise InvalidArgumentError(f"{what}: feature_columns must not be empty")
    names = [c.name if isinstance(c, FeatureColumn) else None for c in cols]
    for c in cols:
        if not isinstance(c, FeatureColumn):
            raise InvalidArgumentError(f"{what}: items of feature_columns must be feature columns, got {c!r}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidArgumentError(f"{what}: duplicate feature column names {dup}")
    return sorted(cols, key=lambda c: c.name)


def _flat(t: Tensor, width: int) -> Tensor:
    return array_ops.reshape(t, [-1, width])


def _add_vars(collections: Any, cols_to_vars: Any, column: Any, created: list[Any]) -> None:
    for v in created:
        for key in collections or ():
            add_to_collection(key, v)
    if cols_to_vars is not None:
        cols_to_vars[column] = created


def input_layer(features: dict[str, Any], feature_columns: Any, weight_collections: Any = None,
                trainable: bool = True, cols_to_vars: dict | None = None,
                cols_to_output_tensors: dict | None = None) -> Tensor:
    """The dense ``[batch, sum of widths]`` input of ``features`` through ``feature_columns``.

    Raises:
        InvalidArgumentError: a categorical column (wrap it in ``embedding_column`` or
            ``indicator_column``), or a feature a column needs is missing (names both).
    """
    columns = _columns(feature_columns, "input_layer")
    for c in columns:
        if not isinstance(c, DenseColumn):
            raise InvalidArgumentError(
                f"input_layer: items of feature_columns must be dense columns; wrap the "
                f"categorical column '{c.name}' with embedding_column or indicator_column")
    for c in columns:
        if getattr(c, "is_sequence", False):
            raise InvalidArgumentError(
                f"input_layer: the column '{c.name}' is a sequence column; use "
                "tf.feature_column.sequence_input_layer for sequence columns, or a non-sequence "
                "categorical_column_with_* in input_layer")
    builder = Builder(features)
    outputs = []
    with variable_scope(None, default_name="input_layer", values=list(features.values())):
        for column in columns:
            with variable_scope(None, default_name=column.var_scope_name) as scope:
                before = set(_scope_vars(scope.name))
                tensor = _flat(column.get_dense_tensor(builder, trainable),
                               num_elements(column.variable_shape))
                created = [v for v in _scope_vars(scope.name) if v not in before]
                _add_vars(weight_collections, cols_to_vars, column, created)
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = tensor
                outputs.append(tensor)
        return array_ops.concat(outputs, 1)


def _scope_vars(prefix: str) -> list[Any]:
    from flowmesh.ops.variables import global_variables

    return [v for v in global_variables() if v.op.name.startswith(prefix + "/")]


def _weighted_sum(column: FeatureColumn, builder: Builder, units: int, combiner: str,
                  trainable: bool) -> tuple[Tensor, Any]:
    if isinstance(column, CategoricalColumn):
        weights = get_variable("weights", [column.num_buckets, units], dtype=dtypes.float32,
                               initializer=zeros_initializer(), trainable=trainable)
        return combine_embeddings(weights, column.get_ids(builder), combiner), weights
    assert isinstance(column, DenseColumn)
    width = num_elements(column.variable_shape)
    weights = get_variable("weights", [width, units], dtype=dtypes.float32,
                           initializer=zeros_initializer(), trainable=trainable)
    dense = _flat(column.get_dense_tensor(builder, trainable), width)
    return matmul(dense, weights), weights


def linear_model(features: dict[str, Any], feature_columns: Any, units: int = 1,
                 sparse_combiner: str = "sum", weight_collections: Any = None,
                 trainable: bool = True, cols_to_vars: dict | None = None) -> Tensor:
    """A linear prediction ``[batch, units]``: one weight matrix per column (zeros-initialized),
    categorical columns through a sparse ``sparse_combiner`` lookup, plus ``bias_weights``."""
    if sparse_combiner not in ("sum", "mean", "sqrtn"):
        raise InvalidArgumentError(f"linear_model: sparse_combiner must be sum, mean or sqrtn, got {sparse_combiner!r}")
    columns = _columns(feature_columns, "linear_model")
    builder = Builder(features)
    sums = []
    with variable_scope(None, default_name="linear_model", values=list(features.values())):
        for column in columns:
            with variable_scope(None, default_name=column.var_scope_name):
                total, var = _weighted_sum(column, builder, units, sparse_combiner, trainable)
                _add_vars(weight_collections, cols_to_vars, column, [var])
                sums.append(total)
        bias = get_variable("bias_weights", [units], dtype=dtypes.float32,
                            initializer=zeros_initializer(), trainable=trainable)
        _add_vars(weight_collections, cols_to_vars, "bias", [bias])
        total = sums[0] if len(sums) == 1 else math_ops.add_n(sums)
        return math_ops.add(total, bias, name="weighted_sum")


def make_parse_example_spec(feature_columns: Any) -> dict[str, Any]:
    """``{feature key: FixedLenFeature | VarLenFeature}`` for parsing the columns' inputs.

    Raises:
        InvalidArgumentError: two columns need one key with different specs.
    """
    spec: dict[str, Any] = {}
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise InvalidArgumentError(f"make_parse_example_spec: not a feature column: {column!r}")
        for key, value in column.parse_example_spec.items():
            if key in spec and spec[key] != value:
                raise InvalidArgumentError(
                    f"make_parse_example_spec: feature '{key}' is parsed as {spec[key]} by one column "
                    f"and as {value} by '{column.name}'")
            spec[key] = value
    return spec


