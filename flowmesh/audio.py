# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.audio``: 16-bit PCM WAV decoding and encoding."""

from flowmesh.ops.audio_ops import decode_wav, encode_wav
