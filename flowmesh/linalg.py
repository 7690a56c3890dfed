"""``tf.linalg``: matrix products, contractions, diagonals, bands, norms."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "linalg")

__all__ = sorted(name for name in dir() if not name.startswith("_"))
