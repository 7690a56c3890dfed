# ruff: noqa: F401 - re-exports
"""``tf.keras.preprocessing``: ``sequence``, ``text``, ``image`` utilities and the
``*_dataset_from_*`` functions."""

from flowmesh.keras.preprocessing import image, sequence, text
from flowmesh.keras.preprocessing.datasets import (
    image_dataset_from_directory,
    text_dataset_from_directory,
    timeseries_dataset_from_array,
)
