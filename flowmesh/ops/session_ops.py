"""Tensors kept in the session between ``run`` calls (``tf.get_session_handle``,
``tf.get_session_tensor``, ``tf.delete_session_tensor``).

Running ``get_session_handle(x)`` stores ``x``'s value in its device's resource store and
fetches as a ``TensorHandle`` whose ``handle`` string (``"name;id;device"``, TensorFlow's
form) is later fed to the placeholder that ``get_session_tensor`` returns; the value lives
until ``delete_session_tensor`` runs or the session closes."""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor, get_default_graph, name_scope
from flowmesh.core.registry import register_op
from flowmesh.core.shapes import TensorShape, unknown_shape
from flowmesh.ops._builders import fixed, make_op, make_tensor, no_outputs
from flowmesh.ops.constant_op import placeholder

register_op("GetSessionHandle", fixed(("string", [])), not_differentiable=True, stateful=True)
register_op("GetSessionTensor", lambda inputs, attrs: [(attrs["dtype"], unknown_shape())],
            not_differentiable=True, stateful=True)
register_op("DeleteSessionTensor", no_outputs, not_differentiable=True, stateful=True)


def get_session_handle(data: Any, name: str | None = None) -> Tensor:
    """A string tensor that, when run, keeps ``data``'s value in the session and fetches as a
    ``TensorHandle`` (``.handle``, ``.eval()``)."""
    x = convert_to_tensor(data, name="data")
    return make_tensor("GetSessionHandle", [x], {"T": x.dtype}, name=name or "GetSessionHandle")


def _device_of(handle: Any) -> str:
    text = handle.handle if hasattr(handle, "handle") else handle
    text = text.decode() if isinstance(text, bytes) else str(text)
    parts = text.split(";")
    if len(parts) != 3:
        raise ValueError(f"{text!r} is not a session tensor handle (expected 'name;id;device' from "
                         "tf.get_session_handle)")
    return parts[2]


def get_session_tensor(handle: Any, dtype: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(holder, tensor)``: feed a handle string to ``holder`` and ``tensor`` is the kept value
    (placed on the device the handle names)."""
    with get_default_graph().device(_device_of(handle)), name_scope(name, "GetSessionTensor"):
        holder = placeholder(dtypes.string, shape=TensorShape([]))
        tensor = make_tensor("GetSessionTensor", [holder], {"dtype": dtypes.as_dtype(dtype)}, name="GetSessionTensor")
    return holder, tensor


def delete_session_tensor(handle: Any, name: str | None = None) -> tuple[Tensor, Operation]:
    """``(holder, op)``: running ``op`` with a handle fed to ``holder`` drops the kept value."""
    with get_default_graph().device(_device_of(handle)), name_scope(name, "DeleteSessionTensor"):
        holder = placeholder(dtypes.string, shape=TensorShape([]))
        op = make_op("DeleteSessionTensor", [holder], name="DeleteSessionTensor")
    return holder, op
