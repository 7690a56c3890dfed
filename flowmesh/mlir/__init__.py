"""``tf.mlir``: TensorFlow's MLIR converters (not supported, see ``experimental``)."""

from flowmesh.mlir import experimental

__all__ = ["experimental"]
