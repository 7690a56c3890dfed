"""Tracing a user function (``map``'s, ``filter``'s...) into a function graph.

The function runs once, at graph-construction time, on placeholders shaped like one
element; the ops it creates form a :class:`~flowmesh.core.function.FuncGraph` that the
dataset op carries as an attr and its kernel compiles into a program (no Python per
element unless the function itself calls ``py_func``). Tensors of the enclosing graph the
function uses are captured: they become trailing inputs of the dataset op.

Calling convention (TensorFlow's): an element that is a plain tuple is unpacked into
positional arguments; any other element (a dict, a namedtuple, one tensor) is one argument.
A returned list becomes a tuple.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.function import FuncGraph, building
from flowmesh.core.graph import Tensor, get_default_graph
from flowmesh.core.type_spec import SparseTensorSpec, TensorSpec
from flowmesh.data import structure as st
from flowmesh.ops.ragged_tensor import RaggedTensor


class TracedFunction:
    """A traced function: its graph, the outer tensors it captured and its output spec."""

    def __init__(self, graph: FuncGraph, output_spec: Any):
        self.graph = graph
        self.output_spec = output_spec

    @property
    def captured(self) -> list[Tensor]:
        return list(self.graph.external_captures)


def trace(fn: Callable[..., Any], element_spec: Any, name: str) -> TracedFunction:
    """Traces ``fn`` on one element of ``element_spec``.

    Raises:
        TypeError: ``fn`` is not callable, or returns something that is not a tensor,
            a nested structure of tensors or a dataset.
    """
    if not callable(fn):
        raise TypeError(f"{name}: expected a callable, got {fn!r}")
    graph = FuncGraph(name, get_default_graph())
    with building(graph):
        flat = [_argument(graph, spec, i) for i, spec in enumerate(st.flatten(element_spec))]
        args = st.from_components(element_spec, flat)
        result = fn(*args) if type(args) is tuple else fn(args)
        result = _normalize(result, name)
        leaves = [_as_output(v, name) for v in st.flatten(result)]
        output_spec = st.pack(result, [_spec_of(v) for v in leaves])
        outputs = st.to_components(output_spec, st.pack(result, leaves))
    graph.outputs = outputs
    graph.seal()
    return TracedFunction(graph, output_spec)


def _argument(graph: FuncGraph, spec: Any, index: int) -> Any:
    if st.is_variant_leaf(spec):
        return graph.add_input(dtypes.variant, [], name=f"arg{index}")
    placeholder = graph.add_input(spec.dtype, spec.shape, name=f"arg{index}")
    if isinstance(spec, st.DatasetSpec):
        from flowmesh.data.dataset import Dataset

        return Dataset(placeholder, spec.element_spec)
    return placeholder


def _normalize(value: Any, name: str) -> Any:
    if isinstance(value, list):
        return tuple(_normalize(v, name) for v in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_normalize(v, name) for v in value))
    if isinstance(value, tuple):
        return tuple(_normalize(v, name) for v in value)
    if isinstance(value, dict):
        return {k: _normalize(v, name) for k, v in value.items()}
    if value is None:
        raise TypeError(f"{name} returned None; it must return a tensor, a nested structure of "
                        "tensors or a dataset")
    return value


def _as_output(value: Any, name: str) -> Any:
    """A tensor, a SparseTensor or a dataset's variant tensor."""
    from flowmesh.core.sparse_tensor import SparseTensor, SparseTensorValue
    from flowmesh.data.dataset import Dataset

    if isinstance(value, (Dataset, RaggedTensor)):
        return value
    if isinstance(value, (SparseTensor, SparseTensorValue)):
        return SparseTensor.from_value(value)
    try:
        return convert_to_tensor(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} returned {value!r}, which is not convertible to a tensor: "
                        f"{exc}") from None


def _spec_of(value: Any) -> Any:
    from flowmesh.core.sparse_tensor import SparseTensor
    from flowmesh.data.dataset import Dataset

    if isinstance(value, Dataset):
        return st.DatasetSpec(value.element_spec)
    if isinstance(value, SparseTensor):
        return SparseTensorSpec(value.shape, value.dtype)
    if isinstance(value, RaggedTensor):
        return value._type_spec
    return TensorSpec(value.shape, value.dtype)
