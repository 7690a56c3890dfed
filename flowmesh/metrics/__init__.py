"""``tf.metrics``: streaming metrics (local variables + update ops), as ``tf.compat.v1.metrics``.

Each function returns ``(value, update_op)``. Run ``tf.local_variables_initializer()`` to
(re)start a stream, ``update_op`` once per batch, then read ``value``.

Example:
    >>> acc, acc_update = tf.metrics.accuracy(labels, predictions)
    >>> sess.run(tf.local_variables_initializer())
    >>> for _ in range(batches): sess.run(acc_update)
    >>> sess.run(acc)
"""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "metrics")

__all__ = [
    "average_precision_at_k", "false_negatives_at_thresholds", "false_positives_at_thresholds",
    "mean_cosine_distance", "mean_iou", "mean_relative_error", "mean_tensor", "percentage_below",
    "precision_at_k", "precision_at_thresholds", "precision_at_top_k", "recall_at_k", "recall_at_thresholds",
    "recall_at_top_k", "sensitivity_at_specificity", "sparse_average_precision_at_k", "sparse_precision_at_k",
    "specificity_at_sensitivity", "true_negatives_at_thresholds", "true_positives_at_thresholds",
    "accuracy", "auc", "false_negatives", "false_positives", "mean", "mean_absolute_error",
    "mean_per_class_accuracy", "mean_squared_error", "metric_variable", "precision", "recall",
    "root_mean_squared_error", "true_negatives", "true_positives",
]
