"""``tf.feature_column``: turn raw features into model inputs (TensorFlow's v1 columns).

Example:
    >>> age = tf.feature_column.numeric_column("age")
    >>> city = tf.feature_column.categorical_column_with_vocabulary_list("city", ["a", "b"])
    >>> net = tf.feature_column.input_layer(
    ...     features, [age, tf.feature_column.embedding_column(city, 4)])
"""

from flowmesh.feature_column._base import CategoricalColumn, DenseColumn, FeatureColumn
from flowmesh.feature_column.categorical import (
                                                 categorical_column_with_hash_bucket,
                                                 categorical_column_with_identity,
                                                 categorical_column_with_vocabulary_file,
                                                 categorical_column_with_vocabulary_list,
                                                 weighted_categorical_column,
)
from flowmesh.feature_column.crossed import crossed_column
from flowmesh.feature_column.dense_columns import embedding_column, indicator_column
from flowmesh.feature_column.input_layer import input_layer, linear_model, make_parse_example_spec
from flowmesh.feature_column.numeric import bucketized_column, numeric_column
from flowmesh.feature_column.sequence import (
                                              sequence_categorical_column_with_hash_bucket,
                                              sequence_categorical_column_with_identity,
                                              sequence_categorical_column_with_vocabulary_file,
                                              sequence_categorical_column_with_vocabulary_list,
                                              sequence_input_layer,
                                              sequence_numeric_column,
                                              shared_embedding_columns,
)

__all__ = [
    "CategoricalColumn", "DenseColumn", "FeatureColumn", "bucketized_column",
    "categorical_column_with_hash_bucket", "categorical_column_with_identity",
    "categorical_column_with_vocabulary_file", "categorical_column_with_vocabulary_list",
    "crossed_column", "embedding_column", "indicator_column", "input_layer", "linear_model",
    "make_parse_example_spec", "numeric_column", "sequence_categorical_column_with_hash_bucket",
    "sequence_categorical_column_with_identity", "sequence_categorical_column_with_vocabulary_file",
    "sequence_categorical_column_with_vocabulary_list", "sequence_input_layer", "sequence_numeric_column",
    "shared_embedding_columns", "weighted_categorical_column",
]
