# ruff: noqa: F401 - re-exports
"""``tf.keras.applications.resnet50``."""

from flowmesh.keras.applications.imagenet_utils import decode_predictions
from flowmesh.keras.applications.resnet import ResNet50, preprocess_input
