"""``tf.distribute.CrossDeviceOps``: reducing per-replica values to destination devices and
broadcasting a tensor to them, in the graph. :class:`ReductionToOneDevice` adds the values
up on one device and copies the result to each destination; :class:`NcclAllReduce` and
:class:`HierarchicalCopyAllReduce` (all-reduce) add them up on every destination device.
The three give the same numbers; flowmesh's MirroredStrategy all-reduces gradients with its
own collective ops whichever is passed as ``cross_device_ops``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import get_default_graph
from flowmesh.distribute.reduce_op import ReduceOp
from flowmesh.distribute.values import Mirrored, MirroredVariable, PerReplica
from flowmesh.ops import array_ops, math_ops


def _devices(destinations: Any) -> list[str]:
    """Device strings of ``destinations``: a device string or list of them, a tensor or
    variable (its device), or a distributed value (its components' devices)."""
    if isinstance(destinations, str):
        return [destinations]
    if isinstance(destinations, MirroredVariable):
        return [c.device for c in destinations.components]
    if isinstance(destinations, PerReplica):
        return [getattr(v, "device", "") for v in destinations.values]
    if isinstance(destinations, (list, tuple)):
        return [d if isinstance(d, str) else d.device for d in destinations]
    device = getattr(destinations, "device", None)
    if device is None:
        raise ValueError(f"destinations must be device strings, a tensor or a distributed value, got {destinations!r}")
    return [device]


def _values(value: Any) -> list[Any]:
    return list(value.values) if isinstance(value, PerReplica) else [value]


def _op(reduce_op: Any) -> ReduceOp:
    return reduce_op if isinstance(reduce_op, ReduceOp) else ReduceOp[str(reduce_op).upper()]


def _on_devices(devices: Sequence[str], make: Callable[[], Any]) -> Any:
    graph = get_default_graph()
    results = []
    for device in devices:
        with graph.device(device):
            results.append(make())
    return results[0] if len(results) == 1 else Mirrored(results)


class CrossDeviceOps:
    """Base class: :meth:`reduce`, :meth:`batch_reduce`, :meth:`broadcast`."""

    def __init__(self) -> None:
        self._accumulate: Callable[[list[Any]], Any] = math_ops.add_n

    def _sum(self, values: list[Any], op: ReduceOp) -> Any:
        tensors = [convert_to_tensor(v) for v in values]
        total = tensors[0] if len(tensors) == 1 else self._accumulate(tensors)
        return total / len(tensors) if op is ReduceOp.MEAN else total

    def reduce(self, reduce_op: Any, per_replica_value: Any, destinations: Any, options: Any = None) -> Any:
        """``per_replica_value``'s values combined by ``reduce_op`` (SUM or MEAN), on each
        destination device (a tensor for one destination, else a Mirrored value)."""
        op, values, devices = _op(reduce_op), _values(per_replica_value), _devices(destinations)
        return self._reduce_to(op, values, devices)

    def _reduce_to(self, op: ReduceOp, values: list[Any], devices: list[str]) -> Any:
        return _on_devices(devices, lambda: self._sum(values, op))

    def batch_reduce(self, reduce_op: Any, value_destination_pairs: Sequence[tuple[Any, Any]],
                     options: Any = None) -> list[Any]:
        """:meth:`reduce` of each ``(value, destinations)`` pair."""
        return [self.reduce(reduce_op, value, destinations, options) for value, destinations in value_destination_pairs]

    def broadcast(self, tensor: Any, destinations: Any) -> Any:
        """``tensor`` copied to each destination device."""
        return _on_devices(_devices(destinations), lambda: array_ops.identity(tensor))


class ReductionToOneDevice(CrossDeviceOps):
    """Adds the values up on ``reduce_to_device`` (default: the first destination) with
    ``accumulation_fn`` (default ``tf.add_n``), then copies the result to the destinations."""

    def __init__(self, reduce_to_device: str | None = None, accumulation_fn: Callable | None = None):
        super().__init__()
        self.reduce_to_device = reduce_to_device
        if accumulation_fn is not None:
            self._accumulate = accumulation_fn

    def _reduce_to(self, op: ReduceOp, values: list[Any], devices: list[str]) -> Any:
        with get_default_graph().device(self.reduce_to_device or devices[0]):
            total = self._sum(values, op)
        return _on_devices(devices, lambda: array_ops.identity(total))


class AllReduceCrossDeviceOps(CrossDeviceOps):
    """All-reduce: every destination device adds the values up itself."""

    def __init__(self, all_reduce_alg: str = "nccl", num_packs: int = 1):
        super().__init__()
        if num_packs < 0:
            raise ValueError(f"NCCL all-reduce requires num_packs >= 0, but {num_packs} is specified")
        self.all_reduce_alg, self.num_packs = all_reduce_alg, num_packs


class NcclAllReduce(AllReduceCrossDeviceOps):
    """All-reduce (NCCL's algorithm in TensorFlow; here each destination sums the values)."""

    def __init__(self, num_packs: int = 1):
        super().__init__("nccl", num_packs)


class HierarchicalCopyAllReduce(AllReduceCrossDeviceOps):
    """All-reduce by hierarchical copies (TensorFlow's DGX-1 algorithm; here each
    destination sums the values)."""

    def __init__(self, num_packs: int = 1):
        super().__init__("hierarchical_copy", num_packs)
