"""``tf.saved_model`` (TF1): ``simple_save``, ``builder.SavedModelBuilder``, ``loader.load``,
signature defs, ``tag_constants`` / ``signature_constants`` (TensorFlow's file format)."""

from types import SimpleNamespace

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.saved_model import builder as _builder
from flowmesh.saved_model import loader as _loader
from flowmesh.saved_model import main_op as _main_op
from flowmesh.saved_model.constants import signature_constants, tag_constants
from flowmesh.saved_model.main_op import main_op_with_restore
from flowmesh.saved_model.signature_def_utils import build_tensor_info, get_tensor_from_tensor_info
from flowmesh.unsupported import EAGER as _EAGER
from flowmesh.unsupported import unsupported as _unsupported

_fill_namespace(globals(), "saved_model")

builder = SimpleNamespace(SavedModelBuilder=_builder.SavedModelBuilder)
loader = SimpleNamespace(load=_loader.load, maybe_saved_model_directory=_loader.maybe_saved_model_directory)
utils = SimpleNamespace(build_tensor_info=build_tensor_info,
                        get_tensor_from_tensor_info=get_tensor_from_tensor_info)
SERVING = tag_constants.SERVING
TRAINING = tag_constants.TRAINING
DEFAULT_SERVING_SIGNATURE_DEF_KEY = signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
PREDICT_METHOD_NAME = signature_constants.PREDICT_METHOD_NAME
CLASSIFY_METHOD_NAME = signature_constants.CLASSIFY_METHOD_NAME
REGRESS_METHOD_NAME = signature_constants.REGRESS_METHOD_NAME
PREDICT_INPUTS = signature_constants.PREDICT_INPUTS
PREDICT_OUTPUTS = signature_constants.PREDICT_OUTPUTS
CLASSIFY_INPUTS = signature_constants.CLASSIFY_INPUTS
CLASSIFY_OUTPUT_CLASSES = signature_constants.CLASSIFY_OUTPUT_CLASSES
CLASSIFY_OUTPUT_SCORES = signature_constants.CLASSIFY_OUTPUT_SCORES
REGRESS_INPUTS = signature_constants.REGRESS_INPUTS
REGRESS_OUTPUTS = signature_constants.REGRESS_OUTPUTS
GPU = tag_constants.GPU
TPU = tag_constants.TPU
main_op = SimpleNamespace(main_op=_main_op.main_op, main_op_with_restore=main_op_with_restore)
save = _unsupported("saved_model.save", _EAGER + " (TF2's object-based tf.saved_model.save needs "
                    "trackable objects and tf.function; use simple_save or Builder)")
load_v2 = _unsupported("saved_model.load_v2", _EAGER + " (TF2's object-based loader restores "
                       "tf.function objects; use tf.saved_model.load(sess, tags, export_dir))")

__all__ = [
    "ASSETS_DIRECTORY", "ASSETS_KEY", "Asset", "Builder", "CLASSIFY_INPUTS", "CLASSIFY_METHOD_NAME",
    "CLASSIFY_OUTPUT_CLASSES", "CLASSIFY_OUTPUT_SCORES", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB",
    "GPU", "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY", "PREDICT_INPUTS", "PREDICT_OUTPUTS", "REGRESS_INPUTS",
    "REGRESS_METHOD_NAME", "REGRESS_OUTPUTS", "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT",
    "SAVED_MODEL_SCHEMA_VERSION", "SaveOptions", "TPU", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME",
    "contains_saved_model", "experimental", "load_v2", "main_op", "main_op_with_restore", "save",
    "SavedModelBuilder", "build_signature_def", "build_tensor_info", "builder",
    "classification_signature_def", "get_tensor_from_tensor_info", "is_valid_signature", "load",
    "loader", "maybe_saved_model_directory", "predict_signature_def", "regression_signature_def",
    "signature_constants", "signature_def_utils", "simple_save", "tag_constants", "utils",
]
