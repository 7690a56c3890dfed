"""``tf.mlir.experimental``: not supported (TensorFlow's MLIR converters work on TensorFlow's C++ graph
representation, which flowmesh does not have)."""

from __future__ import annotations

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "mlir.experimental")

