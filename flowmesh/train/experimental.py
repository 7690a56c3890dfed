"""``tf.train.experimental``: loss scaling, ``PythonState`` (which ``tf.train.Saver`` saves)
and the checkpoint sharding callbacks."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "train.experimental")
