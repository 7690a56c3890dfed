"""``tf.keras`` in graph mode: layers, models, training, callbacks (TensorFlow's Keras API
built on flowmesh graphs and sessions)."""

from flowmesh.keras import activations, backend, initializers, layers, regularizers

__all__ = ["activations", "backend", "initializers", "layers", "regularizers"]
