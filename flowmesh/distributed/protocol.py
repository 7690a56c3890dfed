"""Wire formats shared by the control plane (gRPC) and the tensor data plane (TCP).

Control messages are msgpack maps (no pickle). Errors travel as
``{"code": <TensorFlow status code>, "message": str, "node": str | None}`` and become
the matching :class:`~flowmesh.errors.OpError` subclass on the other side.

Data-plane frames are::

    header  20 bytes  "<4sBBHIQ": magic b"FMDP", version, kind, flags, meta length,
                      payload length
    meta    msgpack   kind-specific fields plus one descriptor per tensor
    payload raw bytes the tensors' memory, back to back (no copy on send, received
                      straight into freshly allocated tensors)

Tensor descriptors are ``[dtype name, shape, nbytes]`` for numeric tensors (plus a
fourth element, a segment name, when the bytes are in shared memory instead of the
payload: see :mod:`flowmesh.distributed.shm`), ``["string", shape, [bytes, ...]]`` for
string tensors (their bytes ride in the meta) and ``None`` for control tokens.
"""

from __future__ import annotations

import math
import struct
import threading
import weakref
from typing import Any

import msgpack
import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.errors import (
    DataLossError,
    InternalError,
    InvalidArgumentError,
    OpError,
    ResourceExhaustedError,
    exception_type_from_error_code,
)
from flowmesh.kernels.contract.convert import FLOWMESH_DTYPES, TORCH_DTYPES

MAGIC = b"FMDP"
VERSION = 1
HEADER = struct.Struct("<4sBBHIQ")
MAX_META_BYTES = 64 * 1024 * 1024

# Frame kinds.
HELLO = 1  # meta: {"peer": task name, "incarnation": int}
TENSOR = 2  # meta: {"step": int, "key": [tensor, src, dst, control], "t": [desc]}
REQUEST = 3  # meta: {"id": int, "m": method, "a": args, "t": [descs]}
RESPONSE = 4  # meta: {"id": int, "r": result, "e": error or None, "t": [descs]}
ERROR = 5  # meta: {"e": error}; the sender closes the connection afterwards
RELEASE = 6  # meta: {"names": [shared-memory segment names the receiver is done with]}
KINDS = (HELLO, TENSOR, REQUEST, RESPONSE, ERROR, RELEASE)


# --- errors ----------------------------------------------------------------------------------
def encode_error(exc: BaseException) -> dict[str, Any]:
    """An exception as a portable map (OpErrors keep their status code)."""
    if isinstance(exc, OpError):
        node = exc.node_def if isinstance(exc.node_def, str) else None
        return {"code": exc.error_code, "message": exc.message, "node": node}
    return {"code": InternalError.error_code, "node": None,
            "message": f"{type(exc).__name__}: {exc}"}


def decode_error(data: Any, context: str = "") -> OpError:
    """The :class:`OpError` described by :func:`encode_error`'s map."""
    if not isinstance(data, dict):
        return DataLossError(None, None, f"{context}malformed error reply {data!r:.200}")
    code = data.get("code")
    cls = exception_type_from_error_code(code if isinstance(code, int) else 2)
    message = str(data.get("message", ""))
    node = data.get("node") if isinstance(data.get("node"), str) else None
    return cls(node, None, f"{context}{message}")


