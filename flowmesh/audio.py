"""``tf.audio``: 16-bit PCM WAV decoding and encoding."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "audio")
