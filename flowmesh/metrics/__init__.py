"""``tf.metrics``: streaming metrics (local variables + update ops), as ``tf.compat.v1.metrics``.

Each function returns ``(value, update_op)``. Run ``tf.local_variables_initializer()`` to
(re)start a stream, ``update_op`` once per batch, then read ``value``.

Example:
    >>> acc, acc_update = tf.metrics.accuracy(labels, predictions)
    >>> sess.run(tf.local_variables_initializer())
    >>> for _ in range(batches): sess.run(acc_update)
    >>> sess.run(acc)
"""

from flowmesh.metrics._core import metric_variable
from flowmesh.metrics.auc import auc
from flowmesh.metrics.counts import (
                                     false_negatives,
                                     false_positives,
                                     precision,
                                     recall,
                                     true_negatives,
                                     true_positives,
)
from flowmesh.metrics.mean import (
                                     accuracy,
                                     mean,
                                     mean_absolute_error,
                                     mean_per_class_accuracy,
                                     mean_squared_error,
                                     root_mean_squared_error,
)

__all__ = [
    "accuracy", "auc", "false_negatives", "false_positives", "mean", "mean_absolute_error",
    "mean_per_class_accuracy", "mean_squared_error", "metric_variable", "precision", "recall",
    "root_mean_squared_error", "true_negatives", "true_positives",
]
