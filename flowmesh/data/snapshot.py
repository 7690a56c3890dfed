"""``tf.data.experimental.snapshot``: the first complete pass over a dataset is saved under
``path`` and every later pass (of this program or a later one) reads the saved elements
instead of recomputing them, as long as the pipeline is the same one.

"The same one" is a fingerprint of the pipeline's graph (op types, attributes, constant
values and function bodies; not op names), as TensorFlow keys its snapshots. The elements
are saved by ``cache``'s file stage (``kernels/pipeline/cache.py``) in
``<path>/<fingerprint>.flowmesh-cache``: flowmesh's own format, uncompressed, one file
(``compression``, ``reader_func`` and ``shard_func`` are accepted: they tune TensorFlow's
sharded writer and reader and do not change the elements).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.core.graph import Operation, Tensor
from flowmesh.data.dataset import Dataset
from flowmesh.formats import filesystem as fs

Transform = Callable[[Dataset], Dataset]
_COMPRESSIONS = ("AUTO", "GZIP", "SNAPPY", "NONE", None, "")


def _value_bytes(value: Any) -> bytes:
    from flowmesh.core.function import FuncGraph

    if isinstance(value, FuncGraph):
        return _graph_bytes(value.get_operations(), list(getattr(value, "outputs", [])))
    if isinstance(value, np.ndarray):
        items = value.reshape(-1).tolist() if value.dtype == object else None
        data = repr(items).encode() if items is not None else value.tobytes()
        return f"{value.dtype}{value.shape}".encode() + data
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(_value_bytes(v) for v in value) + b"]"
    return repr(value).encode()


def _graph_bytes(ops: list[Operation], outputs: list[Tensor]) -> bytes:
    position = {op: i for i, op in enumerate(ops)}
    parts = []
    for op in ops:
        inputs = [(position.get(t.op, -1), t.value_index) for t in op.inputs]
        attrs = b";".join(k.encode() + b"=" + _value_bytes(op.attrs[k]) for k in sorted(op.attrs))
        parts.append(op.type.encode() + repr(inputs).encode() + attrs)
    parts.append(repr([(position.get(t.op, -1), t.value_index) for t in outputs]).encode())
    return b"\n".join(parts)


def _pipeline_ops(variant: Tensor) -> list[Operation]:
    order: list[Operation] = []
    seen: set[Operation] = set()
    stack: list[tuple[Operation, bool]] = [(variant.op, False)]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            order.append(op)
            continue
        if op in seen:
            continue
        seen.add(op)
        stack.append((op, True))
        stack.extend((t.op, False) for t in reversed(op.inputs) if t.op not in seen)
    return order


def fingerprint(dataset: Dataset) -> str:
    """A hex digest identifying ``dataset``'s pipeline (not its op names)."""
    digest = hashlib.sha256(_graph_bytes(_pipeline_ops(dataset._variant_tensor), [dataset._variant_tensor]))
    return digest.hexdigest()[:32]


def snapshot(path: str, compression: str | None = "AUTO", reader_func: Callable[..., Any] | None = None,
             shard_func: Callable[..., Any] | None = None) -> Transform:
    """Saves the dataset's first complete pass under ``path`` (created if missing) and
    replays it afterwards.

    Raises:
        ValueError: an unknown ``compression``.
    """
    if compression not in _COMPRESSIONS:
        raise ValueError(f"snapshot: unknown compression {compression!r}; use 'AUTO', 'GZIP', 'SNAPPY' or None")

    def apply(dataset: Dataset) -> Dataset:
        fs.makedirs(str(path))
        return dataset.cache(fs.join(str(path), fingerprint(dataset)))

    return apply
