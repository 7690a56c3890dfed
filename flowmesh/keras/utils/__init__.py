# ruff: noqa: F401 - re-exports
"""``tf.keras.utils``."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "keras.utils")


def __getattr__(name: str):  # the data and image helpers live in keras.preprocessing (imported late)
    from flowmesh.keras import preprocessing
    from flowmesh.keras.preprocessing import image, sequence

    table = {"pad_sequences": sequence.pad_sequences, "array_to_img": image.array_to_img,
             "img_to_array": image.img_to_array, "load_img": image.load_img, "save_img": image.save_img,
             "image_dataset_from_directory": preprocessing.image_dataset_from_directory,
             "text_dataset_from_directory": preprocessing.text_dataset_from_directory,
             "timeseries_dataset_from_array": preprocessing.timeseries_dataset_from_array}
    if name in table:
        return table[name]
    raise AttributeError(f"module 'flowmesh.keras.utils' has no attribute {name!r}")
