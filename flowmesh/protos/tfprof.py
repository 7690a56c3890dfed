"""TensorFlow's profiler (tfprof) messages: what ``tf.profiler.profile`` and ``advise``
return and what ``write_op_log`` writes (``tensorflow/core/profiler/tfprof_output.proto``
and ``tfprof_log.proto``).

``GraphNodeProto`` is one node of the ``scope``/``graph`` views (own and accumulated
statistics, children), ``MultiGraphNodeProto`` one node of the ``op``/``code`` views (a
group of graph nodes), ``AdviceProto`` the advisor's reports per checker, ``OpLogProto``
the extra per-op facts (float operations, types such as ``_trainable_variables``, code
traces). The profile file messages of ``tfprof_log.proto`` (``ProfileProto``) are left out.
"""

from __future__ import annotations

from flowmesh.protos import tensor as _tensor  # noqa: F401 - builds the imported file
from flowmesh.protos.builder import build

tfprof_output_pb2 = build('''
syntax = "proto3";
package tensorflow.tfprof;
import "tensorflow/core/framework/tensor_shape.proto";
import "tensorflow/core/framework/types.proto";
message TFProfTensorProto {
  tensorflow.DataType dtype = 1;
  repeated double value_double = 2;
  repeated int64 value_int64 = 3;
  repeated string value_str = 4;
}
message GraphNodeProto {
  string name = 1;
  TFProfTensorProto tensor_value = 15;
  int64 run_count = 21;
  int64 exec_micros = 2;
  int64 accelerator_exec_micros = 17;
  int64 cpu_exec_micros = 18;
  int64 requested_bytes = 3;
  int64 peak_bytes = 24;
  int64 residual_bytes = 25;
  int64 output_bytes = 26;
  int64 parameters = 4;
  int64 float_ops = 13;
  repeated string devices = 10;
  int64 total_definition_count = 23;
  int64 total_run_count = 22;
  int64 total_exec_micros = 6;
  int64 total_accelerator_exec_micros = 19;
  int64 total_cpu_exec_micros = 20;
  int64 total_requested_bytes = 7;
  int64 total_peak_bytes = 27;
  int64 total_residual_bytes = 28;
  int64 total_output_bytes = 29;
  int64 total_parameters = 8;
  int64 total_float_ops = 14;
  repeated tensorflow.TensorShapeProto shapes = 11;
  map<int32, tensorflow.TensorShapeProto> input_shapes = 16;
  repeated GraphNodeProto children = 12;
}
message MultiGraphNodeProto {
  string name = 1;
  int64 exec_micros = 2;
  int64 accelerator_exec_micros = 12;
  int64 cpu_exec_micros = 13;
  int64 requested_bytes = 3;
  int64 peak_bytes = 16;
  int64 residual_bytes = 17;
  int64 output_bytes = 18;
  int64 parameters = 4;
  int64 float_ops = 5;
  int64 total_exec_micros = 6;
  int64 total_accelerator_exec_micros = 14;
  int64 total_cpu_exec_micros = 15;
  int64 total_requested_bytes = 7;
  int64 total_peak_bytes = 19;
  int64 total_residual_bytes = 20;
  int64 total_output_bytes = 21;
  int64 total_parameters = 8;
  int64 total_float_ops = 9;
  repeated GraphNodeProto graph_nodes = 10;
  repeated MultiGraphNodeProto children = 11;
}
message AdviceProto {
  map<string, Checker> checkers = 1;
  message Checker {
    repeated string reports = 2;
  }
}
''', "tensorflow/core/profiler/flowmesh_tfprof_output.proto")

tfprof_log_pb2 = build('''
syntax = "proto3";
package tensorflow.tfprof;
message CodeDef {
  repeated Trace traces = 1;
  message Trace {
    int64 file_id = 6;
    int32 lineno = 2;
    int64 function_id = 7;
    int64 line_id = 8;
    int32 func_start_line = 5;
  }
}
message OpLogEntry {
  string name = 1;
  int64 float_ops = 2;
  repeated string types = 3;
  CodeDef code_def = 4;
}
message OpLogProto {
  repeated OpLogEntry log_entries = 1;
  map<int64, string> id_to_string = 2;
}
''', "tensorflow/core/profiler/flowmesh_tfprof_log.proto")

TFProfTensorProto = tfprof_output_pb2.TFProfTensorProto
GraphNodeProto = tfprof_output_pb2.GraphNodeProto
MultiGraphNodeProto = tfprof_output_pb2.MultiGraphNodeProto
AdviceProto = tfprof_output_pb2.AdviceProto
CodeDef = tfprof_log_pb2.CodeDef
OpLogEntry = tfprof_log_pb2.OpLogEntry
OpLogProto = tfprof_log_pb2.OpLogProto
