"""Kernels of the dataset ops (``flowmesh/ops/dataset_ops.py``): each returns the stage's
definition (``kernels/pipeline/``); nothing runs until an iterator pulls elements.

Functions (``f``, ``predicate``) are compiled once per kernel into a ``FunctionProgram``
on the op's device with the session's kernels (as ``If``/``While`` do), and run in the
pipeline's threads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.shapes import TensorShape
from flowmesh.errors import InvalidArgumentError
from flowmesh.formats import filesystem as fs
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.function_program import FunctionProgram
from flowmesh.kernels.pipeline import (
    batching,
    cache,
    parallel,
    readers,
    shuffle,
    sources,
    transforms,
)
from flowmesh.kernels.pipeline.base import DatasetDef, ErrorDroppingFunction, Function

_CPU = ("CPU",)


def _int(value: Any) -> int:
    return int(value.item() if hasattr(value, "item") else value)


def _program(ctx: KernelContext, attr: str, label: str) -> FunctionProgram:
    graph = ctx.attr(attr)
    return FunctionProgram(ctx, graph, graph.outputs, label)


def _function_maker(ctx: KernelContext) -> Any:
    """What makes the stage's function: under ``ignore_errors`` (the op's attr) one that
    drops the elements it fails on."""
    if not ctx.attr("ignore_errors", False):
        return Function
    stage, log = f"{ctx.op.type} '{ctx.op.name}'", bool(ctx.attr("log_warning", False))
    return lambda program, captured: ErrorDroppingFunction(program, captured, stage, log)


def _dataset_kernel(op_type: str):
    return kernel(op_type, device_types=_CPU)


# --- sources --------------------------------------------------------------------------------
@_dataset_kernel("TensorDataset")
def _tensors(ctx: KernelContext):
    name = ctx.op.name
    return lambda *components: sources.TensorDataset(name, components)


@_dataset_kernel("TensorSliceDataset")
def _slices(ctx: KernelContext):
    name = ctx.op.name
    return lambda *components: sources.TensorSliceDataset(name, components)


@_dataset_kernel("RangeDataset")
def _range(ctx: KernelContext):
    name, dtype = ctx.op.name, ctx.attr("output_types")[0]
    return lambda start, stop, step: sources.RangeDataset(name, _int(start), _int(stop), _int(step),
                                                          dtype)


@_dataset_kernel("GeneratorDataset")
def _generator(ctx: KernelContext):
    name, gen, flatten = ctx.op.name, ctx.attr("generator"), ctx.attr("flatten")
    types, shapes = ctx.attr("output_types"), ctx.attr("output_shapes")
    return lambda *args: sources.GeneratorDataset(name, gen, args, types, shapes, flatten)


@_dataset_kernel("ZipDataset")
def _zip(ctx: KernelContext):
    name = ctx.op.name
    return lambda *inputs: sources.ZipDataset(name, inputs)


@_dataset_kernel("ConcatenateDataset")
def _concatenate(ctx: KernelContext):
    name = ctx.op.name
    return lambda first, second: sources.ConcatenateDataset(name, first, second)


# --- element-wise -----------------------------------------------------------------------------
@_dataset_kernel("MapDataset")
def _map(ctx: KernelContext):
    name, program, make = ctx.op.name, _program(ctx, "f", "the map function"), _function_maker(ctx)
    return lambda source, *captured: transforms.MapDataset(name, source, make(program, captured))


@_dataset_kernel("ParallelMapDatasetV2")
def _parallel_map(ctx: KernelContext):
    name, program = ctx.op.name, _program(ctx, "f", "the map function")
    deterministic, make_function = ctx.attr("deterministic"), _function_maker(ctx)

    def make(source: DatasetDef, parallelism: Any, *captured: Any) -> DatasetDef:
        return parallel.ParallelMapDataset(name, source, make_function(program, captured),
                                           _int(parallelism), deterministic)

    return make


@_dataset_kernel("FilterDataset")
def _filter(ctx: KernelContext):
    name, program = ctx.op.name, _program(ctx, "predicate", "the filter predicate")
    make = _function_maker(ctx)
    return lambda source, *captured: transforms.FilterDataset(name, source, make(program, captured))


@_dataset_kernel("FlatMapDataset")
def _flat_map(ctx: KernelContext):
    name, program = ctx.op.name, _program(ctx, "f", "the flat_map function")
    return lambda source, *captured: transforms.FlatMapDataset(name, source,
                                                               Function(program, captured))


def _interleave(ctx: KernelContext, parallel_calls: bool):
    name, program = ctx.op.name, _program(ctx, "f", "the interleave function")

    def make(source: DatasetDef, cycle_length: Any, block_length: Any, *rest: Any) -> DatasetDef:
        parallelism = _int(rest[0]) if parallel_calls else None
        captured = rest[1:] if parallel_calls else rest
        return parallel.InterleaveDataset(name, source, Function(program, captured),
                                          _int(cycle_length), _int(block_length), parallelism)

    return make


_dataset_kernel("InterleaveDataset")(lambda ctx: _interleave(ctx, False))
_dataset_kernel("ParallelInterleaveDatasetV4")(lambda ctx: _interleave(ctx, True))


# --- counting ----------------------------------------------------------------------------------
def _counting(op_type: str, cls: type) -> None:
    def factory(ctx: KernelContext):
        name = ctx.op.name
        return lambda source, count: cls(name, source, _int(count))

    _dataset_kernel(op_type)(factory)


_counting("TakeDataset", transforms.TakeDataset)
_counting("SkipDataset", transforms.SkipDataset)
_counting("RepeatDataset", transforms.RepeatDataset)


@_dataset_kernel("ShardDataset")
def _shard(ctx: KernelContext):
    name = ctx.op.name
    return lambda source, n, index: transforms.ShardDataset(name, source, _int(n), _int(index))


@_dataset_kernel("OptionsDataset")
def _options(ctx: KernelContext):
    name, deterministic = ctx.op.name, ctx.attr("deterministic")
    worker_process = ctx.attr("worker_process", None)
    return lambda source: transforms.OptionsDataset(name, source, deterministic, worker_process)


# --- batching, shuffling, buffering ---------------------------------------------------------------
@_dataset_kernel("BatchDatasetV2")
def _batch(ctx: KernelContext):
    name = ctx.op.name
    return lambda source, size, drop: batching.BatchDataset(name, source, _int(size), bool(drop))


@_dataset_kernel("PaddedBatchDatasetV2")
def _padded_batch(ctx: KernelContext):
    name, count = ctx.op.name, len(ctx.attr("output_types"))

    def make(source: DatasetDef, size: Any, *rest: Any) -> DatasetDef:
        shapes = [[_int(d) for d in s.reshape(-1)] if s.dim() else [] for s in rest[:count]]
        values, drop = rest[count:2 * count], rest[2 * count]
        return batching.PaddedBatchDataset(name, source, _int(size), shapes, values, bool(drop))

    return make


@_dataset_kernel("UnbatchDataset")
def _unbatch(ctx: KernelContext):
    name = ctx.op.name
    dense = _dense_elements(ctx)
    return lambda source: batching.UnbatchDataset(name, source, dense)


def _dense_elements(ctx: KernelContext) -> bool:
    """Whether every component is a tensor (no SparseTensor, no nested dataset) of one
    static shape: then blocks of elements can be kept as one array per component."""
    types = list(ctx.attr("output_types", []))
    shapes = [TensorShape(s) for s in ctx.attr("output_shapes", [])]
    return bool(types) and all(t != dtypes.variant for t in types) \
        and all(s.is_fully_defined() for s in shapes)


@_dataset_kernel("WindowDataset")
def _window(ctx: KernelContext):
    name = ctx.op.name
    return lambda source, size, shift, stride, drop: batching.WindowDataset(
        name, source, _int(size), _int(shift), _int(stride), bool(drop))


@_dataset_kernel("ShuffleDataset")
def _shuffle(ctx: KernelContext):
    name, reshuffle = ctx.op.name, bool(ctx.attr("reshuffle_each_iteration", True))
    return lambda source, size, seed, seed2: shuffle.ShuffleDataset(
        name, source, _int(size), _int(seed), _int(seed2), reshuffle)


@_dataset_kernel("PrefetchDataset")
def _prefetch(ctx: KernelContext):
    name, eligible = ctx.op.name, bool(ctx.attr("worker_process_eligible", False))
    setting = ctx.attr("worker_process", None)

    def make(source: DatasetDef, size: Any) -> DatasetDef:
        return parallel.PrefetchDataset(name, source, _int(size), eligible, setting)

    return make


@_dataset_kernel("CacheDataset")
def _cache(ctx: KernelContext):
    name = ctx.op.name

    def make(source: DatasetDef, filename: Any) -> DatasetDef:
        path = filename[()] if hasattr(filename, "shape") else filename
        return cache.CacheDataset(name, source, path.decode() if isinstance(path, bytes) else str(path))

    return make


# --- files ---------------------------------------------------------------------------------------
def _text(value: Any) -> str:
    item = value[()] if isinstance(value, np.ndarray) else value
    return item.decode() if isinstance(item, bytes) else str(item)


@_dataset_kernel("TFRecordDataset")
def _tfrecord(ctx: KernelContext):
    name = ctx.op.name

    def make(filenames: Any, compression: Any, buffer_size: Any) -> DatasetDef:
        files = readers.file_names(filenames, f"TFRecordDataset '{name}'")
        return readers.TFRecordDataset(name, files, _text(compression), _int(buffer_size))

    return make


@_dataset_kernel("TextLineDataset")
def _text_lines(ctx: KernelContext):
    name = ctx.op.name

    def make(filenames: Any, compression: Any, buffer_size: Any) -> DatasetDef:
        files = readers.file_names(filenames, f"TextLineDataset '{name}'")
        return readers.TextLineDataset(name, files, _text(compression), _int(buffer_size))

    return make


@_dataset_kernel("FixedLengthRecordDataset")
def _fixed_length(ctx: KernelContext):
    name = ctx.op.name

    def make(filenames: Any, header: Any, record: Any, footer: Any, buffer_size: Any,
             compression: Any) -> DatasetDef:
        files = readers.file_names(filenames, f"FixedLengthRecordDataset '{name}'")
        return readers.FixedLengthRecordDataset(name, files, _int(header), _int(record),
                                                _int(footer), _int(buffer_size), _text(compression))

    return make


@kernel("MatchingFiles", device_types=_CPU)
def _matching_files(ctx: KernelContext):
    def match(patterns: Any) -> Any:
        found: list[bytes] = []
        for pattern in np.asarray(patterns, dtype=object).reshape(-1):
            text = pattern.decode() if isinstance(pattern, bytes) else str(pattern)
            matches = sorted(fs.glob(text))
            if not matches:
                raise InvalidArgumentError(f"No files matched pattern: {text}")
            found.extend(m.encode() for m in matches)
        out = np.empty(len(found), dtype=object)
        out[:] = found
        return out

    return match
