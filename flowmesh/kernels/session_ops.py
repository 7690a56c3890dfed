"""Kernels of ``flowmesh/ops/session_ops.py``: values kept in a dict resource of the
device (dropped with the device's resources when the session closes)."""

from __future__ import annotations

import itertools
import threading
from typing import Any

import numpy as np

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import to_numpy
from flowmesh.kernels.contract.registry import KernelContext, kernel

_ids = itertools.count()
_lock = threading.Lock()


class TensorHandle:
    """What fetching ``tf.get_session_handle(x)`` returns: the ``handle`` string to feed to
    ``get_session_tensor``'s placeholder, and ``eval()`` for the kept value."""

    def __init__(self, handle: str, value: Any):
        self.handle = handle
        self._value = value

    def eval(self) -> Any:
        return to_numpy(self._value)

    def get_raw_handle(self) -> str:
        return self.handle

    def __str__(self) -> str:
        return self.handle

    def __repr__(self) -> str:
        return f"<TensorHandle {self.handle}>"


def _store(ctx: KernelContext) -> dict[str, Any]:
    return ctx.device.resources.lookup_or_create("", "_session_tensors", dict)


def _key(handle: Any) -> str:
    value = handle.item() if isinstance(handle, np.ndarray) else handle
    return value.decode() if isinstance(value, bytes) else str(value)


@kernel("GetSessionHandle")
def _get_handle(ctx: KernelContext):
    store, prefix = _store(ctx), f"{ctx.op.name};"

    def run(value: Any) -> Any:
        with _lock:
            handle = f"{prefix}{next(_ids)};{ctx.device.name}"
            store[handle] = value
        return TensorHandle(handle, value)

    return run


@kernel("GetSessionTensor")
def _get_tensor(ctx: KernelContext):
    store = _store(ctx)

    def run(handle: Any) -> Any:
        key = _key(handle)
        if key not in store:
            raise InvalidArgumentError(f"The tensor with handle '{key}' is not in the session store.")
        return store[key]

    return run


@kernel("DeleteSessionTensor")
def _delete_tensor(ctx: KernelContext):
    store = _store(ctx)

    def run(handle: Any) -> None:
        key = _key(handle)
        if store.pop(key, None) is None:
            raise InvalidArgumentError(f"The tensor with handle '{key}' is not in the session store.")

    return run
