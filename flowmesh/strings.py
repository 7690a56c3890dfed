"""``tf.strings``: string tensors hold ``bytes``."""

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.unsupported import unsupported as _unsupported

_fill_namespace(globals(), "strings")

unicode_script = _unsupported("strings.unicode_script", "it needs ICU's script property table "
                              "(UScriptCode values), which flowmesh does not bundle")

__all__ = sorted(name for name in dir() if not name.startswith("_"))
