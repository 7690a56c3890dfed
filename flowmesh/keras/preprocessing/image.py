# ruff: noqa: F401 - re-exports
"""``tf.keras.preprocessing.image``: image files and arrays, random augmentation,
``ImageDataGenerator`` (``flow``, ``flow_from_directory``) and its iterators."""

from flowmesh.keras.preprocessing.image_generator import (
    DirectoryIterator,
    ImageDataGenerator,
    Iterator,
    NumpyArrayIterator,
)
from flowmesh.keras.preprocessing.image_utils import (
    apply_affine_transform,
    apply_brightness_shift,
    apply_channel_shift,
    array_to_img,
    img_to_array,
    load_img,
    random_brightness,
    random_channel_shift,
    random_rotation,
    random_shear,
    random_shift,
    random_zoom,
    save_img,
    smart_resize,
)
