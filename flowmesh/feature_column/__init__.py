"""``tf.feature_column``: turn raw features into model inputs (TensorFlow's v1 columns).

Example:
    >>> age = tf.feature_column.numeric_column("age")
    >>> city = tf.feature_column.categorical_column_with_vocabulary_list("city", ["a", "b"])
    >>> net = tf.feature_column.input_layer(
    ...     features, [age, tf.feature_column.embedding_column(city, 4)])
"""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "feature_column")

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
