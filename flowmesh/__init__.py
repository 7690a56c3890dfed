"""flowmesh: TensorFlow 1.x graph-mode distributed training, in Python, on torch kernels.

``import flowmesh as tf`` runs ``tf.compat.v1`` graph-mode code. The public names of the
top level and of every ``tf.*`` namespace are declared in :mod:`flowmesh.api_exports`;
:mod:`flowmesh.startup` holds what importing the package does, in order.
"""

from __future__ import annotations

import flowmesh.startup  # first: the threading policy, then kernel and op registration
from flowmesh.api_builder import fill_namespace as _fill_namespace

__version__ = "0.1.0"

_fill_namespace(globals(), "")
flowmesh.startup.install_config_names()
