"""TensorFlow's SavedModel-quantizer option messages
(``tensorflow/compiler/mlir/quantization/tensorflow/quantization_options.proto``, package
``tensorflow.quantization``), with the two messages of
``stablehlo/quantization_config.proto`` they refer to (``CalibrationOptions``,
``DebuggerConfig`` and what those need). Field names, numbers and enums are TensorFlow 2.21's,
so a message serializes to TensorFlow's bytes."""

from __future__ import annotations

from flowmesh.protos import tensor as _tensor  # noqa: F401 - builds tensor.proto first
from flowmesh.protos.builder import build

quantization_config_pb2 = build('''
syntax = "proto3";
package stablehlo.quantization;
message TfRecordFile {
  string path = 1;
}
message RepresentativeDatasetConfig {
  oneof file {
    TfRecordFile tf_record = 1;
  }
  optional string signature_key = 2;
}
message CalibrationOptions {
  enum CalibrationMethod {
    CALIBRATION_METHOD_UNSPECIFIED = 0;
    CALIBRATION_METHOD_MIN_MAX = 1;
    CALIBRATION_METHOD_AVERAGE_MIN_MAX = 2;
    CALIBRATION_METHOD_HISTOGRAM_PERCENTILE = 3;
    CALIBRATION_METHOD_HISTOGRAM_MSE_BRUTEFORCE = 4;
    CALIBRATION_METHOD_HISTOGRAM_MSE_MAX_FREQUENCY = 5;
    CALIBRATION_METHOD_HISTOGRAM_MSE_SYMMETRIC = 6;
  }
  message CalibrationParameters {
    int32 num_bins = 1;
    float min_percentile = 2;
    float max_percentile = 3;
  }
  CalibrationMethod calibration_method = 1;
  CalibrationParameters calibration_parameters = 2;
  repeated RepresentativeDatasetConfig representative_datasets = 3;
  string calibration_data_dir = 4;
  bool force_regenerate_calibration_data = 5;
}
message DebuggerConfig {
  enum DebuggerType {
    DEBUGGER_TYPE_UNSPECIFIED = 0;
    DEBUGGER_TYPE_WHOLE_MODEL = 1;
    DEBUGGER_TYPE_INT_PER_LAYER = 2;
    DEBUGGER_TYPE_FLOAT_PER_LAYER = 3;
  }
  DebuggerType debugger_type = 1;
  string unquantized_dump_model_path = 2;
  string log_dir_path = 3;
}
''', "tensorflow/compiler/mlir/quantization/stablehlo/quantization_config.proto")

quantization_options_pb2 = build('''
syntax = "proto3";
package tensorflow.quantization;
import "tensorflow/compiler/mlir/quantization/stablehlo/quantization_config.proto";
import "tensorflow/core/framework/tensor.proto";
message QuantizationMethod {
  reserved 1 to 2;
  enum PresetMethod {
    METHOD_UNSPECIFIED = 0;
    METHOD_NO_QUANTIZE = 1;
    METHOD_STATIC_RANGE_INT8 = 2;
    METHOD_DYNAMIC_RANGE_INT8 = 3;
    METHOD_STATIC_RANGE_WEIGHT_ONLY_INT8 = 4;
  }
  PresetMethod preset_method = 4;
  repeated QuantizationComponentSpec quantization_component_specs = 3;
}
message QuantizationComponentSpec {
  enum QuantizationComponent {
    COMPONENT_UNSPECIFIED = 0;
    COMPONENT_ACTIVATION = 1;
    COMPONENT_WEIGHT = 2;
    COMPONENT_BIAS = 3;
  }
  enum TensorType {
    TENSORTYPE_UNSPECIFIED = 0;
    TENSORTYPE_INT_4 = 1;
    TENSORTYPE_INT_8 = 2;
    TENSORTYPE_INT_32 = 3;
  }
  QuantizationComponent quantization_component = 1;
  TensorType tensor_type = 2;
}
message UnitWiseQuantizationSpec {
  message QuantizationUnit {
    string op_type = 1;
    string node_name = 2;
    string func_name = 3;
  }
  reserved 1 to 4;
  repeated QuantizationUnit unit = 5;
  QuantizationMethod quantization_method = 6;
}
enum OpSet {
  OP_SET_UNSPECIFIED = 0;
  TF = 1;
  XLA = 2;
  UNIFORM_QUANTIZED = 3;
  STABLEHLO = 4;
}
message RepresentativeDataSample {
  map<string, TensorProto> tensor_proto_inputs = 2;
}
message RepresentativeDatasetFile {
  oneof dataset_file {
    string tfrecord_file_path = 1;
  }
}
message QuantizationOptions {
  reserved 3;
  QuantizationMethod quantization_method = 1;
  OpSet op_set = 2;
  repeated UnitWiseQuantizationSpec unit_wise_quantization_specs = 17;
  repeated string tags = 5;
  repeated string signature_keys = 6;
  map<string, RepresentativeDatasetFile> representative_datasets = 7;
  int64 min_num_elements_for_weights = 8;
  optional bool freeze_all_variables = 9;
  optional bool enable_per_channel_quantization = 10;
  bool enable_two_input_tensors = 11;
  bool experimental_enable_tpu_model_support = 12;
  bool enable_legacy_weight_only = 13;
  bool force_graph_mode_calibration = 14;
  stablehlo.quantization.CalibrationOptions calibration_options = 15;
  stablehlo.quantization.DebuggerConfig debugger_config = 16;
}
''', "tensorflow/compiler/mlir/quantization/tensorflow/quantization_options.proto")

QuantizationComponentSpec = quantization_options_pb2.QuantizationComponentSpec
QuantizationMethod = quantization_options_pb2.QuantizationMethod
QuantizationOptions = quantization_options_pb2.QuantizationOptions
UnitWiseQuantizationSpec = quantization_options_pb2.UnitWiseQuantizationSpec
RepresentativeDataSample = quantization_options_pb2.RepresentativeDataSample
