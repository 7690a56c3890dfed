"""``tf.data.experimental`` transformations that keep state across elements: ``scan``,
``take_while``, ``unique``, plus ``cardinality`` / ``assert_cardinality``. Each
transformation returns a function of a dataset, for ``Dataset.apply``; the stages run in
``kernels/pipeline/stateful_transforms.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.type_spec import TensorSpec
from flowmesh.data import structure as st
from flowmesh.data.dataset import Dataset
from flowmesh.data.functions import trace
from flowmesh.data.sources import make_dataset
from flowmesh.ops._builders import make_tensor

Transform = Callable[[Dataset], Dataset]


def _derived(op_type: str, dataset: Dataset, inputs: list, spec: Any, attrs: dict[str, Any] | None = None) -> Dataset:
    return make_dataset(op_type, [dataset._variant_tensor, *inputs], spec, attrs, dataset.options())


def _state_tensors(initial_state: Any) -> Any:
    return st.map_structure(lambda v: v if isinstance(v, Tensor) else convert_to_tensor(v), initial_state)


def _scan_dataset(dataset: Dataset, initial_state: Any, scan_func: Callable[..., Any]) -> Dataset:
    state = _state_tensors(initial_state)
    state_spec = st.map_structure(lambda t: TensorSpec(t.shape, t.dtype), state)
    for _ in range(2):  # a state whose shape changes is relaxed once, as TensorFlow does
        traced = trace(scan_func, (state_spec, dataset.element_spec), "scan_func")
        out = traced.output_spec
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(f"scan_func must return a pair (new_state, output_element), got {out!r}")
        new_state, output = out
        if not st.same_structure(state_spec, new_state):
            raise TypeError(f"The element structure of the new state {new_state!r} must match the initial "
                            f"state {state_spec!r}")
        if st.flat_types(new_state) != st.flat_types(state_spec):
            raise TypeError(f"The element types for the new state must match the initial state. Expected "
                            f"{st.flat_types(state_spec)}; got {st.flat_types(new_state)}.")
        relaxed = st.most_specific_compatible(state_spec, new_state)
        if st.flat_shapes(relaxed) == st.flat_shapes(state_spec):
            break
        state_spec = relaxed
    inputs = [*st.to_components(state_spec, state), *traced.captured]
    return _derived("ScanDataset", dataset, inputs, output,
                    {"f": traced.graph, "Nstate": len(st.flatten(state_spec))})


def scan(initial_state: Any, scan_func: Callable[..., Any]) -> Transform:
    """``scan_func(state, element) -> (new_state, output)`` over the elements, from
    ``initial_state``; the dataset of the outputs.

    Raises:
        TypeError: ``scan_func`` returns something else than a pair, or a new state of
            another structure or dtype than ``initial_state``.
    """
    return lambda dataset: _scan_dataset(dataset, initial_state, scan_func)


def _take_while_dataset(dataset: Dataset, predicate: Callable[..., Any]) -> Dataset:
    traced = trace(predicate, dataset.element_spec, "take_while_predicate")
    out = traced.output_spec
    if not isinstance(out, TensorSpec) or out.dtype != dtypes.bool or out.shape.rank not in (None, 0):
        raise ValueError(f"`predicate` return type must be a scalar bool tensor, got {out!r}")
    return _derived("TakeWhileDataset", dataset, traced.captured, dataset.element_spec, {"predicate": traced.graph})


def take_while(predicate: Callable[..., Any]) -> Transform:
    """The elements up to (not including) the first for which ``predicate`` is ``False``.

    Raises:
        ValueError: ``predicate`` does not return a scalar bool.
    """
    return lambda dataset: _take_while_dataset(dataset, predicate)


_UNIQUE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.string)


def _unique_dataset(dataset: Dataset) -> Dataset:
    spec = dataset.element_spec
    if not isinstance(spec, TensorSpec) or spec.dtype not in _UNIQUE_DTYPES:
        raise TypeError(f"`tf.data.experimental.unique()` only supports datasets with a single int32, int64 "
                        f"or string component, got {spec!r}")
    if spec.shape.rank not in (None, 0):
        raise TypeError(f"`tf.data.experimental.unique()` only supports scalar elements, got shape {spec.shape}")
    return _derived("UniqueDataset", dataset, [], spec)


def unique() -> Transform:
    """Each distinct element once, in order of first occurrence (elements: int32, int64 or
    string scalars).

    Raises:
        TypeError: another element structure or dtype.
    """
    return _unique_dataset


def cardinality(dataset: Dataset) -> Tensor:
    """The number of elements of ``dataset`` (int64 scalar), ``INFINITE_CARDINALITY`` (-1)
    or ``UNKNOWN_CARDINALITY`` (-2) when it depends on the data (``filter``, files...).

    Raises:
        TypeError: ``dataset`` is not a dataset.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"cardinality takes a tf.data.Dataset, got {type(dataset).__name__}")
    return make_tensor("DatasetCardinality", [dataset._variant_tensor], name="DatasetCardinality")


def assert_cardinality(expected_cardinality: Any) -> Transform:
    """The dataset's elements, raising ``FailedPreconditionError`` when it has more or fewer
    than ``expected_cardinality`` (which ``cardinality`` then reports)."""
    def apply(dataset: Dataset) -> Dataset:
        count = convert_to_tensor(expected_cardinality, dtype=dtypes.int64, name="cardinality")
        return _derived("AssertCardinalityDataset", dataset, [count], dataset.element_spec)

    return apply
