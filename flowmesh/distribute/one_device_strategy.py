"""``tf.distribute.OneDeviceStrategy``: one replica on one device; variables created in its
scope and the ops of ``strategy.run`` are placed there."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core.device_spec import DeviceSpec
from flowmesh.core.graph import get_default_graph
from flowmesh.distribute import distribute_lib


class OneDeviceExtended(distribute_lib.StrategyExtended):
    """One replica; variables on the replica's device."""

    def create_variable(self, next_creator: Callable[..., Any], **kwargs: Any) -> Any:
        graph = get_default_graph()
        if graph._colocation_stack:  # slots and other state next to their variable
            return next_creator(**kwargs)
        with graph.device(self._devices[0]):
            return next_creator(**kwargs)


class OneDeviceStrategy(distribute_lib.Strategy):
    """Everything on ``device`` (e.g. ``"/gpu:0"``), one replica: a strategy with the
    distributed API and no distribution, for code written against strategies.

    Example:
        >>> strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
        >>> with strategy.scope():
        ...     v = tf.Variable(1.0)          # on /device:CPU:0
        ...     out = strategy.run(lambda x: x * v, args=(tf.constant(2.0),))

    Raises:
        ValueError: ``device`` names no device type.
    """

    def __init__(self, device: str):
        spec = DeviceSpec.from_string(device)
        if spec.device_type is None:
            raise ValueError(f"OneDeviceStrategy device {device!r} names no device type; use e.g. '/cpu:0'")
        super().__init__(OneDeviceExtended(self, (spec.to_string(),)))

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> Any:
        """``dataset`` itself: its batches feed the one replica."""
        return dataset

    def distribute_datasets_from_function(self, dataset_fn: Callable[..., Any], options: Any = None) -> Any:
        """``dataset_fn(InputContext())`` (one input pipeline, one replica)."""
        from flowmesh.distribute.input_context import InputContext

        return dataset_fn(InputContext())

    experimental_distribute_datasets_from_function = distribute_datasets_from_function
