"""TensorFlow's graph messages: ``AttrValue``, ``NodeDef``, ``VersionDef``, ``GraphDef``
(``tensorflow/core/framework/{attr_value,node_def,versions,graph}.proto``).

Fields flowmesh does not model (``GraphDef.library`` function definitions,
``GraphDef.debug_info``, ``NodeDef.experimental_type``) are left out of the schema: protobuf
keeps them as unknown fields, so a TensorFlow graph parses and re-serializes unchanged.
"""

from __future__ import annotations

from flowmesh.protos import tensor as _tensor  # noqa: F401 - builds the imported files
from flowmesh.protos.builder import build

attr_value_pb2 = build('''
syntax = "proto3";
package tensorflow;
import "tensorflow/core/framework/tensor.proto";
import "tensorflow/core/framework/tensor_shape.proto";
import "tensorflow/core/framework/types.proto";
message AttrValue {
  message ListValue {
    repeated bytes s = 2;
    repeated int64 i = 3 [packed = true];
    repeated float f = 4 [packed = true];
    repeated bool b = 5 [packed = true];
    repeated DataType type = 6 [packed = true];
    repeated TensorShapeProto shape = 7;
    repeated TensorProto tensor = 8;
    repeated NameAttrList func = 9;
  }
  oneof value {
    bytes s = 2;
    int64 i = 3;
    float f = 4;
    bool b = 5;
    DataType type = 6;
    TensorShapeProto shape = 7;
    TensorProto tensor = 8;
    ListValue list = 1;
    NameAttrList func = 10;
    string placeholder = 9;
  }
}
message NameAttrList {
  string name = 1;
  map<string, AttrValue> attr = 2;
}
''', "tensorflow/core/framework/attr_value.proto")

node_def_pb2 = build('''
syntax = "proto3";
package tensorflow;
import "tensorflow/core/framework/attr_value.proto";
message NodeDef {
  string name = 1;
  string op = 2;
  repeated string input = 3;
  string device = 4;
  map<string, AttrValue> attr = 5;
  message ExperimentalDebugInfo {
    repeated string original_node_names = 1;
    repeated string original_func_names = 2;
  }
  ExperimentalDebugInfo experimental_debug_info = 6;
}
''', "tensorflow/core/framework/node_def.proto")

versions_pb2 = build('''
syntax = "proto3";
package tensorflow;
message VersionDef {
  int32 producer = 1;
  int32 min_consumer = 2;
  repeated int32 bad_consumers = 3;
}
''', "tensorflow/core/framework/versions.proto")

graph_pb2 = build('''
syntax = "proto3";
package tensorflow;
import "tensorflow/core/framework/node_def.proto";
import "tensorflow/core/framework/versions.proto";
message GraphDef {
  repeated NodeDef node = 1;
  VersionDef versions = 4;
  int32 version = 3 [deprecated = true];
}
''', "tensorflow/core/framework/graph.proto")

AttrValue = attr_value_pb2.AttrValue
NameAttrList = attr_value_pb2.NameAttrList
NodeDef = node_def_pb2.NodeDef
VersionDef = versions_pb2.VersionDef
GraphDef = graph_pb2.GraphDef
