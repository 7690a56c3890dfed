"""Checkpoint sharding callbacks (``tf.train.experimental.ShardingCallback`` and the two
policies TensorFlow 2.13+ ships), ported from TensorFlow's
``python/checkpoint/sharding/sharding_util.py`` and ``sharding_policies.py``.

A callback takes a list of :class:`ShardableTensor` and returns shards, each a dict
``{checkpoint_key: {slice_spec: tensor}}``. :class:`MaxShardSizePolicy` slices tensors
(graph ``Slice`` ops, along one axis) so that no shard exceeds a byte budget; its slice specs are
TensorFlow's ``SaveSliceInfo.spec`` strings (``"4 6 0,2:0,6"``, every dimension spelled
out, never ``-``), so the shards are the ones TensorFlow computes from the same tensors.
One difference: where not even the thinnest slice along one axis fits an empty shard,
TensorFlow loops forever; flowmesh gives that slice a shard of its own, over the budget.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
import logging
import math
from collections.abc import Hashable, MutableMapping, Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.default_session import get_default_session
from flowmesh.core.device_spec import DeviceSpec
from flowmesh.core.graph import Tensor, get_default_graph
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import manip_ops

logger = logging.getLogger("flowmesh.train")

OBJECT_GRAPH_PROTO_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
TensorSlices = MutableMapping[str, Any]
Shard = MutableMapping[str, TensorSlices]


@dataclasses.dataclass(frozen=True)
class ShardableTensor:
    """A tensor with what a sharding callback needs (``tf.train.experimental.ShardableTensor``).

    Attributes are TensorFlow's: the save spec, the tensor, its dtype, device, name, shape,
    slice spec (a ``shape_and_slices`` string, "" for a whole tensor), checkpoint key and the
    object it belongs to.
    """

    _tensor_save_spec: Any
    tensor: Any
    dtype: Any
    device: Any
    name: str
    shape: Any
    slice_spec: Any
    checkpoint_key: str
    trackable: Any

    def __hash__(self) -> int:
        return hash((self.name, self.dtype, str(self.device), self.checkpoint_key))

    def __repr__(self) -> str:
        fields = ("_tensor_save_spec", "tensor", "dtype", "device", "name", "shape", "slice_spec",
                  "checkpoint_key", "trackable")
        body = "\n".join(f"  {f}={getattr(self, f)!r}" for f in fields)
        return f"\n{type(self).__name__}:\n{body}"


class ShardingCallback(abc.ABC):
    """A checkpoint sharding function with a text description
    (``tf.train.experimental.ShardingCallback``).

    Subclasses define ``description`` and ``__call__(shardable_tensors) -> [shard, ...]``.
    Shards must keep every tensor, its shape, dtype and task.
    """

    @property
    @abc.abstractmethod
    def description(self) -> str:
        """A text description of the sharding policy."""

    @abc.abstractmethod
    def __call__(self, shardable_tensors: Sequence[ShardableTensor]) -> Sequence[Shard]:
        """Returns the shards of ``shardable_tensors``."""

    def __hash__(self) -> int:
        hash_val = hash(self.description)
        for attr_name, attr_val in vars(self).items():
            if not (inspect.ismethod(attr_val) or inspect.isfunction(attr_val)):
                hash_val ^= hash(attr_name)
                if isinstance(attr_val, Hashable):
                    hash_val ^= hash(attr_val)
        return hash_val


class ShardByTaskPolicy(ShardingCallback):
    """Puts every tensor into one shard (tensors arrive already grouped by task)."""

    @property
    def description(self) -> str:
        return "Split tensors into shards based on their device spec task."

    def __call__(self, shardable_tensors: Sequence[ShardableTensor]) -> Sequence[Shard]:
        """Returns ``[{checkpoint_key: {slice_spec: tensor}}]``."""
        tensors_by_task: Shard = {}
        for t in shardable_tensors:
            tensors_by_task.setdefault(t.checkpoint_key, {})[t.slice_spec] = t.tensor
        return [tensors_by_task]


class MaxShardSizePolicy(ShardingCallback):
    """Splits tensors into shards of at most ``max_shard_size`` bytes.

    A shard may exceed it when it holds a single scalar or string tensor that cannot be
    sliced, or the object graph (whose size is not known when saving).

    Args:
        max_shard_size: the largest shard, in bytes.
    """

    def __init__(self, max_shard_size: int):
        self.max_shard_size = max_shard_size

    @property
    def description(self) -> str:
        return "Split tensors into shards with a max shard size."

    def __call__(self, shardable_tensors: Sequence[ShardableTensor]) -> Sequence[Shard]:
        return _Partitioner(self.max_shard_size).get_shards(shardable_tensors)


def slice_info_spec(full_shape: Sequence[int], offset: Sequence[int], shape: Sequence[int]) -> str:
    """TensorFlow's ``Variable.SaveSliceInfo(...).spec``: ``"4 6 0,2:0,6"``."""
    dims = " ".join(str(int(d)) for d in full_shape)
    return dims + " " + ":".join(f"{int(o)},{int(n)}" for o, n in zip(offset, shape))


