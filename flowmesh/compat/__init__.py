"""``tf.compat.v1``: TensorFlow 2's name for the 1.x API, which is flowmesh's top level.

``import flowmesh.compat.v1 as tf`` and ``flowmesh.compat.v1.Session`` both work, so
programs written against ``tensorflow.compat.v1`` run after changing one import.
"""

from __future__ import annotations

import sys

import flowmesh as _flowmesh

v1 = _flowmesh
sys.modules[f"{__name__}.v1"] = _flowmesh
