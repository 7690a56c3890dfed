# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.profiler`` (TensorFlow 1.x's tfprof): parameter, float-operation and time profiles of
a graph, its advisor, and the op log (see :mod:`flowmesh.profiler.model_analyzer`)."""

from flowmesh.profiler.model_analyzer import Profiler, advise, profile
from flowmesh.profiler.op_log import write_op_log
from flowmesh.profiler.option_builder import ProfileOptionBuilder
from flowmesh.protos.tfprof import AdviceProto, GraphNodeProto, MultiGraphNodeProto, OpLogProto
