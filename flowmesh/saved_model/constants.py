"""SavedModel names: tags, signature keys and method names, file layout (TensorFlow's)."""

from __future__ import annotations

SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
SAVED_MODEL_SCHEMA_VERSION = 1
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
MAIN_OP_KEY = "saved_model_main_op"
LEGACY_INIT_OP_KEY = "legacy_init_op"


class tag_constants:  # noqa: N801 - TensorFlow's module name
    """``tf.saved_model.tag_constants``."""

    SERVING = "serve"
    TRAINING = "train"
    EVAL = "eval"
    GPU = "gpu"
    TPU = "tpu"


class signature_constants:  # noqa: N801 - TensorFlow's module name
    """``tf.saved_model.signature_constants``."""

    DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
    PREDICT_METHOD_NAME = "tensorflow/serving/predict"
    CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
    REGRESS_METHOD_NAME = "tensorflow/serving/regress"
    PREDICT_INPUTS = "inputs"
    PREDICT_OUTPUTS = "outputs"
    CLASSIFY_INPUTS = "inputs"
    CLASSIFY_OUTPUT_CLASSES = "classes"
    CLASSIFY_OUTPUT_SCORES = "scores"
    REGRESS_INPUTS = "inputs"
    REGRESS_OUTPUTS = "outputs"
