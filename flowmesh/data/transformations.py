"""Dataset transformations: the op each method of :class:`Dataset` builds, and the element
spec it produces (static shapes as precise as TensorFlow's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data import structure as st
from flowmesh.data.dataset import AUTOTUNE, Dataset
from flowmesh.data.debug_mode import debug_mode_enabled
from flowmesh.data.functions import trace
from flowmesh.data.options import Options
from flowmesh.data.sources import make_dataset
from flowmesh.ops._builders import constant_value


def _int64(value: Any) -> Any:
    return convert_to_tensor(value, dtype=dtypes.int64)


def _known(tensor: Any) -> int | None:
    value = constant_value(tensor)
    return None if value is None else int(np.asarray(value))


def _derived(op_type: str, dataset: Dataset, inputs: list, spec: Any,
             attrs: dict[str, Any] | None = None) -> Dataset:
    return make_dataset(op_type, [dataset._variant_tensor, *inputs], spec, attrs, dataset.options())


# --- functions ---------------------------------------------------------------------------------
def map_dataset(dataset: Dataset, fn: Callable[..., Any], num_parallel_calls: int | None,
                deterministic: bool | None) -> Dataset:
    traced = trace(fn, dataset.element_spec, "map_fn")
    attrs = {"f": traced.graph, "deterministic": deterministic}
    if num_parallel_calls is None or debug_mode_enabled():
        return _derived("MapDataset", dataset, traced.captured, traced.output_spec, attrs)
    parallel = _int64(num_parallel_calls)
    return _derived("ParallelMapDatasetV2", dataset, [parallel, *traced.captured],
                    traced.output_spec, attrs)


def filter_dataset(dataset: Dataset, predicate: Callable[..., Any]) -> Dataset:
    traced = trace(predicate, dataset.element_spec, "filter_predicate")
    out = traced.output_spec
    if not isinstance(out, TensorSpec) or out.dtype != dtypes.bool or \
            out.shape.rank not in (None, 0):
        raise ValueError(f"`predicate` return type must be a scalar bool tensor, got {out!r}")
    return _derived("FilterDataset", dataset, traced.captured, dataset.element_spec,
                    {"predicate": traced.graph})


def _dataset_fn_spec(traced: Any, what: str) -> Any:
    out = traced.output_spec
    if not isinstance(out, st.DatasetSpec):
        raise TypeError(f"`map_func` of {what} must return a Dataset object, got {out!r}")
    return out.element_spec


def flat_map(dataset: Dataset, fn: Callable[..., Any]) -> Dataset:
    traced = trace(fn, dataset.element_spec, "flat_map_fn")
    spec = _dataset_fn_spec(traced, "flat_map")
    return _derived("FlatMapDataset", dataset, traced.captured, spec, {"f": traced.graph})


def interleave(dataset: Dataset, fn: Callable[..., Any], cycle_length: int | None,
               block_length: int | None, num_parallel_calls: int | None) -> Dataset:
    traced = trace(fn, dataset.element_spec, "interleave_fn")
    spec = _dataset_fn_spec(traced, "interleave")
    cycle = _int64(AUTOTUNE if cycle_length is None else cycle_length)
    block = _int64(1 if block_length is None else block_length)
    attrs = {"f": traced.graph}
    if num_parallel_calls is None or debug_mode_enabled():
        return _derived("InterleaveDataset", dataset, [cycle, block, *traced.captured], spec, attrs)
    parallel = _int64(num_parallel_calls)
    return _derived("ParallelInterleaveDatasetV4", dataset,
                    [cycle, block, parallel, *traced.captured], spec, attrs)


# --- batching ----------------------------------------------------------------------------------
def _batch_dim(size: Any, drop_remainder: Any) -> int | None:
    drop = constant_value(drop_remainder)
    return _known(size) if drop is not None and bool(drop) else None


def batch(dataset: Dataset, batch_size: Any, drop_remainder: Any) -> Dataset:
    size, drop = _int64(batch_size), convert_to_tensor(drop_remainder, dtype=dtypes.bool)
    dim = _batch_dim(size, drop)
    spec = st.map_structure(lambda s: st.with_shape(s, TensorShape([dim]).concatenate(s.shape)),
                            dataset.element_spec)
    from flowmesh.data.vectorize import batched_map

    vectorized = batched_map(dataset, size, drop, spec)
    if vectorized is not None:
        return vectorized
    return _derived("BatchDatasetV2", dataset, [size, drop], spec)


def _default_padding(dtype: dtypes.DType) -> Any:
    return b"" if dtype == dtypes.string else np.zeros((), dtype=dtype.as_numpy_dtype)


def padded_batch(dataset: Dataset, batch_size: Any, padded_shapes: Any, padding_values: Any,
                 drop_remainder: Any) -> Dataset:
    specs = st.flatten(dataset.element_spec)
    if any(st.is_sparse(s) for s in specs):
        raise TypeError("padded_batch does not take SparseTensor components (as in TensorFlow); use "
                        "batch, which batches them into a SparseTensor of the largest extent")
    if padded_shapes is None:
        shapes = [s.shape for s in specs]
        if any(s.rank is None for s in shapes):
            raise ValueError("padded_batch needs padded_shapes when a component's rank is unknown")
    else:
        shapes = _flatten_up_to(dataset.element_spec, padded_shapes)
    shape_tensors = [_padded_shape_tensor(s) for s in shapes]
    shapes = [_padded_static_shape(s) for s in shapes]
    values = [_default_padding(s.dtype) for s in specs] if padding_values is None else \
        _flatten_up_to(dataset.element_spec, padding_values)
    value_tensors = [convert_to_tensor(v, dtype=s.dtype) for v, s in zip(values, specs)]
    size, drop = _int64(batch_size), convert_to_tensor(drop_remainder, dtype=dtypes.bool)
    dim = _batch_dim(size, drop)
    out = st.pack(dataset.element_spec, [TensorSpec(TensorShape([dim]).concatenate(s), sp.dtype)
                                         for s, sp in zip(shapes, specs)])
    return _derived("PaddedBatchDatasetV2", dataset, [size, *shape_tensors, *value_tensors, drop],
                    out)


def _padded_shape_tensor(shape: Any) -> Any:
    """A padded shape as an int64 vector (-1: pad to the longest); a tensor is one already."""
    from flowmesh.core.graph import Tensor

    if isinstance(shape, Tensor):
        return shape if shape.dtype == dtypes.int64 else convert_to_tensor(shape, dtype=dtypes.int64)
    shape = as_shape(shape)
    return _int64([-1 if d is None else d for d in shape.as_list()] if shape.rank else np.zeros([0], np.int64))


def _padded_static_shape(shape: Any) -> TensorShape:
    """The static shape a padded shape gives (a shape tensor's values are known at run time)."""
    from flowmesh.core.graph import Tensor

    if not isinstance(shape, Tensor):
        return as_shape(shape)
    value = constant_value(shape)
    if value is not None:
        return TensorShape([None if d < 0 else int(d) for d in np.asarray(value).reshape(-1)])
    size = shape.shape[0] if shape.shape.rank == 1 else None
    return unknown_shape() if size is None else TensorShape([None] * size)


def _flatten_up_to(structure: Any, values: Any) -> list[Any]:
    if not st.is_nested(structure):
        return [values]
    if not st.same_structure(structure, values) and not (
            isinstance(structure, tuple) and isinstance(values, (tuple, list))
            and len(values) == len(structure)):
        raise ValueError(f"padded_shapes/padding_values {values!r} must have the structure of the "
                         f"element {structure!r}")
    if isinstance(structure, dict):
        return [x for k in sorted(structure) for x in _flatten_up_to(structure[k], values[k])]
    return [x for s, v in zip(structure, values) for x in _flatten_up_to(s, v)]


def unbatch(dataset: Dataset) -> Dataset:
    def row(spec: TensorSpec) -> TensorSpec:
        if spec.shape.rank == 0:
            raise ValueError("Cannot unbatch an input with scalar components.")
        return st.with_shape(spec, spec.shape[1:] if spec.shape.rank is not None else unknown_shape())

    return _derived("UnbatchDataset", dataset, [], st.map_structure(row, dataset.element_spec))


def window(dataset: Dataset, size: Any, shift: Any, stride: Any, drop_remainder: Any) -> Dataset:
    size_t = _int64(size)
    inputs = [size_t, size_t if shift is None else _int64(shift), _int64(stride),
              convert_to_tensor(drop_remainder, dtype=dtypes.bool)]
    spec = st.map_structure(st.DatasetSpec, dataset.element_spec)
    return _derived("WindowDataset", dataset, inputs, spec)


# --- others ------------------------------------------------------------------------------------
def shuffle(dataset: Dataset, buffer_size: Any, seed: int | None,
            reshuffle_each_iteration: bool | None) -> Dataset:
    from flowmesh.ops.random_ops import get_seed

    seed1, seed2 = get_seed(seed)
    inputs = [_int64(buffer_size), _int64(seed1 or 0), _int64(seed2 or 0)]
    reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
    return _derived("ShuffleDataset", dataset, inputs, dataset.element_spec,
                    {"reshuffle_each_iteration": reshuffle})


def counting(op_type: str, dataset: Dataset, count: Any, what: str) -> Dataset:
    return _derived(op_type, dataset, [_int64(count)], dataset.element_spec)


def prefetch(dataset: Dataset, buffer_size: Any) -> Dataset:
    if debug_mode_enabled():  # no asynchrony in debug mode (TensorFlow's rule)
        return dataset
    from flowmesh.data.worker_eligibility import worker_process_eligible

    holds_datasets = any(isinstance(s, st.DatasetSpec) for s in st.flatten(dataset.element_spec))
    eligible = worker_process_eligible(dataset._variant_tensor, holds_datasets)
    return _derived("PrefetchDataset", dataset, [_int64(buffer_size)], dataset.element_spec,
                    {"worker_process_eligible": eligible,
                     "worker_process": dataset.options().experimental_worker_process})


def shard(dataset: Dataset, num_shards: Any, index: Any) -> Dataset:
    n, i = _int64(num_shards), _int64(index)
    known_n, known_i = _known(n), _known(i)
    if known_n == known_i == -1:  # SHARD_HINT: auto_shard's HINT policy fills them in
        return _derived("ShardDataset", dataset, [n, i], dataset.element_spec)
    if known_n is not None and known_n < 1:
        raise ValueError(f"num_shards must be >= 1, got {known_n}")
    if known_n is not None and known_i is not None and not 0 <= known_i < known_n:
        raise ValueError(f"index must be in [0, num_shards={known_n}), got {known_i}")
    return _derived("ShardDataset", dataset, [n, i], dataset.element_spec)


def cache(dataset: Dataset, filename: str) -> Dataset:
    name = convert_to_tensor(filename, dtype=dtypes.string)
    return _derived("CacheDataset", dataset, [name], dataset.element_spec)


def concatenate(dataset: Dataset, other: Dataset) -> Dataset:
    a, b = dataset.element_spec, other.element_spec
    if not st.same_structure(a, b) or st.flat_types(a) != st.flat_types(b):
        raise TypeError(f"Two datasets to concatenate have different types {dataset.output_types} "
                        f"and {other.output_types}")
    spec = st.most_specific_compatible(a, b)
    return _derived("ConcatenateDataset", dataset, [other._variant_tensor], spec)


def with_options(dataset: Dataset, options: Options) -> Dataset:
    merged = dataset.options().merge(options)
    out = _derived("OptionsDataset", dataset, [], dataset.element_spec,
                   {"deterministic": merged.determinism(),
                    "worker_process": merged.experimental_worker_process})
    out._options = merged
    return out
