"""``tf.tpu.experimental``: not supported (TPUs are not a flowmesh device)."""

from __future__ import annotations

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "tpu.experimental")

