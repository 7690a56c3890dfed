# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.losses``: TensorFlow 1.x loss functions and the LOSSES collection helpers."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "losses")

__all__ = [
    "Reduction", "absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance",
    "get_losses", "get_regularization_loss", "get_regularization_losses", "get_total_loss",
    "hinge_loss", "huber_loss", "log_loss", "mean_pairwise_squared_error", "mean_squared_error", "sigmoid_cross_entropy",
    "softmax_cross_entropy", "sparse_softmax_cross_entropy",
]
