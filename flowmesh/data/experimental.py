"""``tf.data.experimental``: the names flowmesh supports."""

from flowmesh.data.dataset import AUTOTUNE, INFINITE, UNKNOWN
from flowmesh.data.options import AutoShardPolicy, Options
from flowmesh.data.sharding import auto_shard

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "AutoShardPolicy", "Options",
           "auto_shard"]
