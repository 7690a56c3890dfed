"""Dataset sources: tensors, tensor slices, ranges, generators, zip, file lists."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.core.sparse_tensor import SparseTensor, SparseTensorValue
from flowmesh.core.type_spec import SparseTensorSpec, TensorSpec
from flowmesh.data import structure as st
from flowmesh.data.dataset import Dataset
from flowmesh.ops._builders import make_tensor


def make_dataset(op_type: str, inputs: Sequence[Tensor], spec: Any, attrs: dict[str, Any] | None = None,
                 options: Any = None) -> Dataset:
    """Creates a dataset op whose elements have ``spec`` and wraps it."""
    full = {"output_types": st.flat_types(spec), "output_shapes": st.flat_shapes(spec)}
    full.update(attrs or {})
    return Dataset(make_tensor(op_type, list(inputs), full, name=op_type), spec, options)


def _to_tensors(tensors: Any) -> Any:
    def convert(value: Any) -> Any:
        if isinstance(value, Dataset):
            raise TypeError("from_tensor_slices/from_tensors take tensors, not datasets "
                            "(use Dataset.zip to combine datasets)")
        if isinstance(value, (SparseTensor, SparseTensorValue)):
            return SparseTensor.from_value(value)
        return convert_to_tensor(value)

    if tensors is None or (st.is_nested(tensors) and not st.flatten(tensors)):
        raise ValueError("from_tensor_slices/from_tensors need at least one tensor")
    return st.map_structure(convert, tensors)


def from_tensor_slices(tensors: Any) -> Dataset:
    """See :meth:`Dataset.from_tensor_slices`.

    Raises:
        ValueError: a component is a scalar, or the components' first dimensions differ.
    """
    values = _to_tensors(tensors)
    flat = st.flatten(values)
    first = None
    for t in flat:
        if t.shape.rank == 0:
            raise ValueError(f"from_tensor_slices: component {t.name} is a scalar; slicing "
                             "needs tensors of rank >= 1")
        size = t.shape[0] if t.shape.rank is not None else None
        if size is not None and first is not None and size != first:
            raise ValueError(f"from_tensor_slices: all components must have the same size in "
                             f"the 0th dimension, got {first} and {size} ({t.name})")
        first = first if size is None else size
    spec = st.map_structure(
        lambda t: _spec(t, t.shape[1:] if t.shape.rank is not None else unknown_shape()), values)
    return make_dataset("TensorSliceDataset", st.to_components(spec, values), spec)


def _spec(value: Any, shape: Any) -> Any:
    if isinstance(value, SparseTensor):
        return SparseTensorSpec(shape, value.dtype)
    return TensorSpec(shape, value.dtype)


def from_tensors(tensors: Any) -> Dataset:
    """See :meth:`Dataset.from_tensors`."""
    values = _to_tensors(tensors)
    spec = st.map_structure(lambda t: _spec(t, t.shape), values)
    return make_dataset("TensorDataset", st.to_components(spec, values), spec)


def range_dataset(*args: Any, output_type: Any = None) -> Dataset:
    """See :meth:`Dataset.range`."""
    if not 1 <= len(args) <= 3:
        raise ValueError(f"Dataset.range takes 1 to 3 arguments (start, stop, step), got {len(args)}")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    bounds = [convert_to_tensor(v, dtype=dtypes.int64) for v in (start, stop, step)]
    dtype = dtypes.as_dtype(output_type or dtypes.int64)
    return make_dataset("RangeDataset", bounds, TensorSpec([], dtype))


def zip_datasets(datasets: Any) -> Dataset:
    """See :meth:`Dataset.zip`."""
    flat = st.flatten(datasets)
    if not flat or not all(isinstance(d, Dataset) for d in flat):
        raise TypeError(f"Dataset.zip takes a (nested) tuple or dict of datasets, got {datasets!r}")
    spec = st.pack(datasets, [d.element_spec for d in flat])
    return make_dataset("ZipDataset", [d._variant_tensor for d in flat], spec)


def from_generator(generator: Callable[..., Any], output_types: Any, output_shapes: Any,
                   args: Sequence[Any] | None) -> Dataset:
    """See :meth:`Dataset.from_generator`."""
    if not callable(generator):
        raise TypeError("from_generator: `generator` must be callable")
    types = st.map_structure(dtypes.as_dtype, output_types)
    if output_shapes is None:
        shapes = st.map_structure(lambda _: unknown_shape(), types)
    else:
        shapes = st.map_structure(TensorShape, output_shapes) if st.is_nested(types) \
            else TensorShape(output_shapes)
    spec = st.specs_from(types, shapes)
    arg_tensors = [convert_to_tensor(a) for a in (args or ())]
    attrs = {"generator": generator, "flatten": lambda value: _flatten_like(types, value)}
    return make_dataset("GeneratorDataset", arg_tensors, spec, attrs)


def _flatten_like(structure: Any, value: Any) -> list[Any]:
    if isinstance(structure, Mapping):
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a dict with keys {sorted(structure)}")
        return [x for k in sorted(structure) for x in _flatten_like(structure[k], value[k])]
    if isinstance(structure, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(structure):
            raise TypeError(f"expected a sequence of {len(structure)} values")
        return [x for s, v in zip(structure, value) for x in _flatten_like(s, v)]
    return [value]


def list_files(file_pattern: Any, shuffle: bool | None, seed: int | None) -> Dataset:
    """See :meth:`Dataset.list_files`: the matching files (``MatchingFiles``, sorted, at
    run time: a pattern matching nothing raises ``InvalidArgumentError`` naming it)."""
    patterns = convert_to_tensor(file_pattern, dtype=dtypes.string)
    files = make_tensor("MatchingFiles", [patterns], name="MatchingFiles")
    dataset = from_tensor_slices(files)
    if shuffle is None or shuffle:
        dataset = dataset.shuffle(10000, seed=seed)
    return dataset
