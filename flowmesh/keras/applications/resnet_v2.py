# ruff: noqa: F401 - re-exports
"""``tf.keras.applications.resnet_v2``."""

from flowmesh.keras.applications.imagenet_utils import decode_predictions
from flowmesh.keras.applications.resnet import ResNet50V2, ResNet101V2, ResNet152V2
from flowmesh.keras.applications.resnet import preprocess_input_v2 as preprocess_input
