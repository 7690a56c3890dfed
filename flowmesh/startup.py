"""What ``import flowmesh`` does before and after it binds the public names, in order.

Importing this module runs the start-up side effects the public names rely on;
:func:`install_config_names` runs the one that needs the filled top level. The order of the
imports below is the start-up order (the import sorter leaves this file alone).
"""

from __future__ import annotations

# 1. OpenMP's wait policy: read once, when torch loads, so it comes before anything imports torch.
import flowmesh.runtime.threading_policy  # noqa: F401
# 2. The collective ops' kernels (all-reduce, broadcast ...) register themselves.
import flowmesh.collective.kernels  # noqa: F401
# 3. The op kernels register themselves.
import flowmesh.kernels  # noqa: F401
# 4. The op definitions (shape rules, gradients) register themselves.
import flowmesh.ops  # noqa: F401
# 5. ``grpc://`` session targets: tf.Session("grpc://host:port") finds its distributed backend.
import flowmesh.distributed.client  # noqa: F401


def install_config_names() -> None:
    """Gives ``flowmesh.config`` (the settings module) ``tf.config``'s names; runs after the
    top level is filled, as it imports ``tf.config``'s implementation."""
    from flowmesh import config_api

    config_api.install()
