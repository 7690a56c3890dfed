"""Grouping stages: ``group_by_window`` and ``group_by_reducer``.

Both key each element with ``key_func`` (an int64 scalar). Groups still open when the input
ends are finished in the order their keys first appeared (TensorFlow's order there is
that of a hash map, unspecified).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.pipeline.base import DatasetDef, Element, Function
from flowmesh.kernels.pipeline.context import PipelineContext, PipelineStep
from flowmesh.kernels.pipeline.generated_sources import ListDataset
from flowmesh.kernels.pipeline.transforms import as_dataset


def _key(fn: Function, step: PipelineStep, element: Element, stage: str) -> int:
    (key,) = fn(step, element)
    if tuple(getattr(key, "shape", ())) != ():
        raise InvalidArgumentError(f"{stage}: key_func must return a scalar int64, got shape {list(key.shape)}")
    return int(key.item() if hasattr(key, "item") else key)


def _int64(value: int) -> torch.Tensor:
    return torch.tensor(value, dtype=torch.int64)


class GroupByWindowDataset(DatasetDef):
    """``group_by_window``: elements gathered per key into windows of
    ``window_size_func(key)`` elements; each full window (and, at the end, each partial one)
    goes to ``reduce_func(key, window_dataset)``, whose dataset's elements are yielded."""

    def __init__(self, name: str, source: DatasetDef, key_fn: Function, reduce_fn: Function,
                 window_size_fn: Function):
        self.name = name
        self.source = source
        self.key_fn, self.reduce_fn, self.window_size_fn = key_fn, reduce_fn, window_size_fn

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        stage = f"GroupByWindowDataset '{self.name}'"
        step = PipelineStep()
        groups: dict[int, list[Element]] = {}
        sizes: dict[int, int] = {}
        for element in self.source.iterate(ctx):
            key = _key(self.key_fn, step, element, stage)
            if key not in sizes:
                (size,) = self.window_size_fn(step, (_int64(key),))
                sizes[key] = int(size.item() if hasattr(size, "item") else size)
                if sizes[key] < 1:
                    raise InvalidArgumentError(f"{stage}: window_size_func returned {sizes[key]} for key {key}; "
                                               "it must be > 0")
            group = groups.setdefault(key, [])
            group.append(element)
            if len(group) == sizes[key]:
                del groups[key]
                yield from self._reduce(ctx, step, key, group, stage)
        for key, group in list(groups.items()):
            yield from self._reduce(ctx, step, key, group, stage)

    def _reduce(self, ctx: PipelineContext, step: PipelineStep, key: int, window: list[Element],
                stage: str) -> Iterator[Element]:
        nested = ListDataset(f"{self.name}/window", [c for element in window for c in element], len(window[0]))
        (out,) = self.reduce_fn(step, (_int64(key), nested))
        yield from as_dataset(out, stage).iterate(ctx)


class GroupByReducerDataset(DatasetDef):
    """``group_by_reducer``: per key, a state from ``init_fn(key)``, folded with
    ``reduce_fn(state, element)``; at the end ``finalize_fn(state)`` per key."""

    def __init__(self, name: str, source: DatasetDef, key_fn: Function, init_fn: Function,
                 reduce_fn: Function, finalize_fn: Function):
        self.name = name
        self.source = source
        self.key_fn, self.init_fn, self.reduce_fn, self.finalize_fn = key_fn, init_fn, reduce_fn, finalize_fn

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        stage = f"GroupByReducerDataset '{self.name}'"
        step = PipelineStep()
        states: dict[int, tuple[Any, ...]] = {}
        for element in self.source.iterate(ctx):
            key = _key(self.key_fn, step, element, stage)
            if key not in states:
                states[key] = tuple(self.init_fn(step, (_int64(key),)))
            states[key] = tuple(self.reduce_fn(step, (*states[key], *element)))
        for state in states.values():
            yield tuple(self.finalize_fn(step, state))

