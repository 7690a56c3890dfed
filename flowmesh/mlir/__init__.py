"""``tf.mlir``: TensorFlow's MLIR converters (not supported, see ``experimental``)."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "mlir")

__all__ = ["experimental"]
