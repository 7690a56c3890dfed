"""``Dataset.cardinality``: the number of elements a pipeline yields, computed from its
stages as TensorFlow does (``INFINITE`` = -1, ``UNKNOWN`` = -2 when a stage's count depends
on the data: filter, flat_map, file readers, generators..., and ``map``: TensorFlow 1's ``map``
does not preserve cardinality, since its function may end the input early)."""

from __future__ import annotations

from typing import Any

from flowmesh.kernels.pipeline import batching, cache, parallel, shuffle, sources, transforms
from flowmesh.kernels.pipeline.base import DatasetDef
from flowmesh.kernels.pipeline.generated_sources import ListDataset, RandomDataset
from flowmesh.kernels.pipeline.stateful_transforms import AssertCardinalityDataset, ScanDataset

INFINITE = -1
UNKNOWN = -2

_SAME_AS_SOURCE = (parallel.PrefetchDataset, transforms.OptionsDataset, cache.CacheDataset, shuffle.ShuffleDataset, ScanDataset)


def cardinality(dataset: DatasetDef) -> int:
    """The number of elements of one pass over ``dataset``, ``INFINITE`` or ``UNKNOWN``."""
    rule = _RULES.get(type(dataset))
    if rule is not None:
        return rule(dataset)
    if isinstance(dataset, _SAME_AS_SOURCE):
        return cardinality(dataset.source)
    return UNKNOWN


def _range(d: sources.RangeDataset) -> int:
    return len(range(*d.bounds))


def _zip(d: sources.ZipDataset) -> int:
    counts = [cardinality(i) for i in d.inputs]
    finite = [c for c in counts if c >= 0]
    if finite:
        return min(finite)
    return UNKNOWN if UNKNOWN in counts else INFINITE


def _concatenate(d: sources.ConcatenateDataset) -> int:
    a, b = (cardinality(p) for p in d.parts)
    if INFINITE in (a, b):
        return INFINITE
    return UNKNOWN if UNKNOWN in (a, b) else a + b


def _take(d: transforms.TakeDataset) -> int:
    n = cardinality(d.source)
    if d.count < 0:
        return n
    if n == UNKNOWN:
        return UNKNOWN
    return d.count if n == INFINITE else min(n, d.count)


def _skip(d: transforms.SkipDataset) -> int:
    n = cardinality(d.source)
    if n < 0:
        return n
    return 0 if d.count < 0 else max(0, n - d.count)


def _repeat(d: transforms.RepeatDataset) -> int:
    n = cardinality(d.source)
    if d.count < 0:
        return 0 if n == 0 else INFINITE
    if d.count == 0:
        return 0
    return n if n < 0 else n * d.count


def _shard(d: transforms.ShardDataset) -> int:
    n = cardinality(d.source)
    if n < 0:
        return n
    return n // d.num_shards + (1 if d.index < n % d.num_shards else 0)


def _batch(d: Any) -> int:
    n = cardinality(d.source)
    if n < 0:
        return n
    return n // d.batch_size if d.drop_remainder else -(-n // d.batch_size)


_RULES: dict[type, Any] = {
    sources.TensorDataset: lambda d: 1,
    sources.TensorSliceDataset: lambda d: d.count,
    sources.RangeDataset: _range,
    sources.ZipDataset: _zip,
    sources.ConcatenateDataset: _concatenate,
    transforms.TakeDataset: _take,
    transforms.SkipDataset: _skip,
    transforms.RepeatDataset: _repeat,
    transforms.ShardDataset: _shard,
    batching.BatchDataset: _batch,
    batching.PaddedBatchDataset: _batch,
    ListDataset: lambda d: len(d.elements),
    RandomDataset: lambda d: INFINITE,
    AssertCardinalityDataset: lambda d: d.cardinality,
}
