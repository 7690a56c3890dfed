"""Dataset elements as bytes, between a pipeline's worker process and the iterator.

A message is a fixed header, a layout (``marshal`` of plain tuples: kinds, dtype names,
shapes, offsets; never objects) and a body holding every component's bytes at 16-byte
aligned offsets. The reader receives the body into one ``bytearray`` and makes every
tensor a view of it (``torch.frombuffer``): no copy after the socket read.

Component kinds: ``t`` a torch tensor, ``n`` a NumPy numeric array, ``s`` a NumPy array of
``bytes`` (int64 lengths, then the bytes), ``b`` a ``bytes`` scalar (file records), ``p`` a
:class:`SparseValue` (its three parts). Anything else (a nested dataset) cannot cross.
"""

from __future__ import annotations

import marshal
import struct
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.pipeline.sparse_value import SparseValue

HEADER = struct.Struct("<cxxxIQ")  # kind, layout bytes, body bytes
ELEMENT, END, FAILURE, CREDITS = b"E", b"X", b"F", b"C"
_ALIGN = 16
_PAD = bytes(_ALIGN)


class _Body:
    """Collects the payload parts of one message at aligned offsets."""

    def __init__(self) -> None:
        self.parts: list[Any] = []
        self.size = 0

    def add(self, data: Any, nbytes: int) -> int:
        offset = self.size
        if nbytes:
            self.parts.append(data)
            pad = -nbytes % _ALIGN
            if pad:
                self.parts.append(_PAD[:pad])
            self.size += nbytes + pad
        return offset


def encode(element: tuple) -> list[Any]:
    """The buffers of one element's message (header, layout, body parts), in order.

    Raises:
        InvalidArgumentError: a component cannot be passed between processes.
    """
    body = _Body()
    layout = marshal.dumps(tuple(_component(v, body) for v in element))
    layout += _PAD[:-len(layout) % _ALIGN]  # the body stays aligned (marshal ignores the rest)
    return [HEADER.pack(ELEMENT, len(layout), body.size), layout, *body.parts]


def encode_control(kind: bytes, payload: Any = None) -> bytes:
    """An ``END``, ``FAILURE`` or ``CREDITS`` message (``payload``: plain values: an error's
    fields, a credit count)."""
    layout = marshal.dumps(payload)
    return HEADER.pack(kind, len(layout), 0) + layout


def _component(value: Any, body: _Body) -> tuple:
    if isinstance(value, torch.Tensor):
        flat = value.detach().cpu().contiguous().reshape(-1)
        raw = flat.view(torch.uint8).numpy() if flat.numel() else b""
        nbytes = flat.numel() * flat.element_size()
        return ("t", str(value.dtype)[6:], tuple(value.shape), body.add(raw, nbytes), nbytes)
    if type(value) is bytes:
        return ("b", body.add(value, len(value)), len(value))
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return _strings(value, body)
        flat = np.ascontiguousarray(value)
        return ("n", value.dtype.str, value.shape, body.add(flat.data, flat.nbytes), flat.nbytes)
    if isinstance(value, SparseValue):
        return ("p", _component(value.indices, body), _component(value.values, body),
                _component(value.dense_shape, body))
    raise InvalidArgumentError(
        f"a dataset element component of type {type(value).__name__} cannot leave the input "
        "pipeline's worker process; set options.experimental_worker_process = False")


def _strings(value: np.ndarray, body: _Body) -> tuple:
    items = value.reshape(-1).tolist()
    if not all(type(item) is bytes for item in items):
        bad = next(type(item).__name__ for item in items if type(item) is not bytes)
        raise InvalidArgumentError(f"a string component holds a {bad}, not bytes")
    lengths = np.fromiter((len(item) for item in items), dtype=np.int64, count=len(items))
    data = b"".join(items)
    return ("s", value.shape, body.add(lengths.data, lengths.nbytes), body.add(data, len(data)))


def new_body(size: int) -> np.ndarray:
    """A writable, uninitialised buffer of ``size`` bytes for a message to be received into
    (decoded tensors are views of it)."""
    return np.empty(size, dtype=np.uint8)


def decode(layout: Any, body: Any, base: int = 0) -> tuple:
    """The element of a message whose body starts at ``body[base]`` (tensors are views of
    ``body``)."""
    return tuple(_value(entry, body, base) for entry in marshal.loads(layout))


def decode_payload(layout: Any) -> Any:
    """The payload of a control message."""
    return marshal.loads(layout)


def _value(entry: tuple, body: Any, base: int) -> Any:
    kind = entry[0]
    if kind == "t":
        _, dtype_name, shape, offset, nbytes = entry
        offset += base
        dtype = getattr(torch, dtype_name)
        if not nbytes:
            return torch.empty(shape, dtype=dtype)
        raw = torch.frombuffer(body, dtype=torch.uint8, count=nbytes, offset=offset)
        return raw.view(dtype).reshape(shape)
    if kind == "b":
        return bytes(memoryview(body)[base + entry[1]:base + entry[1] + entry[2]])
    if kind == "n":
        _, dtype_str, shape, offset, nbytes = entry
        offset += base
        dtype = np.dtype(dtype_str)
        if not nbytes:
            return np.empty(shape, dtype=dtype)
        return np.frombuffer(body, dtype=dtype, count=nbytes // dtype.itemsize,
                             offset=offset).reshape(shape)
    if kind == "s":
        return _decode_strings(entry, body, base)
    if kind == "p":
        return SparseValue(*(_value(part, body, base) for part in entry[1:]))
    raise InvalidArgumentError(f"unknown component kind {kind!r} from the worker process")


def _decode_strings(entry: tuple, body: Any, base: int) -> np.ndarray:
    _, shape, lengths_at, data_at = entry
    count = int(np.prod(shape, dtype=np.int64))
    lengths = np.frombuffer(body, dtype=np.int64, count=count, offset=base + lengths_at) \
        if count else np.zeros(0, np.int64)
    view = memoryview(body)
    out = np.empty(count, dtype=object)
    start = base + data_at
    for i, length in enumerate(lengths.tolist()):
        out[i] = bytes(view[start:start + length])
        start += length
    return out.reshape(shape)
