"""``tf.data.experimental`` grouping: ``group_by_window``, ``group_by_reducer`` (with its
``Reducer``) and ``bucket_by_sequence_length``, as functions for ``Dataset.apply``. The
stages run in ``kernels/pipeline/grouping.py``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import control_dependencies
from flowmesh.core.shapes import TensorShape
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data import structure as st
from flowmesh.data.dataset import Dataset
from flowmesh.data.functions import TracedFunction, trace
from flowmesh.data.sources import make_dataset

Transform = Callable[[Dataset], Dataset]
_KEY = TensorSpec([], dtypes.int64)


def _scalar_int64(traced: TracedFunction, what: str) -> None:
    out = traced.output_spec
    if not isinstance(out, TensorSpec) or out.dtype != dtypes.int64 or out.shape.rank not in (None, 0):
        raise ValueError(f"`{what}` must return a single tf.int64 scalar tensor, got {out!r}")


def _key_function(key_func: Callable[..., Any], spec: Any) -> TracedFunction:
    traced = trace(key_func, spec, "key_func")
    _scalar_int64(traced, "key_func")
    return traced


def _grouped(op_type: str, dataset: Dataset, functions: dict[str, TracedFunction], spec: Any) -> Dataset:
    captured = [t for f in functions.values() for t in f.captured]
    attrs: dict[str, Any] = {name: f.graph for name, f in functions.items()}
    attrs["captures"] = [len(f.captured) for f in functions.values()]
    return make_dataset(op_type, [dataset._variant_tensor, *captured], spec, attrs, dataset.options())


def group_by_window(key_func: Callable[..., Any], reduce_func: Callable[..., Any], window_size: Any = None,
                    window_size_func: Callable[..., Any] | None = None) -> Transform:
    """Groups elements by ``key_func(element)`` (an int64 scalar) into windows of
    ``window_size`` (or ``window_size_func(key)``) elements; each window, as a dataset, goes
    to ``reduce_func(key, window)``, which returns a dataset whose elements are the output.

    Raises:
        ValueError: neither or both of ``window_size`` and ``window_size_func``; a key or
            window size function that does not return an int64 scalar.
        TypeError: ``reduce_func`` does not return a dataset.
    """
    if (window_size is None) == (window_size_func is None):
        raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be specified.")
    if window_size_func is None:
        def window_size_func(key: Any) -> Any:
            return convert_to_tensor(window_size, dtype=dtypes.int64)

    def apply(dataset: Dataset) -> Dataset:
        key = _key_function(key_func, dataset.element_spec)
        reduce = trace(reduce_func, (_KEY, st.DatasetSpec(dataset.element_spec)), "reduce_func")
        if not isinstance(reduce.output_spec, st.DatasetSpec):
            raise TypeError(f"`reduce_func` must return a tf.data.Dataset, got {reduce.output_spec!r}")
        size = trace(window_size_func, _KEY, "window_size_func")
        _scalar_int64(size, "window_size_func")
        functions = {"key_func": key, "reduce_func": reduce, "window_size_func": size}
        return _grouped("GroupByWindowDataset", dataset, functions, reduce.output_spec.element_spec)

    return apply


class Reducer:
    """What ``group_by_reducer`` does per key: ``init_func(key) -> state``,
    ``reduce_func(state, element) -> state``, ``finalize_func(state) -> output``."""

    def __init__(self, init_func: Callable[..., Any], reduce_func: Callable[..., Any],
                 finalize_func: Callable[..., Any]):
        self._init_func, self._reduce_func, self._finalize_func = init_func, reduce_func, finalize_func

    @property
    def init_func(self) -> Callable[..., Any]:
        return self._init_func

    @property
    def reduce_func(self) -> Callable[..., Any]:
        return self._reduce_func

    @property
    def finalize_func(self) -> Callable[..., Any]:
        return self._finalize_func


def _reducer_functions(reducer: Reducer, element_spec: Any) -> tuple[TracedFunction, TracedFunction]:
    init = trace(reducer.init_func, _KEY, "init_func")
    state = init.output_spec
    for _ in range(2):  # a state whose shape changes is relaxed once
        reduce = trace(reducer.reduce_func, (state, element_spec), "reduce_func")
        new = reduce.output_spec
        if not st.same_structure(state, new) or st.flat_types(state) != st.flat_types(new):
            raise TypeError(f"The element types for the new state must match the initial state. Expected "
                            f"{st.types_of(state)}; got {st.types_of(new)}.")
        relaxed = st.most_specific_compatible(state, new)
        if st.flat_shapes(relaxed) == st.flat_shapes(state):
            break
        state = relaxed
    return init, reduce


def group_by_reducer(key_func: Callable[..., Any], reducer: Reducer) -> Transform:
    """Groups elements by ``key_func(element)`` (an int64 scalar) and folds each group with
    ``reducer``; yields ``reducer.finalize_func(state)`` per key once the input ends (keys
    in order of first appearance).

    Raises:
        ValueError: ``key_func`` does not return an int64 scalar.
        TypeError: ``reduce_func`` changes the state's structure or dtypes.
    """
    def apply(dataset: Dataset) -> Dataset:
        key = _key_function(key_func, dataset.element_spec)
        init, reduce = _reducer_functions(reducer, dataset.element_spec)
        finalize = trace(reducer.finalize_func, reduce.output_spec, "finalize_func")
        functions = {"key_func": key, "init_func": init, "reduce_func": reduce, "finalize_func": finalize}
        return _grouped("GroupByReducerDataset", dataset, functions, finalize.output_spec)

    return apply


def bucket_by_sequence_length(element_length_func: Callable[..., Any], bucket_boundaries: Sequence[int],
                              bucket_batch_sizes: Sequence[int], padded_shapes: Any = None,
                              padding_values: Any = None, pad_to_bucket_boundary: bool = False,
                              no_padding: bool = False, drop_remainder: bool = False) -> Transform:
    """Batches elements of similar length together: an element of length ``n`` (from
    ``element_length_func``) goes to the bucket ``i`` with ``boundaries[i-1] <= n <
    boundaries[i]``, which is padded-batched by ``bucket_batch_sizes[i]`` (TensorFlow's
    construction on ``group_by_window``).

    Raises:
        ValueError: ``len(bucket_batch_sizes) != len(bucket_boundaries) + 1``.
    """
    if len(bucket_batch_sizes) != len(bucket_boundaries) + 1:
        raise ValueError(f"len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1 but "
                         f"len(bucket_batch_sizes)={len(bucket_batch_sizes)} and "
                         f"len(bucket_boundaries)={len(bucket_boundaries)}")
    from flowmesh.ops import array_ops, cast_ops, check_ops, math_ops, reduction_ops
    from flowmesh.ops.gather_ops import gather
    from flowmesh.ops.select_ops import where

    sizes = np.asarray(bucket_batch_sizes, dtype=np.int64)
    lows = [int(np.iinfo(np.int32).min)] + list(bucket_boundaries)
    highs = list(bucket_boundaries) + [int(np.iinfo(np.int32).max)]

    def bucket_id(*args: Any) -> Any:
        length = cast_ops.cast(element_length_func(*args), dtypes.int64)
        inside = math_ops.logical_and(math_ops.less_equal(np.asarray(lows, np.int64), length),
                                      math_ops.less(length, np.asarray(highs, np.int64)))
        return reduction_ops.reduce_min(where(inside))

    def window_size(key: Any) -> Any:
        return gather(convert_to_tensor(sizes), key)

    def batching(key: Any, window: Dataset) -> Dataset:
        size = window_size(key)
        if no_padding:
            return window.batch(size, drop_remainder=drop_remainder)
        filler = None
        if pad_to_bucket_boundary:
            check = check_ops.assert_less(key, np.int64(len(bucket_batch_sizes) - 1), message=(
                "When pad_to_bucket_boundary=True, elements must have length < max(bucket_boundaries)."))
            with control_dependencies([check]):
                filler = gather(convert_to_tensor(np.asarray(bucket_boundaries, np.int64)), key) - 1
        shapes = st.map_structure(lambda s: _padded(TensorShape(s), filler, array_ops),
                                  padded_shapes if padded_shapes is not None else window.output_shapes)
        return window.padded_batch(size, shapes, padding_values, drop_remainder=drop_remainder)

    return group_by_window(bucket_id, batching, window_size_func=window_size)


def _padded(shape: TensorShape, filler: Any, array_ops: Any) -> Any:
    """``shape`` with unknown dims set to ``filler`` (a tensor: the result is a shape tensor)."""
    if filler is None or shape.rank is None or all(d is not None for d in shape.as_list()):
        return shape
    dims = [filler if d is None else np.int64(d) for d in shape.as_list()]
    return array_ops.stack([convert_to_tensor(d, dtype=dtypes.int64) for d in dims])
