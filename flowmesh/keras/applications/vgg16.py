# ruff: noqa: F401 - re-exports
"""``tf.keras.applications.vgg16``."""

from flowmesh.keras.applications.imagenet_utils import decode_predictions
from flowmesh.keras.applications.vgg import VGG16, preprocess_input
