"""Sources whose elements the stage makes: ``from_list`` (a list of elements),
``RandomDataset`` (seeded random int64 values) and ``SqlDataset`` (rows of an SQLite
query)."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

from flowmesh.core import dtypes
from flowmesh.errors import InvalidArgumentError, NotFoundError, UnimplementedError
from flowmesh.kernels.pipeline.base import DatasetDef, Element
from flowmesh.kernels.pipeline.context import PipelineContext


class ListDataset(DatasetDef):
    """``from_list``: the given elements (``components`` holds ``width`` per element)."""

    def __init__(self, name: str, components: Sequence[Any], width: int):
        self.name = name
        self.elements = [tuple(components[i:i + width]) for i in range(0, len(components), width)]

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        yield from self.elements


class RandomDataset(DatasetDef):
    """Uniform random int64 values in ``[0, 2**32)`` (TensorFlow's range: one 32-bit Philox
    output each), without end. The stream is a deterministic function of ``(seed, seed2)``
    (NumPy's Philox bit generator keyed by them; both 0: a random key, as TensorFlow);
    with ``rerandomize_each_iteration`` each pass (epoch) draws a new stream instead of
    repeating the first."""

    def __init__(self, name: str, seed: int, seed2: int, rerandomize: bool):
        self.name = name
        if seed == 0 and seed2 == 0:
            seed, seed2 = secrets.randbits(63), secrets.randbits(63)
        self.key = [seed & (2**64 - 1), seed2 & (2**64 - 1)]
        self.rerandomize = rerandomize
        self.passes = 0

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        counter = self.passes if self.rerandomize else 0
        self.passes += 1
        bits = np.random.Philox(key=self.key, counter=counter << 128 if counter else 0)
        generator = np.random.Generator(bits)
        while True:
            for value in generator.integers(0, 2**32, size=256, dtype=np.int64):
                yield (torch.tensor(int(value), dtype=torch.int64),)


def _column(value: Any, dtype: Any, stage: str, index: int) -> Any:
    if dtype == dtypes.string:
        out = np.empty((), dtype=object)
        out[()] = value if isinstance(value, bytes) else str(value).encode()
        return out
    try:
        number = float(value) if dtype.is_floating else int(value)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{stage}: column {index} value {value!r} is not a {dtype.name}") from None
    from flowmesh.kernels.contract.convert import torch_dtype

    return torch.tensor(number, dtype=torch_dtype(dtype))


class SqlDataset(DatasetDef):
    """The rows of ``query`` on an SQLite database, one component per column, converted to
    ``output_types``."""

    def __init__(self, name: str, driver: str, source: str, query: str, output_types: Sequence[Any]):
        if driver != "sqlite":
            raise UnimplementedError(f"SqlDataset '{name}': driver_name {driver!r} is not supported; the only "
                                     "supported driver is 'sqlite'")
        self.name = name
        self.source, self.query, self.types = source, query, list(output_types)

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        stage = f"SqlDataset '{self.name}'"
        try:
            connection = sqlite3.connect(f"file:{self.source}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise NotFoundError(f"{stage}: cannot open {self.source}: {exc}") from None
        try:
            cursor = connection.execute(self.query)
            if cursor.description is None or len(cursor.description) != len(self.types):
                got = 0 if cursor.description is None else len(cursor.description)
                raise InvalidArgumentError(f"{stage}: the query returns {got} columns but output_types has "
                                           f"{len(self.types)}")
            for row in cursor:
                yield tuple(_column(v, t, stage, i) for i, (v, t) in enumerate(zip(row, self.types)))
        except sqlite3.Error as exc:
            raise InvalidArgumentError(f"{stage}: {exc} (query {self.query!r})") from None
        finally:
            connection.close()
