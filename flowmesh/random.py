"""``tf.random``: the TensorFlow 2 spellings of the random ops (``tf.random.normal`` is
``tf.random_normal``), with TensorFlow's graph-level / op-level seed rules."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "random")
