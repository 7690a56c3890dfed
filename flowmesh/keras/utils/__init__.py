# ruff: noqa: F401 - re-exports
"""``tf.keras.utils``."""

from flowmesh.keras.utils.data_utils import GeneratorEnqueuer, OrderedEnqueuer, Sequence, SequenceEnqueuer
from flowmesh.keras.utils.generic_utils import (
    CustomObjectScope,
    TimedThread,
    custom_object_scope,
    deserialize_keras_object,
    disable_interactive_logging,
    enable_interactive_logging,
    get_custom_objects,
    get_file,
    get_registered_name,
    get_registered_object,
    get_source_inputs,
    is_interactive_logging_enabled,
    normalize,
    pack_x_y_sample_weight,
    register_keras_serializable,
    serialize_keras_object,
    set_random_seed,
    split_dataset,
    to_ordinal,
    unpack_x_y_sample_weight,
    warmstart_embedding_matrix,
)
from flowmesh.keras.utils.np_utils import to_categorical
from flowmesh.keras.utils.progbar import Progbar


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