# --- msgpack ---------------------------------------------------------------------------------
def pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def unpack(data: bytes | bytearray | memoryview, what: str = "message") -> Any:
    """msgpack-decodes ``data``; corrupt input raises ``DataLossError``."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False, use_list=True)
    except Exception as exc:  # noqa: BLE001 - any decoding failure is data loss
        raise DataLossError(
            None, None, f"Malformed {what} ({len(data)} bytes): {type(exc).__name__}: {exc}"
        ) from None


# --- tensors ---------------------------------------------------------------------------------
def tensor_desc(value: Any) -> tuple[Any, memoryview | None]:
    """Describes a runtime value and returns its raw bytes (zero-copy) when numeric.

    Raises:
        InvalidArgumentError: for values that cannot leave the process (resource handles).
    """
    if value is None:
        return None, None
    if isinstance(value, torch.Tensor):
        name = _NUMPY_NAMES.get(value.dtype)
        if name is not None and not value.requires_grad and value.is_contiguous():
            try:
                array = value.numpy()  # the fast path: no torch views, no copy
            except TypeError:  # not in host memory
                pass
            else:
                raw = memoryview(array).cast("B") if array.nbytes else None
                return [name, list(array.shape), array.nbytes], raw
        tensor = value.detach()
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()
        tensor = tensor.contiguous()
        dtype = FLOWMESH_DTYPES.get(tensor.dtype)
        if dtype is None:
            raise InvalidArgumentError(None, None, f"Cannot send a tensor of torch dtype {tensor.dtype}")
        raw = tensor.reshape(-1).view(torch.uint8).numpy()
        return [dtype.name, list(tensor.shape), raw.nbytes], memoryview(raw)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "OSU":
            items = [x if isinstance(x, bytes) else str(x).encode() for x in value.reshape(-1).tolist()]
            return ["string", list(value.shape), items], None
        array = np.ascontiguousarray(value).reshape(value.shape)  # ascontiguousarray makes 0-d 1-d
        name = dtypes.as_dtype(array.dtype).name
        raw = array.reshape(-1).view(np.uint8)
        return [name, list(array.shape), raw.nbytes], memoryview(raw)
    if isinstance(value, (bool, int, float, np.generic)):
        return tensor_desc(np.asarray(value))
    if isinstance(value, (bytes, str)):
        return tensor_desc(np.asarray([value], dtype=object).reshape(()))
    raise InvalidArgumentError(
        None, None,
        f"A value of type {type(value).__name__} cannot be sent to another task (resource "
        "handles and Python objects stay on the device that owns them; fetch or send a "
        "tensor computed from them instead).",
    )


def payload_size(desc: Any) -> int:
    """Payload bytes a descriptor announces (0 for strings and control tokens)."""
    if desc is None or desc[0] == "string" or len(desc) == 4:
        return 0
    return int(desc[2])


def check_desc(desc: Any, max_bytes: int) -> None:
    """Validates a received descriptor before any memory is allocated for it.

    Raises:
        DataLossError: malformed descriptor, or nbytes inconsistent with dtype/shape.
        ResourceExhaustedError: the tensor is larger than ``max_bytes``.
    """
    if desc is None:
        return
    if not isinstance(desc, list) or len(desc) not in (3, 4) or not isinstance(desc[0], str):
        raise DataLossError(None, None, f"Malformed tensor descriptor {desc!r:.200}")
    name, shape, nbytes = desc[:3]
    if not isinstance(shape, list) or not all(isinstance(d, int) and 0 <= d < 2**40 for d in shape):
        raise DataLossError(None, None, f"Malformed tensor shape {shape!r:.200}")
    count = math.prod(shape)
    if name == "string":
        if not isinstance(nbytes, list) or len(nbytes) != count or not all(
                isinstance(x, bytes) for x in nbytes):
            raise DataLossError(None, None, "Malformed string tensor payload")
        return
    itemsize = _ITEMSIZE.get(name)
    if itemsize is None:
        raise DataLossError(None, None, f"Unsupported tensor dtype {name!r} on the wire")
    if not isinstance(nbytes, int) or nbytes != count * itemsize:
        raise DataLossError(
            None, None, f"Tensor descriptor says {nbytes} bytes for {name}{shape} (expected "
            f"{count * itemsize})"
        )
    if nbytes > max_bytes:
        raise ResourceExhaustedError(
            None, None,
            f"Tensor {name}{shape} of {nbytes} bytes exceeds the {max_bytes} byte message limit "
            "(raise FLOWMESH_MAX_MESSAGE_MB on the receiving server)",
        )


_NUMPY_NAMES = {
    torch.float16: "float16", torch.float32: "float32", torch.float64: "float64",
    torch.int8: "int8", torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
    torch.uint8: "uint8", torch.bool: "bool", torch.complex64: "complex64",
    torch.complex128: "complex128",
}
_NUMPY_TYPES = {name: np.dtype(name) for name in _NUMPY_NAMES.values()}
_ITEMSIZE = {d.name: torch.empty((), dtype=t).element_size() for d, t in TORCH_DTYPES.items()}
POOL_MIN_BYTES = 1 << 20


class BufferPool:
    """Reuses the memory of large received tensors.

    A fresh allocation costs a page fault per 4 KB page on first touch, which on loopback
    is slower than the copy itself. Buffers of tensors that died (a finalizer on the
    NumPy array the tensor wraps) are kept, up to ``max_bytes``, and handed out again for
    tensors of the same size class.
    """

    def __init__(self, max_bytes: int = 1 << 30):
        self.max_bytes = max_bytes
        self._free: dict[int, list[np.ndarray]] = {}
        self._cached = 0
        self._lock = threading.Lock()

    @staticmethod
    def size_class(nbytes: int) -> int:
        return -(-nbytes // (64 << 10)) * (64 << 10)

    def get(self, nbytes: int) -> np.ndarray:
        """A uint8 array of exactly ``nbytes`` whose memory returns to the pool when freed."""
        size = self.size_class(nbytes)
        with self._lock:
            free = self._free.get(size)
            base = free.pop() if free else None
            if base is not None:
                self._cached -= size
        if base is None:
            base = np.empty(size, dtype=np.uint8)
        view = base[:nbytes]
        weakref.finalize(view, self._put, base)
        return view

    def _put(self, base: np.ndarray) -> None:
        with self._lock:
            if self._cached + base.nbytes <= self.max_bytes:
                self._free.setdefault(base.nbytes, []).append(base)
                self._cached += base.nbytes


POOL = BufferPool()


def allocate(desc: Any) -> tuple[Any, memoryview | None]:
    """A value for a checked descriptor and the writable bytes to receive into."""
    if desc is None:
        return None, None
    name, shape, extra = desc
    if name == "string":
        array = np.empty(len(extra), dtype=object)
        array[:] = extra
        return array.reshape(shape), None
    dtype = TORCH_DTYPES[dtypes.as_dtype(name)]
    if extra == 0:
        return torch.empty(shape, dtype=dtype), None
    if extra < POOL_MIN_BYTES and name in _NUMPY_TYPES:  # small: one numpy and one torch call
        array = np.empty(shape, dtype=_NUMPY_TYPES[name])
        return torch.from_numpy(array), memoryview(array.reshape(-1).view(np.uint8))
    raw = POOL.get(extra) if extra >= POOL_MIN_BYTES else np.empty(extra, dtype=np.uint8)
    tensor = torch.from_numpy(raw).view(dtype).reshape(shape)
    return tensor, memoryview(raw)


def encode_header(kind: int, meta_len: int, payload_len: int) -> bytes:
    return HEADER.pack(MAGIC, VERSION, kind, 0, meta_len, payload_len)


def decode_header(data: bytes | bytearray | memoryview, max_bytes: int) -> tuple[int, int, int]:
    """``(kind, meta length, payload length)`` of a frame header.

    Raises:
        DataLossError: bad magic, version or kind.
        ResourceExhaustedError: the frame is larger than ``max_bytes``.
    """
    magic, version, kind, _flags, meta_len, payload_len = HEADER.unpack(data)
    if magic != MAGIC:
        raise DataLossError(None, None, f"Not a flowmesh data-plane frame (magic {bytes(magic)!r})")
    if version != VERSION:
        raise DataLossError(None, None, f"Unsupported data-plane version {version} (this is {VERSION})")
    if kind not in KINDS:
        raise DataLossError(None, None, f"Unknown data-plane frame kind {kind}")
    if meta_len > MAX_META_BYTES or meta_len + payload_len > max_bytes:
        raise ResourceExhaustedError(
            None, None,
            f"Frame of {meta_len + payload_len} bytes exceeds the {max_bytes} byte message "
            "limit (raise FLOWMESH_MAX_MESSAGE_MB on the receiving server)",
        )
    return kind, meta_len, payload_len


def torch_dtype_of(name: str) -> torch.dtype:
    """The torch dtype of a (checked) descriptor's dtype name."""
    return TORCH_DTYPES[dtypes.as_dtype(name)]


def request_field(args: Any, key: str, kind: type, optional: bool = False) -> Any:
    """Field ``key`` of a request map, checked to be a ``kind`` (bad requests are
    InvalidArgumentError replies, never server errors)."""
    value = args.get(key) if isinstance(args, dict) else None
    if value is None and optional:
        return None
    if not isinstance(value, kind):
        raise InvalidArgumentError(None, None, f"Request field '{key}' must be {kind.__name__}")
    return value
