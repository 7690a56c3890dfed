"""Kernels of the ``tf.data.experimental`` dataset ops (``ops/dataset_ops.py``): scan,
take_while, unique, group_by_window, group_by_reducer, choose_from_datasets, assert_cardinality
and the sources from_list, RandomDataset, SqlDataset. Each returns its stage's definition
(``kernels/pipeline/``), as the kernels of ``kernels/dataset_ops.py`` do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.function_program import FunctionProgram
from flowmesh.kernels.pipeline import generated_sources, grouping, selection, stateful_transforms
from flowmesh.kernels.pipeline.base import DatasetDef, Function

_CPU = ("CPU",)


def _int(value: Any) -> int:
    return int(value.item() if hasattr(value, "item") else value)


def _text(value: Any) -> str:
    item = value[()] if hasattr(value, "shape") else value
    return item.decode() if isinstance(item, bytes) else str(item)


def _program(ctx: KernelContext, attr: str, label: str) -> FunctionProgram:
    graph = ctx.attr(attr)
    return FunctionProgram(ctx, graph, graph.outputs, label)


def _split(values: Sequence[Any], counts: Sequence[int]) -> list[list[Any]]:
    out, start = [], 0
    for count in counts:
        out.append(list(values[start:start + count]))
        start += count
    return out


@kernel("ScanDataset", device_types=_CPU)
def _scan(ctx: KernelContext):
    name, program, width = ctx.op.name, _program(ctx, "f", "the scan function"), int(ctx.attr("Nstate"))

    def make(source: DatasetDef, *rest: Any) -> DatasetDef:
        return stateful_transforms.ScanDataset(name, source, rest[:width], Function(program, rest[width:]))

    return make


@kernel("TakeWhileDataset", device_types=_CPU)
def _take_while(ctx: KernelContext):
    name, program = ctx.op.name, _program(ctx, "predicate", "the take_while predicate")
    return lambda source, *captured: stateful_transforms.TakeWhileDataset(name, source, Function(program, captured))


@kernel("UniqueDataset", device_types=_CPU)
def _unique(ctx: KernelContext):
    name = ctx.op.name
    return lambda source: stateful_transforms.UniqueDataset(name, source)


@kernel("AssertCardinalityDataset", device_types=_CPU)
def _assert_cardinality(ctx: KernelContext):
    name = ctx.op.name
    return lambda source, count: stateful_transforms.AssertCardinalityDataset(name, source, _int(count))


def _functions(ctx: KernelContext, names: Sequence[str]) -> tuple[list[FunctionProgram], list[int]]:
    programs = [_program(ctx, n, f"the {n}") for n in names]
    return programs, [int(c) for c in ctx.attr("captures")]


@kernel("GroupByWindowDataset", device_types=_CPU)
def _group_by_window(ctx: KernelContext):
    name = ctx.op.name
    programs, counts = _functions(ctx, ("key_func", "reduce_func", "window_size_func"))

    def make(source: DatasetDef, *captured: Any) -> DatasetDef:
        key, reduce, size = (Function(p, c) for p, c in zip(programs, _split(captured, counts)))
        return grouping.GroupByWindowDataset(name, source, key, reduce, size)

    return make


@kernel("GroupByReducerDataset", device_types=_CPU)
def _group_by_reducer(ctx: KernelContext):
    name = ctx.op.name
    programs, counts = _functions(ctx, ("key_func", "init_func", "reduce_func", "finalize_func"))

    def make(source: DatasetDef, *captured: Any) -> DatasetDef:
        key, init, reduce, finalize = (Function(p, c) for p, c in zip(programs, _split(captured, counts)))
        return grouping.GroupByReducerDataset(name, source, key, init, reduce, finalize)

    return make


@kernel("DirectedInterleaveDataset", device_types=_CPU)
def _directed_interleave(ctx: KernelContext):
    name, stop = ctx.op.name, bool(ctx.attr("stop_on_empty_dataset", True))
    return lambda selector, *inputs: selection.DirectedInterleaveDataset(name, selector, inputs, stop)


@kernel("ListDataset", device_types=_CPU)
def _list(ctx: KernelContext):
    name, width = ctx.op.name, len(ctx.attr("output_types"))
    return lambda *components: generated_sources.ListDataset(name, components, width)


@kernel("RandomDataset", device_types=_CPU)
def _random(ctx: KernelContext):
    name, rerandomize = ctx.op.name, bool(ctx.attr("rerandomize_each_iteration", False))
    return lambda seed, seed2: generated_sources.RandomDataset(name, _int(seed), _int(seed2), rerandomize)


@kernel("SqlDataset", device_types=_CPU)
def _sql(ctx: KernelContext):
    name, types = ctx.op.name, ctx.attr("output_types")
    return lambda driver, source, query: generated_sources.SqlDataset(name, _text(driver), _text(source),
                                                                      _text(query), types)
