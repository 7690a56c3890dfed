"""``tf.nn.experimental``: dropout from a stateless seed or a custom sampler."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "nn.experimental")