def _parse_slice_info(spec: str) -> tuple[list[int], list[int], list[int]]:
    parts = spec.strip().split(" ")
    full = [int(d) for d in parts[:-1]]
    offset, shape = [], []
    for dim, f in zip(parts[-1].split(":"), full):
        o, n = (0, f) if dim == "-" else (int(x) for x in dim.split(","))
        offset.append(o)
        shape.append(n)
    return full, offset, shape


def _string_sizes(tensor: Any, rank: int) -> list[int] | None:
    """Byte lengths of a string tensor's elements (None: unknown, as TensorFlow in a function)."""
    if isinstance(tensor, Tensor):
        session = get_default_session()
        if session is None:
            return None
        tensor = session.run(tensor)
    values = np.asarray(tensor, dtype=object).reshape(-1) if rank else [tensor]
    return [len(v if isinstance(v, bytes) else str(v).encode()) for v in values]


class _Partitioner:
    """TensorFlow's ``MaxShardSizePolicy.MaxShardSizePartitioner``."""

    def __init__(self, max_shard_size: int):
        self.max_shard_size = max_shard_size
        self.shards: list[Shard] = [{}]
        self.large: list[Shard] = []
        self.remaining = max_shard_size

    def get_shards(self, shardable_tensors: Sequence[ShardableTensor]) -> list[Shard]:
        warned = False
        for t in shardable_tensors:
            warned = self._add_tensor(t, warned)
        return (self.shards if self.shards[0] else []) + self.large

    def _add_tensor(self, t: ShardableTensor, warned: bool) -> bool:
        self.key, self.device, self.root = t.checkpoint_key, t.device, t.tensor
        if t.slice_spec:
            full, offset, shape = _parse_slice_info(t.slice_spec)
            self.full_shape, self.root_shape, self.root_offset = full, shape, offset
        else:
            self.full_shape = self.root_shape = list(TensorShape(t.shape).as_list())
            self.root_offset = [0] * len(self.root_shape)
        dtype = dtypes.as_dtype(t.dtype)
        rank = len(self.root_shape)
        self.dtype_size = dtype.size
        total = math.prod(self.root_shape) * self.dtype_size
        if self.key == OBJECT_GRAPH_PROTO_KEY or dtype == dtypes.variant:
            total = self.dtype_size = 0
        elif dtype == dtypes.string:
            sizes = _string_sizes(self.root, rank)
            if sizes is None:
                total = self.dtype_size = 0
                if not warned:
                    logger.warning("The checkpoint sharding policy runs outside a session: the "
                                   "size of string constants cannot be obtained.")
                    warned = True
            else:
                total, self.dtype_size = sum(sizes), max(sizes, default=0)
        if rank == 0:
            self._add_scalar(t.slice_spec, total)
        else:
            self._add_sliced(total)
        return warned

    def _add_scalar(self, slice_spec: str, total: int) -> None:
        if total > self.max_shard_size:
            logger.warning("Tensor %s of size %s bytes cannot be partitioned into a shard of at "
                           "most %s bytes; it gets its own shard.", self.key, total,
                           self.max_shard_size)
            self.large.append({self.key: {slice_spec: self.root}})
            return
        if total > self.remaining:
            self._new_shard()
        self.shards[-1].setdefault(self.key, {})[slice_spec] = self.root
        self.remaining -= total

    def _new_shard(self) -> None:
        self.shards.append({})
        self.remaining = self.max_shard_size

    def _add_sliced(self, total: int) -> None:
        self.offset = list(self.root_offset)
        self.shape = list(self.root_shape)
        size = total
        while size > self.remaining:
            axis, part = self._next_partition()
            if part == 0 and self.remaining == self.max_shard_size:
                # Not one slice fits even an empty shard: TensorFlow opens empty shards
                # forever; flowmesh gives the thinnest slice a shard of its own.
                axis = max(range(len(self.shape)), key=lambda a: self.shape[a])
                self._add_partition(axis, 1)
                size = math.prod(self.shape) * self.dtype_size
            elif part == 0:
                self._new_shard()
            else:
                self._add_partition(axis, part)
                size = math.prod(self.shape) * self.dtype_size
        if math.prod(self.shape) > 0:
            relative = [o - r for o, r in zip(self.offset, self.root_offset)]
            tensor = self._slice(relative, self.shape) if relative != [0] * len(relative) \
                or self.shape != self.root_shape else self.root
            spec = slice_info_spec(self.full_shape, self.offset, self.shape)
            self.shards[-1].setdefault(self.key, {})[spec] = tensor
        self.remaining -= size

    def _next_partition(self) -> tuple[int, float]:
        """The axis and size of the partition closest to the remaining shard space."""
        num_elems = math.prod(self.shape)

        def num_partitions(axis: int) -> float:
            bytes_per_slice = num_elems // self.shape[axis] * self.dtype_size
            per_shard = self.remaining // bytes_per_slice if bytes_per_slice else math.inf
            return math.inf if per_shard == 0 else math.ceil(self.shape[axis] / per_shard)

        min_parts, min_axis = num_partitions(0), 0
        for axis in range(1, len(self.shape)):
            parts = num_partitions(axis)
            if parts < min_parts and num_elems * self.dtype_size / parts <= self.remaining:
                min_axis, min_parts = axis, int(parts)
        return min_axis, math.ceil(self.shape[min_axis] / min_parts)

    def _add_partition(self, axis: int, part: float) -> None:
        relative = [o - r for o, r in zip(self.offset, self.root_offset)]
        shape = [r - o for r, o in zip(self.root_shape, relative)]
        shape[axis] = int(part)
        nbytes = math.prod(shape) * self.dtype_size
        tensor = self._slice(relative, shape)
        spec = slice_info_spec(self.full_shape, self.offset, shape)
        if nbytes > self.max_shard_size:
            logger.warning("Tensor %s's minimum slice %s has %s bytes, more than the max shard "
                           "size %s; it gets its own shard.", self.key, spec, nbytes,
                           self.max_shard_size)
            self.large.append({self.key: {spec: tensor}})
        elif nbytes > self.remaining:
            raise RuntimeError(f"Slice size ({nbytes} bytes) is larger than the remaining shard "
                               f"size ({self.remaining} bytes).")
        else:
            self.shards[-1].setdefault(self.key, {})[spec] = tensor
            self.remaining -= nbytes
            if self.remaining == 0:
                self._new_shard()
        self.offset[axis] += int(part)
        relative[axis] += int(part)
        self.shape = [r - o for r, o in zip(self.root_shape, relative)]

    def _slice(self, begin: list[int], size: list[int]) -> Any:
        if not isinstance(self.root, Tensor):
            return np.asarray(self.root)[tuple(slice(b, b + n) for b, n in zip(begin, size))]
        device = self.device.to_string() if isinstance(self.device, DeviceSpec) else self.device
        with get_default_graph().device(device or ""):
            return manip_ops.slice(self.root, begin=begin, size=size)
