# ruff: noqa: F401 - re-exports
"""``tf.keras.applications.mobilenet_v2``."""

from flowmesh.keras.applications.imagenet_utils import decode_predictions
from flowmesh.keras.applications.mobilenet import MobileNetV2, preprocess_input
