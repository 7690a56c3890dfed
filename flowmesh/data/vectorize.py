"""Map vectorization: ``map(f)`` runs over many elements at once before ``batch(n)``.

Parsing one Example per call costs a protobuf call and a program run per element; parsing
a block costs one of each per block. When ``batch`` follows one or more ``map`` stages,
separated at most by value-independent stages (``shuffle``, ``repeat``), and every op of
the map functions has a batch rule below, :func:`batched_map` builds an equivalent
pipeline of TensorFlow's own dataset ops:

- the *block route*, when the maps' results have static shapes:
  ``source.batch(BLOCK_ROWS).map(vectorized f).unbatch()``, then the passes, then
  ``batch(n)`` (fewer rows per block for large elements, see :func:`_block_rows`). The
  kernels keep the unbatched blocks whole (``DatasetDef.blocks``): the shuffle exchanges
  and batch cuts rows of arrays, so each element costs no Python call;
- otherwise ``batch(n)`` of the passes over the source, then the vectorized maps.

The elements are the same, in the same order (a shuffle's choices never depend on the
values). A map error, or a corrupted record read for the block, fails the whole block (or
batch) it is in. TensorFlow has the same rewrite (``map_vectorization``); here it is on by
default and off with
``options.experimental_optimization.map_vectorization = False``.

Batch rules: stateless ops whose inputs are all per-batch constants are copied; element-
wise unary ops; binary element-wise ops when broadcasting cannot mix the batch dimension
with an element dimension (known ranks); ``Reshape`` to a constant shape; ``OneHot`` on the
last axis; ``ParseExample`` of one record (dense features only) becomes the batch parse.
Anything else (random ops, sparse outputs, control dependencies) keeps the original order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.function import FuncGraph, building
from flowmesh.core.graph import Operation, Tensor, get_default_graph
from flowmesh.core.registry import get_op_def
from flowmesh.core.shapes import TensorShape
from flowmesh.data.dataset import Dataset
from flowmesh.ops._builders import constant_value, make_tensor

BLOCK_ROWS = 1024  # elements a vectorized map takes at once (the block route)...
BLOCK_BYTES = 4 << 20  # ... fewer if their results would take more memory than this...
MIN_BLOCK_ROWS = 64  # ... and the batch-first route when not even this many fit
PASS_THROUGH = frozenset({"ShuffleDataset", "RepeatDataset"})
MAPS = frozenset({"MapDataset", "ParallelMapDatasetV2"})
UNARY = frozenset({
    "Identity", "Cast", "Neg", "Abs", "Sqrt", "Rsqrt", "Exp", "Log", "Log1p", "Square", "Relu",
    "Relu6", "Sigmoid", "Tanh", "Floor", "Ceil", "Round", "Sign", "Reciprocal", "StopGradient",
    "LogicalNot", "IsNan", "IsFinite",
})
BINARY = frozenset({
    "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "Maximum", "Minimum", "Pow", "FloorDiv",
    "FloorMod", "TruncateDiv", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
    "GreaterEqual", "LogicalAnd", "LogicalOr", "SquaredDifference", "DivNoNan",
})
Mapped = tuple[Tensor, bool]  # (tensor in the vectorized graph, has a batch dimension)


def batched_map(dataset: Dataset, size: Tensor, drop: Tensor, spec: Any) -> Dataset | None:
    """The vectorized equivalent of ``dataset.batch(size, drop)``, or ``None``."""
    if dataset.options().experimental_optimization.map_vectorization is False:
        return None
    passes, maps = [], []
    op = dataset._variant_tensor.op
    while op.type in PASS_THROUGH:
        passes.append(op)
        op = op.inputs[0].op
    while op.type in MAPS:
        maps.append(op)
        op = op.inputs[0].op
    if not maps or any(m.graph is not get_default_graph() for m in maps):
        return None
    source = maps[-1].inputs[0]
    if "output_types" not in source.op.attrs:
        return None  # a dataset passed into a function (group_by_window's window): no element types here
    types = list(source.op.attrs["output_types"])
    shapes = [TensorShape(s) for s in source.op.attrs["output_shapes"]]
    if not all(s.is_fully_defined() for s in shapes):
        return None  # batching first could fail where the maps make shapes uniform
    vectorized = []
    for m in reversed(maps):
        graph = _vectorize(m.attrs["f"], types, shapes)
        if graph is None:
            return None
        vectorized.append((m, graph))
        types = [t.dtype for t in graph.outputs]
        shapes = [t.shape[1:] for t in graph.outputs]
    return _rebuild(dataset, source, passes, size, drop, vectorized, spec)


def _rebuild(dataset: Dataset, source: Tensor, passes: Sequence[Operation], size: Tensor,
             drop: Tensor, vectorized: Sequence[tuple[Operation, FuncGraph]], spec: Any) -> Dataset:
    mapped = vectorized[-1][1].outputs
    rows, dim = _block_rows(mapped), _known_batch(size, drop)
    if rows is not None:
        variant = _batch(source, _constant(rows), _constant(False), None)
        variant = _maps(variant, vectorized, None)
        element = _attrs([t.dtype for t in mapped], [t.shape[1:] for t in mapped])
        variant = make_tensor("UnbatchDataset", [variant], element, name="UnbatchDataset")
        variant = _batch(_passes(variant, passes, element), size, drop, dim)
    else:  # a block's rows might not stack with another's: batch the source, then map
        element = _attrs(source.op.attrs["output_types"], source.op.attrs["output_shapes"])
        variant = _maps(_batch(_passes(source, passes, element), size, drop, dim), vectorized, dim)
    return Dataset(variant, spec, dataset.options())


def _block_rows(mapped: Sequence[Tensor]) -> int | None:
    """Rows per block for the block route: ``BLOCK_ROWS``, fewer for large elements (a
    block's results stay near ``BLOCK_BYTES``); ``None`` when the results have no static
    shape, or are so large that blocks would hold fewer than ``MIN_BLOCK_ROWS``."""
    if not all(t.shape[1:].is_fully_defined() and t.dtype != dtypes.variant for t in mapped):
        return None
    size = sum(t.shape[1:].num_elements() * (8 if t.dtype == dtypes.string else t.dtype.size)
               for t in mapped)
    rows = min(BLOCK_ROWS, BLOCK_BYTES // max(size, 1))
    return rows if rows >= MIN_BLOCK_ROWS else None


def _attrs(types: Sequence[Any], shapes: Sequence[Any]) -> dict[str, Any]:
    return {"output_types": list(types), "output_shapes": [TensorShape(s) for s in shapes]}


def _constant(value: Any) -> Tensor:
    from flowmesh.core.convert import convert_to_tensor

    return convert_to_tensor(value, dtype=dtypes.bool if isinstance(value, bool) else dtypes.int64)


def _passes(variant: Tensor, passes: Sequence[Operation], element: dict[str, Any]) -> Tensor:
    for p in reversed(passes):
        variant = make_tensor(p.type, [variant, *p.inputs[1:]], {**p.attrs, **element},
                              name=p.type)
    return variant


def _batch(variant: Tensor, size: Tensor, drop: Tensor, dim: int | None) -> Tensor:
    attrs = variant.op.attrs
    batched = _attrs(attrs["output_types"], [TensorShape([dim]).concatenate(TensorShape(s))
                                             for s in attrs["output_shapes"]])
    return make_tensor("BatchDatasetV2", [variant, size, drop], batched, name="BatchDatasetV2")


def _maps(variant: Tensor, vectorized: Sequence[tuple[Operation, FuncGraph]],
          dim: int | None) -> Tensor:
    for original, graph in vectorized:
        extra = list(original.inputs[1:2]) if original.type == "ParallelMapDatasetV2" else []
        out = {**_attrs([t.dtype for t in graph.outputs],
                        [TensorShape([dim]).concatenate(t.shape[1:]) for t in graph.outputs]),
               "f": graph, "deterministic": original.attrs.get("deterministic")}
        variant = make_tensor(original.type, [variant, *extra, *graph.external_captures], out,
                              name=original.type)
    return variant


def _known_batch(size: Tensor, drop: Tensor) -> int | None:
    value, dropping = constant_value(size), constant_value(drop)
    return int(np.asarray(value)) if value is not None and dropping is not None and \
        bool(dropping) else None


def _vectorize(graph: FuncGraph, types: Sequence[dtypes.DType],
               shapes: Sequence[TensorShape]) -> FuncGraph | None:
    if any(op.control_inputs for op in graph.get_operations()) or graph.control_captures:
        return None
    new = FuncGraph(f"{graph.name}_vectorized", get_default_graph())
    mapping: dict[Tensor, Mapped] = {}
    with building(new):
        for placeholder, dtype, shape in zip(graph.inputs[:graph.num_args], types, shapes):
            mapping[placeholder] = (new.add_input(dtype, TensorShape([None]).concatenate(shape)),
                                    True)
        for placeholder in graph.captured_inputs:
            mapping[placeholder] = (new.capture(graph.external_of(placeholder)), False)
        inputs = set(graph.inputs)
        for op in graph.get_operations():
            if op.outputs and all(t in inputs for t in op.outputs):
                continue
            outs = _convert(op, [mapping[t] for t in op.inputs], new)
            if outs is None:
                return None
            mapping.update(zip(op.outputs, outs))
        results = [mapping[t] for t in graph.outputs if t is not None]
    if len(results) != len(graph.outputs) or not all(batched for _, batched in results):
        return None
    new.outputs = [t for t, _ in results]
    new.seal()
    return new


def _copy(op: Operation, inputs: Sequence[Tensor], new: FuncGraph,
          attrs: dict[str, Any] | None = None) -> list[Tensor]:
    created = new.create_op(op.type, list(inputs), attrs if attrs is not None else dict(op.attrs),
                            name=op.name)
    return list(created.outputs)


def _convert(op: Operation, inputs: Sequence[Mapped], new: FuncGraph) -> list[Mapped] | None:
    tensors = [t for t, _ in inputs]
    batched = [b for _, b in inputs]
    if get_op_def(op.type).stateful:
        return None
    if not any(batched):
        return [(t, False) for t in _copy(op, tensors, new)]
    if op.type in UNARY and len(inputs) == 1:
        return [(t, True) for t in _copy(op, tensors, new)]
    if op.type in BINARY and len(inputs) == 2 and _broadcast_safe(inputs):
        return [(t, True) for t in _copy(op, tensors, new)]
    if op.type == "Reshape" and batched == [True, False]:
        return _reshape(op, tensors, new)
    if op.type == "OneHot" and batched[0] and not any(batched[1:]) and op.attrs.get("axis", -1) == -1:
        return [(t, True) for t in _copy(op, tensors, new)]
    if op.type == "ParseExample" and op.attrs.get("single") and not op.attrs["sparse_keys"] \
            and not any(op.attrs["dense_sequence"]):  # padded sequences would batch unequal rows
        return [(t, True) for t in _copy(op, tensors, new, {**op.attrs, "single": False})]
    return None


def _broadcast_safe(inputs: Sequence[Mapped]) -> bool:
    (a, batched_a), (b, batched_b) = inputs
    rank_a = a.shape.rank - 1 if batched_a and a.shape.rank is not None else a.shape.rank
    rank_b = b.shape.rank - 1 if batched_b and b.shape.rank is not None else b.shape.rank
    if rank_a is None or rank_b is None:
        return False
    if batched_a and batched_b:
        return rank_a == rank_b
    return (rank_b <= rank_a) if batched_a else (rank_a <= rank_b)


def _reshape(op: Operation, tensors: Sequence[Tensor], new: FuncGraph) -> list[Mapped] | None:
    shape = constant_value(tensors[1])
    if shape is None or (np.asarray(shape) < 0).any():
        return None
    from flowmesh.core.convert import convert_to_tensor

    target = convert_to_tensor(np.concatenate([[-1], np.asarray(shape).reshape(-1)])
                               .astype(np.asarray(shape).dtype))
    return [(t, True) for t in _copy(op, [tensors[0], target], new)]

