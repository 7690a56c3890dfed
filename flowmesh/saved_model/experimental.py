# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.saved_model.experimental``: ``VariablePolicy`` and the ``TrackableResource`` base
class (``save`` is TF2's object-based saving, which flowmesh does not have)."""

from flowmesh.saved_model.trackable_resource import TrackableResource
from flowmesh.saved_model.variable_policy import VariablePolicy
from flowmesh.unsupported import EAGER as _EAGER
from flowmesh.unsupported import unsupported as _unsupported

save = _unsupported("saved_model.experimental.save", _EAGER + " (TF2's object-based tf.saved_model.save needs "
                    "trackable objects and tf.function; use simple_save or Builder)")
