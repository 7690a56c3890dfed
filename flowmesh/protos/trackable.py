"""TensorFlow's object-graph checkpoint message, ``TrackableObjectGraph``
(``tensorflow/core/protobuf/trackable_object_graph.proto``): the tree of objects (a Keras
model, its layers, their variables) saved in a checkpoint's ``_CHECKPOINTABLE_OBJECT_GRAPH``
tensor, which TensorFlow-format ``save_weights``/``load_weights`` match by structure."""

from __future__ import annotations

from flowmesh.protos.builder import build

trackable_object_graph_pb2 = build('''
syntax = "proto3";
package tensorflow;
import "google/protobuf/wrappers.proto";
message TrackableObjectGraph {
  message TrackableObject {
    message ObjectReference {
      int32 node_id = 1;
      string local_name = 2;
    }
    message SerializedTensor {
      string name = 1;
      string full_name = 2;
      string checkpoint_key = 3;
    }
    message SlotVariableReference {
      int32 original_variable_node_id = 1;
      string slot_name = 2;
      int32 slot_variable_node_id = 3;
    }
    repeated ObjectReference children = 1;
    repeated SerializedTensor attributes = 2;
    repeated SlotVariableReference slot_variables = 3;
    RegisteredSaver registered_saver = 4;
    google.protobuf.BoolValue has_checkpoint_values = 5;
  }
  repeated TrackableObject nodes = 1;
}
message RegisteredSaver {
  string name = 1;
  string object_name = 2;
}
''', "tensorflow/core/protobuf/trackable_object_graph.proto")

TrackableObjectGraph = trackable_object_graph_pb2.TrackableObjectGraph
