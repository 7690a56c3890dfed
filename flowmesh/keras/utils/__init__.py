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
    to_ordinal,
    unpack_x_y_sample_weight,
    warmstart_embedding_matrix,
)
from flowmesh.keras.utils.np_utils import to_categorical
from flowmesh.keras.utils.progbar import Progbar
