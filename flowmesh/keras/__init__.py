"""``tf.keras`` in graph mode: layers, models, training, callbacks (TensorFlow's Keras API
built on flowmesh graphs and sessions)."""

from flowmesh.keras import (
    activations,
    applications,
    backend,
    callbacks,
    constraints,
    datasets,
    initializers,
    layers,
    losses,
    metrics,
    models,
    optimizers,
    preprocessing,
    regularizers,
    utils,
)
from flowmesh.keras.engine.input_layer import Input
from flowmesh.keras.engine.sequential import Sequential
from flowmesh.keras.engine.training import Model

__all__ = ["Input", "Model", "Sequential", "activations", "applications", "backend", "callbacks", "constraints", "datasets", "initializers", "layers",
           "losses", "metrics", "models", "optimizers", "preprocessing", "regularizers", "utils"]

from flowmesh.estimator import keras_estimator as estimator  # noqa: E402, F401 - tf.keras.estimator
