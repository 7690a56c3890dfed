"""TensorFlow's ``SavedModel`` message (``tensorflow/core/protobuf/saved_model.proto``)."""

from __future__ import annotations

from flowmesh.protos import meta_graph as _meta_graph  # noqa: F401 - builds the imported file
from flowmesh.protos.builder import build

saved_model_pb2 = build('''
syntax = "proto3";
package tensorflow;
import "tensorflow/core/protobuf/meta_graph.proto";
message SavedModel {
  int64 saved_model_schema_version = 1;
  repeated MetaGraphDef meta_graphs = 2;
}
''', "tensorflow/core/protobuf/saved_model.proto")

SavedModel = saved_model_pb2.SavedModel
