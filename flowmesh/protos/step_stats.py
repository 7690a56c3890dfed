"""TensorFlow's ``RunMetadata`` as a wire message (``tensorflow/core/framework/step_stats.proto``
and ``RunMetadata`` of ``tensorflow/core/protobuf/config.proto``).

Only the step statistics are modelled: ``RunMetadata.step_stats`` (per device, per node:
name, start, duration, thread, timeline label), the part TensorBoard's graph view reads from
a ``TaggedRunMetadata`` event ("Session runs": compute time per node). The cost graph and the
partition graphs are left out of the schema; protobuf keeps them as unknown fields, so a
TensorFlow-written ``RunMetadata`` parses and re-serializes unchanged.
"""

from __future__ import annotations

from flowmesh.protos.builder import build

step_stats_pb2 = build('''
syntax = "proto3";
package tensorflow;
message NodeExecStats {
  string node_name = 1;
  int64 all_start_micros = 2;
  int64 op_start_rel_micros = 3;
  int64 op_end_rel_micros = 4;
  int64 all_end_rel_micros = 5;
  string timeline_label = 8;
  int64 scheduled_micros = 9;
  uint32 thread_id = 10;
  int64 all_start_nanos = 13;
  int64 op_start_rel_nanos = 14;
  int64 op_end_rel_nanos = 15;
  int64 all_end_rel_nanos = 16;
  int64 scheduled_nanos = 17;
}
message DeviceStepStats {
  string device = 1;
  repeated NodeExecStats node_stats = 2;
  map<uint32, string> thread_names = 3;
}
message StepStats {
  repeated DeviceStepStats dev_stats = 1;
}
message RunMetadata {
  StepStats step_stats = 1;
}
''', "tensorflow/core/framework/flowmesh_step_stats.proto")

NodeExecStats = step_stats_pb2.NodeExecStats
DeviceStepStats = step_stats_pb2.DeviceStepStats
StepStats = step_stats_pb2.StepStats
RunMetadata = step_stats_pb2.RunMetadata
