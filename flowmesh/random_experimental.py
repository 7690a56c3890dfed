# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.random.experimental``: the stateful ``Generator`` and the stateless helpers."""

from flowmesh.ops.random_dist_ops import fold_in as stateless_fold_in
from flowmesh.ops.random_dist_ops import split as stateless_split
from flowmesh.ops.random_generator import (
    Algorithm,
    Generator,
    create_rng_state,
    get_global_generator,
    set_global_generator,
)
from flowmesh.ops.random_index_shuffle_ops import index_shuffle
from flowmesh.ops.stateless_shuffle_ops import stateless_shuffle
