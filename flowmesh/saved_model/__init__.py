"""``tf.saved_model`` (TF1): ``simple_save``, ``builder.SavedModelBuilder``, ``loader.load``,
signature defs, ``tag_constants`` / ``signature_constants`` (TensorFlow's file format)."""

from types import SimpleNamespace

from flowmesh.saved_model import builder as _builder
from flowmesh.saved_model import loader as _loader
from flowmesh.saved_model import signature_def_utils
from flowmesh.saved_model.builder import SavedModelBuilder
from flowmesh.saved_model.constants import signature_constants, tag_constants
from flowmesh.saved_model.loader import load, maybe_saved_model_directory
from flowmesh.saved_model.signature_def_utils import (
                                                      build_signature_def,
                                                      build_tensor_info,
                                                      classification_signature_def,
                                                      get_tensor_from_tensor_info,
                                                      is_valid_signature,
                                                      predict_signature_def,
                                                      regression_signature_def,
)
from flowmesh.saved_model.simple_save import simple_save

builder = SimpleNamespace(SavedModelBuilder=_builder.SavedModelBuilder)
loader = SimpleNamespace(load=_loader.load, maybe_saved_model_directory=_loader.maybe_saved_model_directory)
utils = SimpleNamespace(build_tensor_info=build_tensor_info,
                        get_tensor_from_tensor_info=get_tensor_from_tensor_info)
SERVING = tag_constants.SERVING
TRAINING = tag_constants.TRAINING
DEFAULT_SERVING_SIGNATURE_DEF_KEY = signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
PREDICT_METHOD_NAME = signature_constants.PREDICT_METHOD_NAME

__all__ = [
    "SavedModelBuilder", "build_signature_def", "build_tensor_info", "builder",
    "classification_signature_def", "get_tensor_from_tensor_info", "is_valid_signature", "load",
    "loader", "maybe_saved_model_directory", "predict_signature_def", "regression_signature_def",
    "signature_constants", "signature_def_utils", "simple_save", "tag_constants", "utils",
]
