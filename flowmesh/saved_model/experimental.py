# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.saved_model.experimental``: ``VariablePolicy`` and the ``TrackableResource`` base
class (``save`` is TF2's object-based saving, which flowmesh does not have)."""

from flowmesh.saved_model.trackable_resource import TrackableResource
from flowmesh.saved_model.variable_policy import VariablePolicy
