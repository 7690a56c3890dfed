"""Source stages: tensors, tensor slices, ranges, Python generators; zip and concatenate."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError, OpError
from flowmesh.kernels.contract.convert import to_numpy, to_torch
from flowmesh.kernels.pipeline.base import DatasetDef, Element, slices_count
from flowmesh.kernels.pipeline.context import PipelineContext


def component_slice(value: Any, i: int) -> Any:
    """Row ``i`` of a component (0-d object arrays for string scalars)."""
    row = value[i]
    if isinstance(value, np.ndarray) and not isinstance(row, np.ndarray):
        out = np.empty((), dtype=object)
        out[()] = row
        return out
    return row


class TensorDataset(DatasetDef):
    """``from_tensors``: one element, the components themselves."""

    def __init__(self, name: str, components: Sequence[Any]):
        self.name = name
        self.components = tuple(components)

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        yield self.components


class TensorSliceDataset(DatasetDef):
    """``from_tensor_slices``: element ``i`` is row ``i`` of every component."""

    def __init__(self, name: str, components: Sequence[Any]):
        self.name = name
        self.components = tuple(components)
        self.count = slices_count(self.components, f"TensorSliceDataset '{name}'")

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        comps = self.components
        if len(comps) == 1:
            (only,) = comps
            for i in range(self.count):
                yield (component_slice(only, i),)
            return
        for i in range(self.count):
            yield tuple(component_slice(c, i) for c in comps)


class RangeDataset(DatasetDef):
    """``range(start, stop, step)`` as scalars of ``dtype``."""

    def __init__(self, name: str, start: int, stop: int, step: int, dtype: dtypes.DType):
        if step == 0:
            raise InvalidArgumentError(f"RangeDataset '{name}': step must not be 0")
        self.name = name
        self.bounds = (start, stop, step)
        self.torch_dtype = to_torch(np.zeros(()), dtype).dtype

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        dtype = self.torch_dtype
        for i in range(*self.bounds):
            yield (torch.tensor(i, dtype=dtype),)


class GeneratorDataset(DatasetDef):
    """``from_generator``: calls ``generator(*args)`` once per pass and converts what it
    yields to the declared dtypes and shapes.

    Args:
        flatten: maps one yielded value to its list of components (the declared structure).
    """

    def __init__(self, name: str, generator: Callable[..., Any], args: Sequence[Any],
                 out_types: Sequence[dtypes.DType], out_shapes: Sequence[Any],
                 flatten: Callable[[Any], list[Any]]):
        self.name = name
        self.generator = generator
        self.args = [to_numpy(a) for a in args]
        self.out_types = list(out_types)
        self.out_shapes = list(out_shapes)
        self.flatten = flatten

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        try:
            source = iter(self.generator(*self.args))
        except Exception as exc:  # noqa: BLE001 - user code, reported with its traceback
            raise self._error(exc, "calling the generator") from exc
        while True:
            try:
                value = next(source)
            except StopIteration:
                return
            except Exception as exc:  # noqa: BLE001 - user code
                raise self._error(exc, "running the generator") from exc
            yield self._convert(value)

    def _convert(self, value: Any) -> Element:
        try:
            flat = self.flatten(value)
        except (TypeError, ValueError) as exc:
            raise InvalidArgumentError(
                f"from_generator '{self.name}': the generator yielded {value!r}, which does not "
                f"match the declared output_types ({exc})") from None
        out = []
        for i, (item, dtype, shape) in enumerate(zip(flat, self.out_types, self.out_shapes)):
            array = np.asarray(item, dtype=object if dtype == dtypes.string else dtype.as_numpy_dtype)
            if dtype == dtypes.string:
                array = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s,
                                     otypes=[object])(array) if array.size else array
            if shape is not None and not shape.is_compatible_with(array.shape):
                raise InvalidArgumentError(
                    f"from_generator '{self.name}': component {i} of a yielded element has "
                    f"shape {list(array.shape)}, which is incompatible with the declared "
                    f"output_shapes {shape}")
            out.append(to_torch(array if dtype == dtypes.string else np.array(array, order="C"),
                                dtype))
        return tuple(out)

    def _error(self, exc: Exception, what: str) -> OpError:
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
        return InvalidArgumentError(
            f"{type(exc).__name__}: {exc} (raised while {what} of from_generator "
            f"'{self.name}')\n{trace}")


class ZipDataset(DatasetDef):
    """``zip``: the components of each input's next element, concatenated; ends with the
    shortest input."""

    def __init__(self, name: str, inputs: Sequence[DatasetDef]):
        self.name = name
        self.inputs = list(inputs)

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        sources = [d.iterate(ctx) for d in self.inputs]
        try:
            while True:
                element: tuple = ()
                for source in sources:
                    try:
                        element += next(source)
                    except StopIteration:
                        return
                yield element
        finally:
            for source in sources:
                source.close()


class ConcatenateDataset(DatasetDef):
    """``concatenate``: every element of the first input, then of the second."""

    def __init__(self, name: str, first: DatasetDef, second: DatasetDef):
        self.name = name
        self.parts = (first, second)

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        for part in self.parts:
            yield from part.iterate(ctx)
