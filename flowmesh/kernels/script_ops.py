"""Kernels of ``flowmesh/ops/script_ops.py``: call the Python function of a ``py_func``.

Inputs are handed over as NumPy copies; results are checked against ``Tout`` and moved
to the op's device. Exceptions raised by the function become the matching ``OpError``
(as TensorFlow maps them): ``ValueError``/``TypeError`` -> ``InvalidArgumentError``,
``StopIteration``/``IndexError`` -> ``OutOfRangeError``, ``NotImplementedError`` ->
``UnimplementedError``, ``MemoryError`` -> ``ResourceExhaustedError``, anything else
-> ``UnknownError``; the message keeps the Python traceback.
"""

from __future__ import annotations

import traceback
from typing import Any

import numpy as np

from flowmesh.core import dtypes
from flowmesh.errors import (
    InvalidArgumentError,
    OpError,
    OutOfRangeError,
    ResourceExhaustedError,
    UnimplementedError,
    UnknownError,
)
from flowmesh.kernels.contract.convert import to_numpy, to_torch
from flowmesh.kernels.contract.registry import KernelContext, kernel

_ERRORS: list[tuple[type[BaseException], type[OpError]]] = [
    (StopIteration, OutOfRangeError),
    (IndexError, OutOfRangeError),
    (NotImplementedError, UnimplementedError),
    (MemoryError, ResourceExhaustedError),
    (ValueError, InvalidArgumentError),
    (TypeError, InvalidArgumentError),
]


def _factory(ctx: KernelContext):
    func = ctx.attr("func")
    token = ctx.attr("token", ctx.op.name)
    in_types = [t.dtype for t in ctx.op.inputs]
    out_types = list(ctx.attr("Tout"))
    device = ctx.torch_device

    def run(*args: Any) -> Any:
        arrays = [to_numpy(a, dtype) for a, dtype in zip(args, in_types)]
        try:
            result = func(*arrays)
        except Exception as exc:  # noqa: BLE001 - user code; mapped to an OpError
            raise _as_op_error(exc, token) from exc
        values = _as_list(result, len(out_types), token)
        outputs = [to_torch(_check(v, dtype, i, token), dtype, device)
                   for i, (v, dtype) in enumerate(zip(values, out_types))]
        if not out_types:
            return None
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return run


kernel("PyFunc")(_factory)
kernel("PyFuncStateless")(_factory)


def _as_op_error(exc: Exception, token: str) -> OpError:
    error_type = next((err for py, err in _ERRORS if isinstance(exc, py)), UnknownError)
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
    return error_type(f"{type(exc).__name__}: {exc} (raised by the Python function of "
                      f"{token})\n{trace}")


def _as_list(result: Any, count: int, token: str) -> list[Any]:
    if count == 0:
        return []
    values = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(values) != count:
        raise InvalidArgumentError(
            f"The Python function of {token} returned {len(values)} values but Tout declares "
            f"{count}; return one NumPy array per output dtype (a Python list or tuple counts "
            "as several values, as in TensorFlow: wrap it with np.array for one output)."
        )
    return values


def _check(value: Any, dtype: dtypes.DType, index: int, token: str) -> np.ndarray:
    if dtype == dtypes.string:
        array = np.asarray(value, dtype=object)
        flat = array.reshape(-1)
        for i, item in enumerate(flat):
            if isinstance(item, str):
                flat[i] = item.encode()
            elif not isinstance(item, bytes):
                raise InvalidArgumentError(
                    f"{index}-th value returned by {token} holds {type(item).__name__}, but "
                    "expects string (bytes or str)"
                )
        return array
    array = np.asarray(value)
    expected = np.dtype(dtype.as_numpy_dtype)
    if array.dtype != expected:
        raise InvalidArgumentError(
            f"{index}-th value returned by {token} is {_tf_name(array.dtype)}, but expects "
            f"{_tf_name(expected)}. Convert the result, e.g. `return x.astype(np.{expected.name})`."
        )
    return np.array(array, order="C", copy=True)  # never alias arrays the function keeps


def _tf_name(dtype: np.dtype) -> str:
    return {"float64": "double", "float32": "float", "float16": "half"}.get(dtype.name, dtype.name)
