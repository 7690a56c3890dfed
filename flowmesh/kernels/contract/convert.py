"""Conversions between flowmesh dtypes / NumPy arrays and torch tensors.

Runtime values are torch tensors for numeric dtypes, NumPy ``object`` arrays of
``bytes`` for ``string``, and plain Python objects for ``resource`` handles.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes

TORCH_DTYPES: dict[dtypes.DType, torch.dtype] = {
    dtypes.float16: torch.float16,
    dtypes.bfloat16: torch.bfloat16,
    dtypes.float32: torch.float32,
    dtypes.float64: torch.float64,
    dtypes.int8: torch.int8,
    dtypes.int16: torch.int16,
    dtypes.int32: torch.int32,
    dtypes.int64: torch.int64,
    dtypes.uint8: torch.uint8,
    dtypes.uint16: torch.uint16,
    dtypes.uint32: torch.uint32,
    dtypes.uint64: torch.uint64,
    dtypes.bool: torch.bool,
    dtypes.complex64: torch.complex64,
    dtypes.complex128: torch.complex128,
}
# tf.dtypes.experimental: torch holds the float8 formats natively (fetched and fed through a
# uint8 view); the rest are held widened, every value exactly representable in the storage.
TORCH_DTYPES.update({
    dtypes.float8_e5m2: torch.float8_e5m2, dtypes.float8_e4m3fn: torch.float8_e4m3fn,
    dtypes.float8_e4m3fnuz: torch.float8_e4m3fnuz, dtypes.float8_e5m2fnuz: torch.float8_e5m2fnuz,
})
WIDENED_STORAGE: dict[dtypes.DType, torch.dtype] = {
    dtypes.float8_e4m3b11fnuz: torch.float32, dtypes.float4_e2m1fn: torch.float32,
    dtypes.int4: torch.int8, dtypes.int2: torch.int8, dtypes.uint4: torch.uint8, dtypes.uint2: torch.uint8,
}
_WIDENED_NUMPY = {torch.float32: np.float32, torch.int8: np.int8, torch.uint8: np.uint8}
_FLOAT8_TORCH = frozenset({torch.float8_e5m2, torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz})
FLOWMESH_DTYPES: dict[torch.dtype, dtypes.DType] = {v: k for k, v in TORCH_DTYPES.items()}
# Quantized dtypes are held as the integers of the same width (not in FLOWMESH_DTYPES).
QUANTIZED_STORAGE: dict[dtypes.DType, torch.dtype] = {
    dtypes.qint8: torch.int8, dtypes.quint8: torch.uint8, dtypes.qint16: torch.int16,
    dtypes.quint16: torch.uint16, dtypes.qint32: torch.int32,
}


def torch_dtype(dtype: dtypes.DType) -> torch.dtype:
    found = TORCH_DTYPES.get(dtype) or QUANTIZED_STORAGE.get(dtype) or WIDENED_STORAGE.get(dtype)
    if found is None:
        raise TypeError(f"dtype {dtype.name} has no torch equivalent")
    return found


def _narrow_to_torch(array: Any, dtype: dtypes.DType) -> torch.Tensor:
    """A NumPy value -> the torch tensor holding ``dtype`` (rounded as ml_dtypes rounds)."""
    array = np.asarray(array)
    if array.dtype != dtype.as_numpy_dtype:
        array = array.astype(dtype.as_numpy_dtype)
    storage = WIDENED_STORAGE.get(dtype)
    if storage is None:  # a float8 format torch has: reinterpret the bytes
        return torch.from_numpy(np.array(array, order="C").view(np.uint8)).view(TORCH_DTYPES[dtype])
    return torch.from_numpy(np.array(array, dtype=_WIDENED_NUMPY[storage], order="C"))


def _narrow_to_numpy(tensor: torch.Tensor, dtype: dtypes.DType | None) -> np.ndarray:
    source = FLOWMESH_DTYPES.get(tensor.dtype)
    if source is not None and source in dtypes.NARROW_DTYPES:
        return tensor.view(torch.uint8).numpy().view(source.as_numpy_dtype)
    return tensor.numpy().astype(dtype.as_numpy_dtype)


def to_torch(array: Any, dtype: dtypes.DType, device: torch.device | None = None) -> Any:
    """NumPy array (or scalar) -> torch tensor of ``dtype`` on ``device``.

    Strings stay NumPy object arrays. The result may share memory with ``array``.
    """
    if dtype == dtypes.string:
        return array if isinstance(array, np.ndarray) else np.asarray(array, dtype=object)
    if isinstance(array, torch.Tensor):
        out = array
    else:
        array = np.asarray(array)
        if dtype in dtypes.NARROW_DTYPES:
            out = _narrow_to_torch(array, dtype)
        elif dtype.is_quantized:
            array = (array.view(array.dtype[0]) if array.dtype.fields else array).astype(
                dtype.as_numpy_dtype[0])
            dtype = dtypes.as_dtype(array.dtype)
        if dtype in dtypes.NARROW_DTYPES:
            pass
        elif dtype == dtypes.bfloat16:
            out = torch.from_numpy(np.ascontiguousarray(array.astype(np.float32))).to(torch.bfloat16)
        else:
            if array.dtype != dtype.as_numpy_dtype:
                array = array.astype(dtype.as_numpy_dtype)
            if not array.flags.writeable or not array.flags.c_contiguous:
                shape = array.shape  # ascontiguousarray turns a 0-d array into shape (1,)
                array = np.ascontiguousarray(array).copy() if not array.flags.writeable else \
                    np.ascontiguousarray(array)
                array = array.reshape(shape)
            out = torch.from_numpy(array)
    if device is not None and out.device != device:
        out = out.to(device)
    return out


def to_numpy(value: Any, dtype: dtypes.DType | None = None, copy: bool = True) -> Any:
    """torch tensor -> NumPy array (a copy by default, so the caller owns it).

    0-d results become NumPy scalars (``np.float32(3.0)``), scalar strings ``bytes``,
    as ``Session.run`` returns them in TensorFlow.
    """
    if isinstance(value, torch.Tensor):
        tensor = value.detach()
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()
            copy = False
        if tensor.dtype == torch.bfloat16:
            import ml_dtypes

            array = tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        elif tensor.dtype in _FLOAT8_TORCH or (dtype is not None and dtype in WIDENED_STORAGE):
            array = _narrow_to_numpy(tensor, dtype)
        else:
            array = tensor.numpy()
        if copy:
            array = array.copy()
        if dtype is not None and dtype.is_quantized:  # TensorFlow's structured NumPy dtype
            array = array.view(dtype.as_numpy_dtype)
        return array[()] if array.ndim == 0 else array
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value[()]
        return value.copy() if copy else value
    return value
