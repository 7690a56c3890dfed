"""``tf.VariableSynchronization`` and ``tf.VariableAggregation``: how a distributed
variable is kept in sync and how its replicas' updates combine (accepted by
``tf.Variable``/``get_variable``; ``tf.distribute.ReduceOp.from_variable_aggregation``
maps ``SUM``/``MEAN``). Same members and values as TensorFlow's enums."""

from __future__ import annotations

import enum


class VariableSynchronization(enum.Enum):
    """When a distributed variable is synchronized: ``AUTO`` (the strategy decides),
    ``NONE`` (one copy), ``ON_WRITE`` (on every update) or ``ON_READ`` (on read; each
    replica updates its own copy)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How updates from several replicas combine: ``NONE`` (not allowed), ``SUM``, ``MEAN``
    or ``ONLY_FIRST_REPLICA`` (``ONLY_FIRST_TOWER`` is TensorFlow 1.x's alias)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3
