"""``shuffle(buffer_size, seed, reshuffle_each_iteration)`` with TensorFlow's buffer semantics.

The stage fills a buffer with the first ``buffer_size`` input elements, then repeatedly
outputs a uniformly chosen buffered element and puts the next input element in its slot;
once the input ends it drains the buffer in random order. Output ``k`` therefore always
comes from the first ``k + buffer_size`` inputs, and the stage never holds more than
``buffer_size`` elements (memory stays bounded over any number of epochs).

Seeds: the op's ``(seed, seed2)`` come from TensorFlow's graph/op seed rules
(``ops/random_ops.get_seed``); both zero means "no seed": the pipeline draws random seeds
once per iterator initialisation. With ``reshuffle_each_iteration`` each pass (each epoch
under ``repeat``) uses the next seed of the iterator's sequence; without it every pass
repeats the first pass's order. Re-initialising an iterator starts the sequence again.
The random numbers are not TensorFlow's Philox stream, so orders differ from
TensorFlow's for the same seed (the element multiset and the buffer bound are the same).
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.pipeline.base import DatasetDef, Element
from flowmesh.kernels.pipeline.context import PipelineContext


class _Epochs:
    """Per-iterator seed state of one shuffle stage."""

    def __init__(self, seed: int, seed2: int):
        if seed == 0 and seed2 == 0:
            seed, seed2 = (int.from_bytes(os.urandom(8), "little") for _ in range(2))
        self.base = (seed, seed2)
        self.count = 0

    def next_rng(self, reshuffle: bool) -> random.Random:
        epoch = self.count if reshuffle else 0
        self.count += 1
        return random.Random(f"{self.base[0]}:{self.base[1]}:{epoch}")


class ShuffleDataset(DatasetDef):
    """Randomly shuffles its input through a buffer of ``buffer_size`` elements."""

    def __init__(self, name: str, source: DatasetDef, buffer_size: int, seed: int, seed2: int,
                 reshuffle: bool):
        if buffer_size <= 0:
            raise InvalidArgumentError(
                f"ShuffleDataset '{name}': buffer_size must be greater than zero, got "
                f"{buffer_size}")
        self.name = name
        self.source = source
        self.buffer_size = buffer_size
        self.seeds = (seed, seed2)
        self.reshuffle = reshuffle

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        epochs = ctx.state(self, lambda: _Epochs(*self.seeds))
        rng = epochs.next_rng(self.reshuffle)
        uniform = rng.random  # int(uniform() * n): a uniform index, cheaper than randrange
        buffer: list[Element] = []
        size = self.buffer_size
        source = self.source.iterate(ctx)
        try:
            for element in source:
                if len(buffer) < size:
                    buffer.append(element)
                    if len(buffer) < size:
                        continue
                    ctx.record_max("shuffle_buffer", len(buffer))
                    continue
                i = int(uniform() * size)
                out = buffer[i]
                buffer[i] = element
                yield out
        finally:
            source.close()
        ctx.record_max("shuffle_buffer", len(buffer))
        while buffer:
            i = int(uniform() * len(buffer))
            buffer[i], buffer[-1] = buffer[-1], buffer[i]
            yield buffer.pop()
