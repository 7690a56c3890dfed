"""Kernels of the ops that run a whole dataset inside one step (``ops/dataset_ops.py``):
``DatasetCardinality``, ``DatasetToSingleElement`` (``get_single_element``),
``DatasetToTFRecord`` (``tf.data.experimental.TFRecordWriter``) and
``InitializeTableFromDataset`` (``DatasetInitializer``). Each runs the pipeline on a
context of its own, cancelled when the kernel returns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.formats.tfrecord import RecordWriter, check_compression
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.lookup_ops import python_values, table_of
from flowmesh.kernels.pipeline.base import DatasetDef, Element, as_value
from flowmesh.kernels.pipeline.cardinality import cardinality
from flowmesh.kernels.pipeline.context import PipelineContext
from flowmesh.kernels.pipeline.transforms import pipeline_determinism

_CPU = ("CPU",)


def elements(dataset: Any, stage: str) -> Iterator[Element]:
    """Every element of one pass over ``dataset``.

    Raises:
        InvalidArgumentError: ``dataset`` is not a dataset.
    """
    if not isinstance(dataset, DatasetDef):
        raise InvalidArgumentError(f"{stage} needs a dataset, got {type(dataset).__name__}")
    ctx = PipelineContext(pipeline_determinism(dataset), stage)
    source = dataset.iterate(ctx)
    try:
        yield from source
    finally:
        ctx.cancel()
        source.close()


def _text(value: Any) -> str:
    item = value[()] if hasattr(value, "shape") else value
    return item.decode() if isinstance(item, bytes) else str(item)


@kernel("DatasetCardinality", device_types=_CPU)
def _cardinality(ctx: KernelContext):
    return lambda dataset: torch.tensor(cardinality(dataset), dtype=torch.int64)


@kernel("DatasetToSingleElement", device_types=_CPU)
def _single_element(ctx: KernelContext):
    stage = f"DatasetToSingleElement '{ctx.op.name}'"

    def single(dataset: Any) -> Any:
        found = elements(dataset, stage)
        first = next(found, None)
        if first is None:
            raise InvalidArgumentError(f"Dataset was empty. ({stage}; get_single_element needs exactly one "
                                       "element: use take(1) or batch the dataset)")
        if next(found, None) is not None:
            found.close()
            raise InvalidArgumentError(f"Dataset had more than one element. ({stage}; use take(1) or batch "
                                       "the dataset into one element)")
        values = tuple(as_value(v) for v in first)
        return values[0] if len(values) == 1 else values

    return single


@kernel("DatasetToTFRecord", device_types=_CPU)
def _to_tfrecord(ctx: KernelContext):
    stage = f"DatasetToTFRecord '{ctx.op.name}'"

    def write(dataset: Any, filename: Any, compression: Any) -> None:
        writer = RecordWriter(_text(filename), check_compression(_text(compression)))
        try:
            for (record,) in elements(dataset, stage):
                item = record[()] if hasattr(record, "shape") else record
                writer.write(item if isinstance(item, bytes) else str(item).encode())
        finally:
            writer.close()

    return write


@kernel("InitializeTableFromDataset", device_types=_CPU)
def _table_from_dataset(ctx: KernelContext):
    stage = f"InitializeTableFromDataset '{ctx.op.name}'"

    def fill(handle: Any, dataset: Any) -> None:
        table = table_of(handle, "InitializeTableFromDataset")
        entries: dict[Any, Any] = {}
        for key, value in elements(dataset, stage):
            (k,), (v,) = python_values(key), python_values(value)
            entries[k] = v
        table.fill(entries)

    return fill
