"""``tf.data.experimental``: the names flowmesh supports."""

from flowmesh.data.dataset import AUTOTUNE, INFINITE, UNKNOWN
from flowmesh.data.experimental_transforms import (
    Counter,
    enumerate_dataset,
    map_and_batch,
    parallel_interleave,
    shuffle_and_repeat,
    unbatch,
)
from flowmesh.data.options import AutoShardPolicy, Options
from flowmesh.data.sharding import auto_shard

INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "AutoShardPolicy", "Counter", "Options",
           "auto_shard", "enumerate_dataset", "map_and_batch", "parallel_interleave", "shuffle_and_repeat",
           "unbatch"]
