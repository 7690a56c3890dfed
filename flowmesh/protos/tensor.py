"""TensorFlow's tensor messages: ``DataType``, ``TensorShapeProto``, ``TensorProto``
(``tensorflow/core/framework/{types,tensor_shape,resource_handle,tensor}.proto``)."""

from __future__ import annotations

from flowmesh.protos.builder import build

types_pb2 = build('''
syntax = "proto3";
package tensorflow;
enum DataType {
  DT_INVALID = 0;
  DT_FLOAT = 1;
  DT_DOUBLE = 2;
  DT_INT32 = 3;
  DT_UINT8 = 4;
  DT_INT16 = 5;
  DT_INT8 = 6;
  DT_STRING = 7;
  DT_COMPLEX64 = 8;
  DT_INT64 = 9;
  DT_BOOL = 10;
  DT_QINT8 = 11;
  DT_QUINT8 = 12;
  DT_QINT32 = 13;
  DT_BFLOAT16 = 14;
  DT_QINT16 = 15;
  DT_QUINT16 = 16;
  DT_UINT16 = 17;
  DT_COMPLEX128 = 18;
  DT_HALF = 19;
  DT_RESOURCE = 20;
  DT_VARIANT = 21;
  DT_UINT32 = 22;
  DT_UINT64 = 23;
  DT_FLOAT8_E5M2 = 24;
  DT_FLOAT8_E4M3FN = 25;
  DT_FLOAT8_E4M3FNUZ = 26;
  DT_FLOAT8_E4M3B11FNUZ = 27;
  DT_FLOAT8_E5M2FNUZ = 28;
  DT_INT4 = 29;
  DT_UINT4 = 30;
  DT_INT2 = 31;
  DT_UINT2 = 32;
  DT_FLOAT4_E2M1FN = 33;
  DT_FLOAT_REF = 101;
  DT_DOUBLE_REF = 102;
  DT_INT32_REF = 103;
  DT_UINT8_REF = 104;
  DT_INT16_REF = 105;
  DT_INT8_REF = 106;
  DT_STRING_REF = 107;
  DT_COMPLEX64_REF = 108;
  DT_INT64_REF = 109;
  DT_BOOL_REF = 110;
  DT_QINT8_REF = 111;
  DT_QUINT8_REF = 112;
  DT_QINT32_REF = 113;
  DT_BFLOAT16_REF = 114;
  DT_QINT16_REF = 115;
  DT_QUINT16_REF = 116;
  DT_UINT16_REF = 117;
  DT_COMPLEX128_REF = 118;
  DT_HALF_REF = 119;
  DT_RESOURCE_REF = 120;
  DT_VARIANT_REF = 121;
  DT_UINT32_REF = 122;
  DT_UINT64_REF = 123;
  DT_FLOAT8_E5M2_REF = 124;
  DT_FLOAT8_E4M3FN_REF = 125;
  DT_FLOAT8_E4M3FNUZ_REF = 126;
  DT_FLOAT8_E4M3B11FNUZ_REF = 127;
  DT_FLOAT8_E5M2FNUZ_REF = 128;
  DT_INT4_REF = 129;
  DT_UINT4_REF = 130;
  DT_INT2_REF = 131;
  DT_UINT2_REF = 132;
  DT_FLOAT4_E2M1FN_REF = 133;
}
message SerializedDType { DataType datatype = 1; }
''', "tensorflow/core/framework/types.proto")

tensor_shape_pb2 = build('''
syntax = "proto3";
package tensorflow;
message TensorShapeProto {
  message Dim { int64 size = 1; string name = 2; }
  repeated Dim dim = 2;
  bool unknown_rank = 3;
}
''', "tensorflow/core/framework/tensor_shape.proto")

resource_handle_pb2 = build('''
syntax = "proto3";
package tensorflow;
import "tensorflow/core/framework/tensor_shape.proto";
import "tensorflow/core/framework/types.proto";
message ResourceHandleProto {
  string device = 1;
  string container = 2;
  string name = 3;
  uint64 hash_code = 4;
  string maybe_type_name = 5;
  message DtypeAndShape { DataType dtype = 1; TensorShapeProto shape = 2; }
  repeated DtypeAndShape dtypes_and_shapes = 6;
}
''', "tensorflow/core/framework/resource_handle.proto")

tensor_pb2 = build('''
syntax = "proto3";
package tensorflow;
import "tensorflow/core/framework/resource_handle.proto";
import "tensorflow/core/framework/tensor_shape.proto";
import "tensorflow/core/framework/types.proto";
message TensorProto {
  DataType dtype = 1;
  TensorShapeProto tensor_shape = 2;
  int32 version_number = 3;
  bytes tensor_content = 4;
  repeated int32 half_val = 13 [packed = true];
  repeated float float_val = 5 [packed = true];
  repeated double double_val = 6 [packed = true];
  repeated int32 int_val = 7 [packed = true];
  repeated bytes string_val = 8;
  repeated float scomplex_val = 9 [packed = true];
  repeated int64 int64_val = 10 [packed = true];
  repeated bool bool_val = 11 [packed = true];
  repeated double dcomplex_val = 12 [packed = true];
  repeated ResourceHandleProto resource_handle_val = 14;
  repeated VariantTensorDataProto variant_val = 15;
  repeated uint32 uint32_val = 16 [packed = true];
  repeated uint64 uint64_val = 17 [packed = true];
  bytes float8_val = 18;
}
message VariantTensorDataProto {
  string type_name = 1;
  bytes metadata = 2;
  repeated TensorProto tensors = 3;
}
''', "tensorflow/core/framework/tensor.proto")

DataType = types_pb2.DataType
TensorShapeProto = tensor_shape_pb2.TensorShapeProto
ResourceHandleProto = resource_handle_pb2.ResourceHandleProto
TensorProto = tensor_pb2.TensorProto
