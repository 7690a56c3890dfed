# ruff: noqa: F401 - re-exports
"""``tf.keras.applications.vgg19``."""

from flowmesh.keras.applications.imagenet_utils import decode_predictions
from flowmesh.keras.applications.vgg import VGG19, preprocess_input
