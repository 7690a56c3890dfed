# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.version``: the version constants (flowmesh's, see :mod:`flowmesh.build_info`)."""

from flowmesh.build_info import COMPILER_VERSION, GIT_VERSION, VERSION
from flowmesh.framework_flags import (
    GRAPH_DEF_VERSION,
    GRAPH_DEF_VERSION_MIN_CONSUMER,
    GRAPH_DEF_VERSION_MIN_PRODUCER,
)
