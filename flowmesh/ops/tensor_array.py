"""``tf.TensorArray`` (``tf.compat.v1.TensorArray``): TensorFlow 1.x's graph-mode TensorArray.

A ``TensorArray`` object is a Python view of a ``(handle, flow)`` pair (see
``tensor_array_ops.py``). Writing returns a *new* object with the write's flow, as in
TensorFlow (``ta = ta.write(i, x)``); all objects derived from one array share its handle
and its inferred element shape. In ``tf.while_loop`` and ``tf.cond`` a TensorArray travels
as its flow (a float scalar loop variable or branch output) and is rebuilt around the same
handle on the other side (:func:`to_flow`, :func:`from_flow`).

Semantics are TensorFlow 1.x's (``TensorArrayV3``, not TF 2's TensorList): writes happen
once per index, ``clear_after_read`` (default True) allows one read per element, and the
run-time errors name the TensorArray and the index (``kernels/tensor_array_state.py``).
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, get_default_graph, name_scope
from flowmesh.core.shapes import TensorShape, as_shape, unknown_shape
from flowmesh.core.type_spec import TensorArraySpec
from flowmesh.errors import InvalidArgumentError
from flowmesh.ops import array_ops
from flowmesh.ops import tensor_array_ops as gen
from flowmesh.ops._builders import constant_value
from flowmesh.ops.array_ops import identity
from flowmesh.ops.cast_ops import cast
from flowmesh.ops.range_ops import range as tf_range


class TensorArray:
    """A list of tensors of one dtype, written and read by index inside a graph.

    Args:
        dtype: the element dtype.
        size: the initial number of elements (int32 scalar); required without ``handle``.
        dynamic_size: writes past the end grow the array (default False).
        clear_after_read: an element can be read once (default True); set False to read
            an element several times.
        tensor_array_name: the name run-time errors use (default: the op's name).
        handle, flow: an existing array's handle and flow (instead of ``size``).
        infer_shape: the first write fixes the element shape; later writes must match.
        element_shape: the known element shape (a ``TensorShape``, maybe partial).
        colocate_with_first_write_call: place the array on the device of the first value
            written to it (when it has one).
        name: name scope of the creating op (default ``"TensorArray"``).

    Raises:
        ValueError: contradictory arguments (``handle`` with ``size``, ...).
        TypeError: ``handle`` is not a Tensor.
    """

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: bool | None = None,
                 clear_after_read: bool | None = None, tensor_array_name: str | None = None,
                 handle: Tensor | None = None, flow: Tensor | None = None, infer_shape: bool = True,
                 element_shape: Any = None, colocate_with_first_write_call: bool = True,
                 name: str | None = None):
        _check_arguments(size, dynamic_size, tensor_array_name, handle, flow, element_shape)
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        self._size = size
        self._infer_shape = bool(infer_shape)
        self._colocate_with_first_write_call = colocate_with_first_write_call
        self._first_write: list[Any] | None = [] if colocate_with_first_write_call else None
        # One-element list: shared by every TensorArray object built from this one.
        self._element_shape = [as_shape(element_shape)]
        if handle is not None:
            self._handle, self._flow = handle, convert_to_tensor(flow)
            return
        with name_scope(name, "TensorArray") as scope:
            size_t = convert_to_tensor(size, dtype=dtypes.int32, name="size")
            self._handle, self._flow = gen.tensor_array_v3(
                size_t, self._dtype, self._element_shape[0], self._dynamic_size,
                True if clear_after_read is None else bool(clear_after_read), self._infer_shape,
                tensor_array_name or "", name=scope or "TensorArray")

    # --- properties --------------------------------------------------------------------
    @property
    def flow(self) -> Tensor:
        """The flow tensor: the array's state after the last write this object saw."""
        return self._flow

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def handle(self) -> Tensor:
        """The resource handle of the array."""
        return self._handle

    @property
    def element_shape(self) -> TensorShape:
        """The static shape of the elements (inferred from writes when ``infer_shape``)."""
        return self._element_shape[0]

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def _type_spec(self) -> TensorArraySpec:
        return TensorArraySpec(self.element_shape, self._dtype, self._dynamic_size,
                               self._infer_shape)

    def __repr__(self) -> str:
        return (f"<tf.TensorArray '{self._handle.op.name}' dtype={self._dtype.name} "
                f"element_shape={self.element_shape}>")

    # --- helpers -----------------------------------------------------------------------
    @property
    def _label(self) -> str:
        """The creating op's name (through function captures), for error messages."""
        from flowmesh.core.function import resolve_captured

        return resolve_captured(self._handle).op.name

    def _check_element_shape(self, shape: TensorShape, where: str) -> None:
        if not shape.is_compatible_with(self.element_shape):
            raise InvalidArgumentError(
                f"TensorArray {self._label}: Could not write to {where}: Inconsistent shapes: "
                f"saw {shape} but expected {self.element_shape} (an element shape is fixed by "
                "element_shape= or by the first write; pass infer_shape=False for elements "
                "of different shapes)")
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    def _check_dtype(self, value: Tensor, where: str) -> None:
        if value.dtype != self._dtype:
            raise InvalidArgumentError(
                f"TensorArray {self._label}: Could not write to {where} because the value "
                f"dtype is {value.dtype.name} but TensorArray dtype is {self._dtype.name}; "
                f"cast it with tf.cast(value, tf.{self._dtype.name}).")

    def _convert(self, value: Any) -> Tensor:
        return convert_to_tensor(value, preferred_dtype=self._dtype, name="value")

    def _maybe_colocate_with(self, value: Tensor) -> None:
        """Places the creating op with the first written value (TensorFlow's
        ``colocate_with_first_write_call``) when the value has a device and it has none."""
        if self._first_write is None or self._first_write:
            return
        self._first_write.append(value)
        op = self._handle.op
        if op.type == "TensorArrayV3" and not op.device and value.op.device and \
                op.graph is value.graph:
            op._set_device(value.op.device)

    def _new(self, flow: Tensor) -> TensorArray:
        return build_ta_with_new_flow(self, flow)

    # --- TensorFlow's methods ----------------------------------------------------------
    def identity(self) -> TensorArray:
        """A TensorArray whose flow is an identity of this one's (for control dependencies)."""

        return self._new(identity(self._flow))

    def grad(self, source: str, flow: Tensor | None = None, name: str | None = None) -> TensorArray:
        """The gradient TensorArray for ``source`` (created once per array and source)."""
        flow = self._flow if flow is None else flow
        with name_scope(name, "TensorArrayGrad"):
            g_handle, g_flow = gen.tensor_array_grad_v3(self._handle, flow, source)
            g = TensorArray(self._dtype, handle=g_handle, flow=g_flow,
                            infer_shape=self._infer_shape, colocate_with_first_write_call=False)
            g._element_shape = self._element_shape
            return g

    def read(self, index: Any, name: str | None = None) -> Tensor:
        """The element at ``index`` (an int32 scalar)."""
        index = convert_to_tensor(index, dtype=dtypes.int32, name="index")
        value = gen.tensor_array_read_v3(self._handle, index, self._flow, self._dtype,
                                         name=name or "TensorArrayReadV3")
        value.set_shape(self.element_shape)
        return value

    def write(self, index: Any, value: Any, name: str | None = None) -> TensorArray:
        """Writes ``value`` at ``index``; returns the TensorArray to use afterwards."""
        with name_scope(name, "TensorArrayWrite"):
            index = convert_to_tensor(index, dtype=dtypes.int32, name="index")
            value = self._convert(value)
            where = f"TensorArray index {_describe(index)}"
            self._check_dtype(value, where)
            self._check_element_shape(value.shape, where)
            self._maybe_colocate_with(value)
            flow = gen.tensor_array_write_v3(self._handle, index, value, self._flow, name=name)
        return self._new(flow)

    def stack(self, name: str | None = None) -> Tensor:
        """All elements stacked into one tensor (``[size, *element_shape]``)."""

        with name_scope(name, "TensorArrayStack"):
            value = self.gather(tf_range(0, self.size()), name=name)
            size = None if self._dynamic_size or self._size is None else \
                constant_value(convert_to_tensor(self._size))
            if self.element_shape.rank is not None and size is not None:
                value.set_shape(TensorShape([int(size)]).concatenate(self.element_shape))
        return value

    def gather(self, indices: Any, name: str | None = None) -> Tensor:
        """The elements at ``indices`` (an int32 vector), stacked."""
        indices = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
        value = gen.tensor_array_gather_v3(self._handle, indices, self._flow, self._dtype,
                                           self.element_shape, name=name)
        if self.element_shape.rank is not None:
            value.set_shape(TensorShape([None]).concatenate(self.element_shape))
        return value

    def concat(self, name: str | None = None) -> Tensor:
        """All elements concatenated along their first axis."""
        shape = self.element_shape
        rest = shape[1:] if shape.rank else unknown_shape()
        value, _ = gen.tensor_array_concat_v3(self._handle, self._flow, self._dtype, rest,
                                              name=name)
        if shape.rank:
            dim0 = None
            size = constant_value(self.size()) if self._infer_shape else None
            if size is not None and shape.as_list()[0] is not None:
                dim0 = int(size) * shape.as_list()[0]
            value.set_shape(TensorShape([dim0]).concatenate(rest))
        return value

    def unstack(self, value: Any, name: str | None = None) -> TensorArray:
        """Writes ``value[i]`` at index ``i`` for every row of ``value``."""

        with name_scope(name, "TensorArrayUnstack"):
            value = self._convert(value)
            num_elements = array_ops.shape(value)[0]
            return self.scatter(tf_range(0, num_elements), value, name=name)

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> TensorArray:
        """Writes ``value[k]`` at index ``indices[k]``."""
        with name_scope(name, "TensorArrayScatter"):
            indices = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
            value = self._convert(value)
            where = f"TensorArray indices {_describe(indices)}"
            self._check_dtype(value, where)
            if value.shape.rank is not None and value.shape.rank > 0:
                self._check_element_shape(value.shape[1:], where)
            self._maybe_colocate_with(value)
            flow = gen.tensor_array_scatter_v3(self._handle, indices, value, self._flow, name=name)
        return self._new(flow)

    def split(self, value: Any, lengths: Any, name: str | None = None) -> TensorArray:
        """Splits ``value`` along axis 0 into pieces of ``lengths`` rows, one per index."""

        with name_scope(name, "TensorArraySplit"):
            value = self._convert(value)
            self._check_dtype(value, "TensorArray split")
            self._maybe_colocate_with(value)
            lengths_64 = cast(convert_to_tensor(lengths, name="lengths"), dtypes.int64)
            known = constant_value(lengths_64)
            if value.shape.rank is not None and known is not None and known.size and \
                    known.max() == known.min():
                piece = TensorShape([int(known.reshape(-1)[0])]).concatenate(value.shape[1:])
                self._check_element_shape(piece, "TensorArray split")
            flow = gen.tensor_array_split_v3(self._handle, value, lengths_64, self._flow, name=name)
        return self._new(flow)

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements (int32 scalar)."""
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtype=dtypes.int32)
        return gen.tensor_array_size_v3(self._handle, self._flow, name=name)

    def close(self, name: str | None = None) -> Any:
        """An op that frees the array (later uses fail)."""
        return gen.tensor_array_close_v3(self._handle, name=name)


def _check_arguments(size: Any, dynamic_size: Any, tensor_array_name: Any, handle: Any,
                     flow: Any, element_shape: Any) -> None:
    if handle is not None and tensor_array_name:
        raise ValueError("Cannot provide both `handle` and `tensor_array_name` arguments at the "
                         "same time.")
    if handle is not None and not isinstance(handle, Tensor):
        raise TypeError(f"Expected `handle` to be a Tensor, but got `{handle}` of type "
                        f"`{type(handle).__name__}` instead.")
    if handle is None and size is None:
        raise ValueError("Argument `size` must be provided if handle is not provided.")
    if handle is not None and size is not None:
        raise ValueError("Cannot provide both a `handle` and `size` arguments at the same time.")
    if handle is not None and element_shape is not None:
        raise ValueError("Cannot provide both `handle` and `element_shape` arguments at the "
                         "same time.")
    if handle is not None and dynamic_size is not None:
        raise ValueError("Cannot provide both `handle` and `dynamic_size` arguments at the "
                         "same time.")
    if handle is not None and flow is None:
        raise ValueError("flow must not be None if handle is not None.")


def _describe(index: Tensor) -> str:
    value = constant_value(index)
    return str(value.tolist()) if value is not None else f"<{index.name}>"


def build_ta_with_new_flow(old: TensorArray, flow: Tensor) -> TensorArray:
    """A TensorArray like ``old`` (same handle, shared element shape) with ``flow``."""
    new = TensorArray(old.dtype, handle=old.handle, flow=flow, infer_shape=old._infer_shape,
                      colocate_with_first_write_call=old._colocate_with_first_write_call)
    new._dynamic_size = old._dynamic_size
    new._size = old._size
    new._first_write = old._first_write
    new._element_shape = old._element_shape
    return new


# --- control flow: TensorArrays travel as their flows -----------------------------------------
def to_flow(value: Any) -> Any:
    """``value.flow`` for a TensorArray, ``value`` otherwise."""
    return value.flow if isinstance(value, TensorArray) else value


def from_flow(template: Any, value: Any) -> Any:
    """Rebuilds a TensorArray like ``template`` around the flow ``value`` (other values
    are returned as they are)."""
    if not isinstance(template, TensorArray):
        return value
    return build_ta_with_new_flow(template, value)


def outer_template(ta: TensorArray, what: str) -> TensorArray:
    """``ta`` with its handle as seen outside the function graph it was returned from.

    Raises:
        ValueError: the TensorArray was created inside the function (tf.cond branch or
            tf.while_loop body), so its handle does not exist outside it.
    """
    from flowmesh.core.function import FuncGraph

    handle = ta.handle
    graph = get_default_graph()
    while isinstance(handle.graph, FuncGraph) and handle.graph is not graph:
        source = handle.graph.external_of(handle)
        if source is None:
            raise ValueError(
                f"{what} returned the TensorArray {handle.op.name} created inside it; create "
                "the TensorArray before the tf.cond/tf.while_loop and write to it inside.")
        handle = source
    if handle is ta.handle:
        return ta
    new = build_ta_with_new_flow(ta, ta.flow)
    new._handle = handle
    return new


__all__ = ["TensorArray", "build_ta_with_new_flow", "from_flow", "outer_template", "to_flow"]
