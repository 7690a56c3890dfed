"""TensorFlow's ``MetaGraphDef`` and what it holds: ``SaverDef``, ``CollectionDef``,
``SignatureDef``, ``TensorInfo``, ``VariableDef`` / ``SaveSliceInfoDef``
(``tensorflow/core/protobuf/{saver,meta_graph}.proto``, ``framework/variable.proto``).

Left out (kept as unknown fields when parsed): ``MetaInfoDef.stripped_op_list`` (flowmesh
has no OpDef registry in TensorFlow's form), ``MetaGraphDef.object_graph_def`` (TF2 saved
objects) and ``TensorInfo.composite_tensor``.
"""

from __future__ import annotations

from flowmesh.protos import graph as _graph  # noqa: F401 - builds the imported files
from flowmesh.protos.builder import build

saver_pb2 = build('''
syntax = "proto3";
package tensorflow;
message SaverDef {
  string filename_tensor_name = 1;
  string save_tensor_name = 2;
  string restore_op_name = 3;
  int32 max_to_keep = 4;
  bool sharded = 5;
  float keep_checkpoint_every_n_hours = 6;
  enum CheckpointFormatVersion { LEGACY = 0; V1 = 1; V2 = 2; }
  CheckpointFormatVersion version = 7;
}
''', "tensorflow/core/protobuf/saver.proto")

variable_pb2 = build('''
syntax = "proto3";
package tensorflow;
enum VariableSynchronization {
  VARIABLE_SYNCHRONIZATION_AUTO = 0; VARIABLE_SYNCHRONIZATION_NONE = 1;
  VARIABLE_SYNCHRONIZATION_ON_WRITE = 2; VARIABLE_SYNCHRONIZATION_ON_READ = 3;
}
enum VariableAggregation {
  VARIABLE_AGGREGATION_NONE = 0; VARIABLE_AGGREGATION_SUM = 1;
  VARIABLE_AGGREGATION_MEAN = 2; VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA = 3;
}
message VariableDef {
  string variable_name = 1;
  string initial_value_name = 6;
  string initializer_name = 2;
  string snapshot_name = 3;
  SaveSliceInfoDef save_slice_info_def = 4;
  bool is_resource = 5;
  bool trainable = 7;
  VariableSynchronization synchronization = 8;
  VariableAggregation aggregation = 9;
}
message SaveSliceInfoDef {
  string full_name = 1;
  repeated int64 full_shape = 2;
  repeated int64 var_offset = 3;
  repeated int64 var_shape = 4;
}
''', "tensorflow/core/framework/variable.proto")

meta_graph_pb2 = build('''
syntax = "proto3";
package tensorflow;
import "google/protobuf/any.proto";
import "tensorflow/core/framework/graph.proto";
import "tensorflow/core/framework/tensor.proto";
import "tensorflow/core/framework/tensor_shape.proto";
import "tensorflow/core/framework/types.proto";
import "tensorflow/core/protobuf/saver.proto";
message MetaGraphDef {
  message MetaInfoDef {
    string meta_graph_version = 1;
    google.protobuf.Any any_info = 3;
    repeated string tags = 4;
    string tensorflow_version = 5;
    string tensorflow_git_version = 6;
    bool stripped_default_attrs = 7;
    map<string, string> function_aliases = 8;
  }
  MetaInfoDef meta_info_def = 1;
  GraphDef graph_def = 2;
  SaverDef saver_def = 3;
  map<string, CollectionDef> collection_def = 4;
  map<string, SignatureDef> signature_def = 5;
  repeated AssetFileDef asset_file_def = 6;
}
message CollectionDef {
  message NodeList { repeated string value = 1; }
  message BytesList { repeated bytes value = 1; }
  message Int64List { repeated int64 value = 1 [packed = true]; }
  message FloatList { repeated float value = 1 [packed = true]; }
  message AnyList { repeated google.protobuf.Any value = 1; }
  oneof kind {
    NodeList node_list = 1;
    BytesList bytes_list = 2;
    Int64List int64_list = 3;
    FloatList float_list = 4;
    AnyList any_list = 5;
  }
}
message TensorInfo {
  message CooSparse {
    string values_tensor_name = 1;
    string indices_tensor_name = 2;
    string dense_shape_tensor_name = 3;
  }
  oneof encoding {
    string name = 1;
    CooSparse coo_sparse = 4;
  }
  DataType dtype = 2;
  TensorShapeProto tensor_shape = 3;
}
message SignatureDef {
  map<string, TensorInfo> inputs = 1;
  map<string, TensorInfo> outputs = 2;
  string method_name = 3;
  map<string, TensorProto> defaults = 4;
}
message AssetFileDef {
  TensorInfo tensor_info = 1;
  string filename = 2;
}
''', "tensorflow/core/protobuf/meta_graph.proto")

SaverDef = saver_pb2.SaverDef
VariableDef = variable_pb2.VariableDef
SaveSliceInfoDef = variable_pb2.SaveSliceInfoDef
MetaGraphDef = meta_graph_pb2.MetaGraphDef
CollectionDef = meta_graph_pb2.CollectionDef
TensorInfo = meta_graph_pb2.TensorInfo
SignatureDef = meta_graph_pb2.SignatureDef
AssetFileDef = meta_graph_pb2.AssetFileDef
