"""``cache(filename)``: the first complete pass is recorded, later passes replay it.

* In memory (``filename == ""``): the record belongs to the iterator; a pass that stops
  early (``take``) is discarded and the next pass reads the input again.
* In files: the first complete pass is written to ``<filename>.flowmesh-cache`` (a
  temporary name renamed at the end, so an interrupted pass leaves nothing behind); while
  that file exists, every pass of every iterator (and of later programs) reads it instead
  of the input. The file holds NumPy ``.npy`` records (no pickle) and is flowmesh's own
  format, not TensorFlow's tensor bundle.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import IO, Any

import numpy as np
import torch

from flowmesh.errors import DataLossError
from flowmesh.formats import filesystem as fs
from flowmesh.kernels.pipeline.base import DatasetDef, Element
from flowmesh.kernels.pipeline.context import PipelineContext

SUFFIX = ".flowmesh-cache"
_MAGIC = b"FMCACHE1"


class _Memory:
    def __init__(self) -> None:
        self.elements: list[Element] | None = None


class CacheDataset(DatasetDef):
    """Caches its input's elements in memory or in a file."""

    def __init__(self, name: str, source: DatasetDef, filename: str):
        self.name = name
        self.source = source
        self.filename = filename

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        if not self.filename:
            return self._memory(ctx)
        path = self.filename + SUFFIX
        if fs.exists(path):
            return self._read(path)
        return self._write(ctx, path)

    def _memory(self, ctx: PipelineContext) -> Iterator[Element]:
        memory = ctx.state(self, _Memory)
        if memory.elements is not None:
            yield from memory.elements
            return
        recorded = []
        for element in self.source.iterate(ctx):
            recorded.append(element)
            yield element
        memory.elements = recorded

    def _write(self, ctx: PipelineContext, path: str) -> Iterator[Element]:
        # atomic_write: the file appears when the pass completes, never half-written
        with fs.atomic_write(path) as out:
            out.write(_MAGIC)
            for element in self.source.iterate(ctx):
                record = io.BytesIO()
                _write_element(record, element)
                out.write(record.getvalue())
                yield element

    def _read(self, path: str) -> Iterator[Element]:
        with fs.open_read(path) as f:
            data = io.BytesIO(f.read())
        if data.read(len(_MAGIC)) != _MAGIC:
            raise DataLossError(f"{path}: not a flowmesh dataset cache file (bad header)")
        end = len(data.getbuffer())
        while data.tell() < end:
            yield _read_element(data, path)


def _write_element(out: IO[bytes], element: Element) -> None:
    np.save(out, np.array([len(element)], dtype=np.int64))
    for value in element:
        if isinstance(value, torch.Tensor):
            np.save(out, np.array([0], dtype=np.int64))
            np.save(out, value.detach().cpu().numpy(), allow_pickle=False)
        else:
            flat = [bytes(b) for b in np.asarray(value, dtype=object).reshape(-1)]
            np.save(out, np.array([1], dtype=np.int64))
            np.save(out, np.array(np.shape(value), dtype=np.int64))
            np.save(out, np.array([len(b) for b in flat], dtype=np.int64))
            out.write(b"".join(flat))


def _read_element(data: io.BytesIO, path: str) -> Element:
    try:
        (count,) = np.load(data)
        values: list[Any] = []
        for _ in range(int(count)):
            (kind,) = np.load(data)
            if kind == 0:
                values.append(torch.from_numpy(np.load(data, allow_pickle=False)))
                continue
            shape, lengths = np.load(data), np.load(data)
            blob = data.read(int(lengths.sum()))
            offsets = np.concatenate([[0], np.cumsum(lengths)])
            flat = np.empty(len(lengths), dtype=object)
            for i in range(len(lengths)):
                flat[i] = blob[offsets[i]:offsets[i + 1]]
            values.append(flat.reshape(tuple(shape)))
        return tuple(values)
    except (ValueError, EOFError, OSError) as exc:
        raise DataLossError(f"{path}: corrupted dataset cache file at byte {data.tell()} "
                            f"({exc}); delete it to rebuild the cache") from None
