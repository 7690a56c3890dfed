"""``tf.profiler`` (TensorFlow 1.x's tfprof): parameter, float-operation and time profiles of
a graph, its advisor, and the op log (see :mod:`flowmesh.profiler.model_analyzer`)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "profiler")
