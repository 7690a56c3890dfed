"""TensorFlow's checkpoint index messages: ``BundleHeaderProto``, ``BundleEntryProto`` and
``TensorSliceProto`` (``tensorflow/core/protobuf/tensor_bundle.proto``,
``framework/tensor_slice.proto``)."""

from __future__ import annotations

from flowmesh.protos import graph as _graph  # noqa: F401 - builds the imported files
from flowmesh.protos.builder import build

tensor_slice_pb2 = build('''
syntax = "proto3";
package tensorflow;
message TensorSliceProto {
  message Extent {
    int64 start = 1;
    oneof has_length { int64 length = 2; }
  }
  repeated Extent extent = 1;
}
''', "tensorflow/core/framework/tensor_slice.proto")

tensor_bundle_pb2 = build('''
syntax = "proto3";
package tensorflow;
import "tensorflow/core/framework/tensor_shape.proto";
import "tensorflow/core/framework/tensor_slice.proto";
import "tensorflow/core/framework/types.proto";
import "tensorflow/core/framework/versions.proto";
message BundleHeaderProto {
  int32 num_shards = 1;
  enum Endianness { LITTLE = 0; BIG = 1; }
  Endianness endianness = 2;
  VersionDef version = 3;
}
message BundleEntryProto {
  DataType dtype = 1;
  TensorShapeProto shape = 2;
  int32 shard_id = 3;
  int64 offset = 4;
  int64 size = 5;
  fixed32 crc32c = 6;
  repeated TensorSliceProto slices = 7;
}
''', "tensorflow/core/protobuf/tensor_bundle.proto")

TensorSliceProto = tensor_slice_pb2.TensorSliceProto
BundleHeaderProto = tensor_bundle_pb2.BundleHeaderProto
BundleEntryProto = tensor_bundle_pb2.BundleEntryProto
