"""Small TensorFlow messages of the top-level API: ``OptimizerOptions``
(``tensorflow/core/protobuf/config.proto``, the graph optimizer settings a ``GraphOptions``
carries; flowmesh accepts them and does not run TensorFlow's optimizer) and ``LogMessage``
(``tensorflow/core/util/event.proto``, a deprecated ``Event`` payload)."""

from __future__ import annotations

from flowmesh.protos.builder import build

config_pb2 = build('''
syntax = "proto3";
package tensorflow;
message OptimizerOptions {
  bool do_common_subexpression_elimination = 1;
  bool do_constant_folding = 2;
  int64 max_folded_constant_in_bytes = 6;
  bool do_function_inlining = 4;
  enum Level { L1 = 0; L0 = -1; }
  Level opt_level = 3;
  enum GlobalJitLevel { DEFAULT = 0; OFF = -1; ON_1 = 1; ON_2 = 2; }
  GlobalJitLevel global_jit_level = 5;
  bool cpu_global_jit = 7;
}
''', "tensorflow/core/protobuf/flowmesh_optimizer_options.proto")

event_pb2 = build('''
syntax = "proto3";
package tensorflow;
message LogMessage {
  enum Level { UNKNOWN = 0; DEBUGGING = 10; INFO = 20; WARN = 30; ERROR = 40; FATAL = 50; }
  Level level = 1;
  string message = 2;
}
''', "tensorflow/core/util/flowmesh_log_message.proto")

OptimizerOptions = config_pb2.OptimizerOptions
LogMessage = event_pb2.LogMessage
