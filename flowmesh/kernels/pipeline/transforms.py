"""Element-wise and counting stages: map, filter, flat_map, take, skip, repeat, shard, options."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.pipeline.base import Block, DatasetDef, Element, ElementDropped, Function, block_rows
from flowmesh.kernels.pipeline.context import PipelineContext, PipelineStep


class MapDataset(DatasetDef):
    """``map`` in the calling thread (``num_parallel_calls`` unset)."""

    def __init__(self, name: str, source: DatasetDef, fn: Function):
        self.name = name
        self.source = source
        self.fn = fn

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        fn, step = self.fn, PipelineStep()
        for element in self.source.iterate(ctx):
            try:
                yield tuple(fn(step, element))
            except ElementDropped:  # ignore_errors
                continue


class FilterDataset(DatasetDef):
    """``filter``: the elements whose predicate is true."""

    def __init__(self, name: str, source: DatasetDef, predicate: Function):
        self.name = name
        self.source = source
        self.predicate = predicate

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        predicate, step = self.predicate, PipelineStep()
        for element in self.source.iterate(ctx):
            try:
                (keep,) = predicate(step, element)
            except ElementDropped:  # ignore_errors
                continue
            if tuple(getattr(keep, "shape", ())) != ():
                raise InvalidArgumentError(
                    f"FilterDataset '{self.name}': the predicate must return a scalar bool, got "
                    f"shape {list(keep.shape)}")
            if bool(keep):
                yield element


class FlatMapDataset(DatasetDef):
    """``flat_map``: every element of the dataset the function returns, in order."""

    def __init__(self, name: str, source: DatasetDef, fn: Function):
        self.name = name
        self.source = source
        self.fn = fn

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        step = PipelineStep()
        for element in self.source.iterate(ctx):
            (inner,) = self.fn(step, element)
            yield from as_dataset(inner, self.name).iterate(ctx)


def as_dataset(value: Any, stage: str) -> DatasetDef:
    """Checks that a function returned a dataset.

    Raises:
        InvalidArgumentError: it returned something else.
    """
    if not isinstance(value, DatasetDef):
        raise InvalidArgumentError(
            f"{stage}: the function must return a tf.data.Dataset, got {type(value).__name__}")
    return value


class TakeDataset(DatasetDef):
    """``take(count)``; ``count < 0`` takes everything."""

    def __init__(self, name: str, source: DatasetDef, count: int):
        self.name = name
        self.source = source
        self.count = count

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        if self.count < 0:
            yield from self.source.iterate(ctx)
            return
        if self.count == 0:
            return
        source = self.source.iterate(ctx)
        try:
            for i, element in enumerate(source):
                yield element
                if i + 1 >= self.count:
                    return
        finally:
            source.close()


class SkipDataset(DatasetDef):
    """``skip(count)``; ``count < 0`` skips everything."""

    def __init__(self, name: str, source: DatasetDef, count: int):
        self.name = name
        self.source = source
        self.count = count

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        for i, element in enumerate(self.source.iterate(ctx)):
            if self.count >= 0 and i >= self.count:
                yield element


class RepeatDataset(DatasetDef):
    """``repeat(count)``; ``count < 0`` (or ``None``) repeats forever. An input with no
    elements ends an infinite repeat (as in TensorFlow) instead of spinning."""

    def __init__(self, name: str, source: DatasetDef, count: int):
        self.name = name
        self.source = source
        self.count = count

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        epoch = 0
        while self.count < 0 or epoch < self.count:
            produced = False
            for element in self.source.iterate(ctx):
                produced = True
                yield element
            if not produced:
                return
            epoch += 1

    def blocks(self, ctx: PipelineContext) -> Iterator[Block] | None:
        first = self.source.blocks(ctx)
        return None if first is None else self._repeat_blocks(ctx, first)

    def _repeat_blocks(self, ctx: PipelineContext, first: Iterator[Block]) -> Iterator[Block]:
        epoch = 0
        while self.count < 0 or epoch < self.count:
            produced = False
            for block in first if epoch == 0 else self.source.blocks(ctx):
                produced = produced or block_rows(block) > 0
                yield block
            if not produced:
                return
            epoch += 1


class ShardDataset(DatasetDef):
    """``shard(num_shards, index)``: every ``num_shards``-th element from ``index``."""

    def __init__(self, name: str, source: DatasetDef, num_shards: int, index: int):
        if num_shards == -1 and index == -1:
            raise InvalidArgumentError(f"ShardDataset '{name}': shard(SHARD_HINT, SHARD_HINT) is a placeholder "
                                       "that only auto-sharding with AutoShardPolicy.HINT fills in; set that policy "
                                       "(options.experimental_distribute.auto_shard_policy) or pass real values")
        if num_shards < 1:
            raise InvalidArgumentError(f"ShardDataset '{name}': num_shards must be >= 1, got "
                                       f"{num_shards}")
        if not 0 <= index < num_shards:
            raise InvalidArgumentError(f"ShardDataset '{name}': index must be in [0, "
                                       f"{num_shards}), got {index}")
        self.name = name
        self.source = source
        self.num_shards = num_shards
        self.index = index

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        n, index = self.num_shards, self.index
        for i, element in enumerate(self.source.iterate(ctx)):
            if i % n == index:
                yield element


class OptionsDataset(DatasetDef):
    """``with_options``: sets the pipeline's default determinism for parallel stages and
    whether an outermost ``prefetch`` may use a worker process (``None``: not set)."""

    def __init__(self, name: str, source: DatasetDef, deterministic: bool | None,
                 worker_process: bool | None = None):
        self.name = name
        self.source = source
        self.deterministic = deterministic
        self.worker_process = worker_process

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        return self.source.iterate(ctx)


def pipeline_determinism(dataset: DatasetDef) -> bool:
    """The outermost ``with_options`` determinism setting (``True`` when none is set)."""
    seen = 0
    node: Any = dataset
    while node is not None and seen < 1000:
        if isinstance(node, OptionsDataset) and node.deterministic is not None:
            return node.deterministic
        node = getattr(node, "source", None)
        seen += 1
    return True


def outermost_stage(dataset: DatasetDef) -> tuple[DatasetDef, bool | None]:
    """The first stage below the ``with_options`` wrappers, and the outermost wrapper's
    ``worker_process`` setting (its options are merged from every inner one)."""
    setting: bool | None = None
    node = dataset
    while isinstance(node, OptionsDataset):
        if setting is None and node.worker_process is not None:
            setting = bool(node.worker_process)
        node = node.source
    return node, setting
