# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.nn.experimental``: dropout from a stateless seed or a custom sampler."""

from flowmesh.ops.dropout_experimental import general_dropout, stateless_dropout
