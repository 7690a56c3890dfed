"""``tf.saved_model.experimental``: ``VariablePolicy`` and the ``TrackableResource`` base
class (``save`` is TF2's object-based saving, which flowmesh does not have)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.unsupported import EAGER as _EAGER
from flowmesh.unsupported import unsupported as _unsupported

_fill_namespace(globals(), "saved_model.experimental")

save = _unsupported("saved_model.experimental.save", _EAGER + " (TF2's object-based tf.saved_model.save needs "
                    "trackable objects and tf.function; use simple_save or Builder)")
