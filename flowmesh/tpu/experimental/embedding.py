"""``tf.tpu.experimental.embedding``: not supported (TPU embedding tables need TPUs)."""

from __future__ import annotations

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "tpu.experimental.embedding")

