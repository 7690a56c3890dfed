# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.keras`` in graph mode: layers, models, training, callbacks (TensorFlow's Keras API
built on flowmesh graphs and sessions)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "keras")

__all__ = ["Input", "Model", "Sequential", "activations", "applications", "backend", "callbacks", "constraints", "datasets", "initializers", "layers",
           "losses", "metrics", "models", "optimizers", "preprocessing", "regularizers", "utils"]
