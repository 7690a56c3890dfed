"""Stages that keep state across elements: ``scan``, ``take_while``, ``unique`` and
``assert_cardinality``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

from flowmesh.errors import FailedPreconditionError, InvalidArgumentError
from flowmesh.kernels.pipeline.base import DatasetDef, Element, Function
from flowmesh.kernels.pipeline.context import PipelineContext, PipelineStep


class ScanDataset(DatasetDef):
    """``scan``: ``fn(state, element) -> (new_state, output)``; yields the outputs."""

    def __init__(self, name: str, source: DatasetDef, initial_state: Sequence[Any], fn: Function):
        self.name = name
        self.source = source
        self.initial_state = tuple(initial_state)
        self.fn = fn

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        state, step, width = self.initial_state, PipelineStep(), len(self.initial_state)
        for element in self.source.iterate(ctx):
            out = self.fn(step, (*state, *element))
            state = tuple(out[:width])
            yield tuple(out[width:])


class TakeWhileDataset(DatasetDef):
    """``take_while``: the elements until the predicate first returns ``False``."""

    def __init__(self, name: str, source: DatasetDef, predicate: Function):
        self.name = name
        self.source = source
        self.predicate = predicate

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        step = PipelineStep()
        source = self.source.iterate(ctx)
        try:
            for element in source:
                (keep,) = self.predicate(step, element)
                if tuple(getattr(keep, "shape", ())) != ():
                    raise InvalidArgumentError(f"TakeWhileDataset '{self.name}': the predicate must return a "
                                               f"scalar bool, got shape {list(keep.shape)}")
                if not bool(keep):
                    return
                yield element
        finally:
            source.close()


def _hashable(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.item()
    if isinstance(value, np.ndarray):
        return value[()]
    return value


class UniqueDataset(DatasetDef):
    """``unique``: each distinct element once, at its first occurrence (one scalar
    component: integers or strings, as TensorFlow allows)."""

    def __init__(self, name: str, source: DatasetDef):
        self.name = name
        self.source = source

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        seen: set[Any] = set()
        for element in self.source.iterate(ctx):
            key = _hashable(element[0])
            if key not in seen:
                seen.add(key)
                yield element


class AssertCardinalityDataset(DatasetDef):
    """``assert_cardinality``: the input's elements; an error if there are more or fewer
    than ``cardinality`` (-1: infinite)."""

    def __init__(self, name: str, source: DatasetDef, cardinality: int):
        self.name = name
        self.source = source
        self.cardinality = cardinality

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        count, expected = 0, self.cardinality
        for element in self.source.iterate(ctx):
            count += 1
            if 0 <= expected < count:
                raise FailedPreconditionError(
                    f"Input dataset was expected to contain {self._elements(expected)} but contained at least "
                    f"{self._elements(count)} (AssertCardinalityDataset '{self.name}')")
            yield element
        if count != expected:
            want = "an infinite number of elements" if expected < 0 else self._elements(expected)
            raise FailedPreconditionError(
                f"Input dataset was expected to contain {want} but contained only {self._elements(count)} "
                f"(AssertCardinalityDataset '{self.name}')")

    @staticmethod
    def _elements(n: int) -> str:
        return f"{n} element" if n == 1 else f"{n} elements"
