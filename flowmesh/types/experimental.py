# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.types.experimental``: typing names for tensors and callables."""

from flowmesh.core.type_protocols import FunctionType, TensorLike
